// berth-fidelity: runs a sleep-job workload for real on a fresh berthd and
// compares it with berth-plan's simulation of the same snapshot (
// docs/BENCHMARKS.md "Fidelity", docs/capacity.md).
//
// Exit status: 0 when every bound asked for is met; 1 when one is not or a
// step fails (the message on stderr names the run's directory); 2 for bad
// flags.
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tools/base/cli_args.h"
#include "tools/fidelity/fidelity.h"

namespace {

using berth::fidelity::FidelityOptions;

constexpr char kUsage[] =
    "usage: berth-fidelity --berth-plan PATH (--berthd PATH --berthctl PATH | --replay DIR)\n"
    "                      [--jobs N] [--scale S] [--seed N] [--dir DIR] [--json]\n"
    "                      [--max-makespan-error F] [--min-tau T] [--min-stability T]\n"
    "                      [--gate calibrated|metrics|planner_only]... [--latency-factor F]\n"
    "                      [--sim-arg ARG]... [--against DIR] [--passes]\n";

constexpr char kHelp[] =
    "\n"
    "Runs a sleep-job workload for real on a fresh berthd and compares it with\n"
    "berth-plan's simulation of the same snapshot.\n"
    "\n"
    "  --berthd, --berthctl   the binaries of the real run (not with --replay)\n"
    "  --berth-plan           the berth-plan binary that simulates (required)\n"
    "  --jobs N               sleep jobs in the workload (default 60)\n"
    "  --scale S              seconds per simulated minute (default 0.5)\n"
    "  --seed N               the workload generator's seed (default 1)\n"
    "  --dir DIR              keep the run in DIR (created; default: a new temporary dir)\n"
    "  --replay DIR           no real run: compare with the run kept in DIR\n"
    "  --against DIR          also compare with another real run kept in DIR (same\n"
    "                         --jobs/--seed): how far the executor repeats itself\n"
    "  --json                 one JSON object instead of text\n"
    "  --max-makespan-error F exit 1 unless |makespan error| <= F (a fraction, e.g. 0.05)\n"
    "  --min-tau T            exit 1 unless Kendall's tau-b >= T\n"
    "  --gate NAME            the simulation(s) those bounds apply to (repeatable;\n"
    "                         default calibrated)\n"
    "  --min-stability T      exit 1 unless the simulated order repeats itself with\n"
    "                         each start moved at random as far as the real ones\n"
    "                         strayed: median tau of 8 draws >= T (no near-tie)\n"
    "  --latency-factor F     multiply the measured latencies by F in the calibrated\n"
    "                         simulation (to check that the gate can fail)\n"
    "  --sim-arg ARG          extra argument for berth-plan simulate (repeatable)\n"
    "  --passes               print the admitted sets per pass, real against calibrated\n";

absl::Status UsageError(absl::string_view message) {
  return absl::InvalidArgumentError(message);
}

absl::StatusOr<double> Number(const berth::cli::Args& args, const std::string& name,
                              double fallback) {
  if (!args.Has(name)) return fallback;
  double v = 0;
  if (!absl::SimpleAtod(args.Get(name), &v)) {
    return UsageError(absl::StrCat("--", name, ": invalid number \"", args.Get(name), "\""));
  }
  return v;
}

absl::StatusOr<int64_t> Integer(const berth::cli::Args& args, const std::string& name,
                                int64_t fallback, int64_t min) {
  if (!args.Has(name)) return fallback;
  int64_t v = 0;
  if (!absl::SimpleAtoi(args.Get(name), &v) || v < min) {
    return UsageError(absl::StrCat("--", name, ": expected an integer >= ", min, ", got \"",
                                   args.Get(name), "\""));
  }
  return v;
}

absl::StatusOr<FidelityOptions> ParseOptions(const std::vector<std::string>& argv) {
  std::vector<berth::cli::FlagSpec> specs;
  for (const char* name :
       {"berthd", "berthctl", "berth-plan", "jobs", "scale", "seed", "max-makespan-error",
        "min-tau", "replay", "against", "min-stability", "dir", "latency-factor"}) {
    specs.push_back({name, true, /*repeatable=*/true});  // the last one counts
  }
  specs.push_back({"sim-arg", true, true});
  specs.push_back({"gate", true, true});
  specs.push_back({"json", false, true});
  specs.push_back({"passes", false, true});
  specs.push_back({"help", false, true});
  absl::StatusOr<berth::cli::Args> parsed = berth::cli::ParseFlags(argv, specs);
  if (!parsed.ok()) return parsed.status();
  const berth::cli::Args& args = *parsed;
  if (!args.positional.empty()) {
    return UsageError(absl::StrCat("unrecognized argument: ", args.positional[0]));
  }
  if (!args.Has("berth-plan")) return UsageError("--berth-plan is required");
  FidelityOptions o;
  o.berth_plan = args.Get("berth-plan");
  if (args.Has("replay")) o.replay_dir = args.Get("replay");
  if (o.replay_dir.empty() && !(args.Has("berthd") && args.Has("berthctl"))) {
    return UsageError("--berthd and --berthctl are needed unless --replay");
  }
  if (args.Has("berthd")) o.real.berthd = args.Get("berthd");
  if (args.Has("berthctl")) o.real.berthctl = args.Get("berthctl");
  if (args.Has("dir")) o.real.dir = args.Get("dir");
  absl::StatusOr<int64_t> jobs = Integer(args, "jobs", 60, 1);
  absl::StatusOr<int64_t> seed = Integer(args, "seed", 1, 0);
  absl::StatusOr<double> scale = Number(args, "scale", 0.5);
  absl::StatusOr<double> factor = Number(args, "latency-factor", 1.0);
  for (const absl::Status& s : {jobs.status(), seed.status(), scale.status(), factor.status()}) {
    if (!s.ok()) return s;
  }
  if (!(*scale > 0)) return UsageError("--scale must be > 0");
  if (!(*factor > 0)) return UsageError("--latency-factor must be > 0");
  o.real.workload.jobs = static_cast<int>(*jobs);
  o.real.workload.seed = static_cast<uint64_t>(*seed);
  o.real.workload.scale = *scale;
  o.latency_factor = *factor;
  for (const char* name : {"max-makespan-error", "min-tau", "min-stability"}) {
    if (!args.Has(name)) continue;
    absl::StatusOr<double> v = Number(args, name, 0);
    if (!v.ok()) return v.status();
    std::optional<double>& bound = std::string(name) == "max-makespan-error" ? o.gate.max_makespan_error
                                   : std::string(name) == "min-tau"          ? o.gate.min_tau
                                                                             : o.gate.min_stability;
    bound = *v;
  }
  for (const std::string& gate : args.GetAll("gate")) {
    if (gate != "calibrated" && gate != "metrics" && gate != "planner_only") {
      return UsageError(absl::StrCat("--gate: invalid choice \"", gate,
                                     "\" (choose from calibrated, metrics, planner_only)"));
    }
    o.gate.gates.push_back(gate);
  }
  o.sim_args = args.GetAll("sim-arg");
  if (args.Has("against")) o.against_dir = args.Get("against");
  o.json = args.Has("json");
  o.passes = args.Has("passes");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      std::cout << kUsage << kHelp;
      return 0;
    }
    if (a == "--") break;
  }
  absl::StatusOr<FidelityOptions> options = ParseOptions(args);
  if (!options.ok()) {
    std::cerr << kUsage << "berth-fidelity: error: " << options.status().message() << "\n";
    return 2;
  }
  const absl::Status status = berth::fidelity::RunFidelity(*options, std::cout);
  if (!status.ok()) {
    // Gate failures already start with "fidelity:".
    std::cerr << (status.code() == absl::StatusCode::kFailedPrecondition &&
                          absl::StartsWith(status.message(), "fidelity:")
                      ? ""
                      : "berth-fidelity: ")
              << status.message() << "\n";
    return 1;
  }
  return 0;
}
