#include "tools/fidelity/simulate.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "tools/base/subprocess.h"

namespace berth::fidelity {
namespace {

bool IsNumber(const nlohmann::json& object, const char* key) {
  return object.is_object() && object.contains(key) && object[key].is_number();
}

}  // namespace

std::vector<std::string> LatencyFlags(const SimulateOptions& options, double start_s,
                                      double finish_s, double contention_s) {
  return {"--start-latency",     absl::StrFormat("%.3fs", start_s),
          "--start-contention",  absl::StrFormat("%.3fs", contention_s),
          "--finish-latency",    absl::StrFormat("%.3fs", finish_s),
          "--start-parallelism", absl::StrCat(start_s > 0 ? options.start_parallelism : 0)};
}

absl::StatusOr<Simulation> ParseSimulationReport(absl::string_view json) {
  const nlohmann::json out =
      nlohmann::json::parse(json.begin(), json.end(), nullptr, /*allow_exceptions=*/false);
  if (out.is_discarded() || !out.is_object()) {
    return absl::InvalidArgumentError("berth-plan simulate --json: not a JSON object");
  }
  if (!out.contains("summary") || !IsNumber(out["summary"], "start_latency_s") ||
      !IsNumber(out["summary"], "finish_latency_s")) {
    return absl::InvalidArgumentError(
        "berth-plan simulate --json: no summary.start_latency_s / finish_latency_s (an older "
        "berth-plan?)");
  }
  if (!out.contains("tables") || !out["tables"].is_object() || !out["tables"].contains("jobs") ||
      !out["tables"]["jobs"].is_array()) {
    return absl::InvalidArgumentError("berth-plan simulate --json: no tables.jobs");
  }
  Simulation sim;
  sim.start_latency_s = out["summary"]["start_latency_s"].get<double>();
  sim.finish_latency_s = out["summary"]["finish_latency_s"].get<double>();
  if (IsNumber(out["summary"], "start_contention_s")) {
    sim.start_contention_s = out["summary"]["start_contention_s"].get<double>();
  }
  for (const nlohmann::json& row : out["tables"]["jobs"]) {
    if (!row.is_object() || !row.contains("job") || !row["job"].is_string() ||
        !IsNumber(row, "admitted_s") || !IsNumber(row, "finished_s")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "berth-plan simulate --json: a job row without job, admitted_s and finished_s: ",
          row.dump()));
    }
    sim.jobs[row["job"].get<std::string>()] = {row["admitted_s"].get<double>(),
                                               row["finished_s"].get<double>()};
  }
  return sim;
}

absl::StatusOr<Simulation> RunSimulation(const SimulateOptions& options,
                                         const std::vector<std::string>& flags) {
  std::vector<std::string> argv = {options.berth_plan, "simulate", options.snapshot, "--json"};
  argv.insert(argv.end(), options.budget_flags.begin(), options.budget_flags.end());
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
  const ProcessResult result = RunProcess(argv, {}, absl::Minutes(10));
  if (result.exit_code != 0) {
    return absl::UnavailableError(absl::StrCat("berth-plan failed: ", result.err));
  }
  return ParseSimulationReport(result.out);
}

}  // namespace berth::fidelity
