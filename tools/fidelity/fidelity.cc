#include "tools/fidelity/fidelity.h"

#include <sys/stat.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "planner/base/status_macros.h"
#include "tools/fidelity/compare.h"
#include "tools/fidelity/measures.h"
#include "tools/fidelity/report.h"
#include "tools/fidelity/simulate.h"

namespace berth::fidelity {
namespace {

// berthd's --start_parallelism default.
constexpr int kStartParallelism = 4;

// Jittered simulations for the repeatability.
constexpr int kRepeatDraws = 8;

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

absl::Status WithDir(const absl::Status& status, const std::string& dir) {
  return absl::Status(status.code(), absl::StrCat(status.message(), " (logs in ", dir, ")"));
}

}  // namespace

absl::Status RunFidelity(const FidelityOptions& options, std::ostream& out) {
  std::string dir;
  KeptRun run;
  int expected_jobs = options.real.workload.jobs;
  if (!options.replay_dir.empty()) {
    dir = options.replay_dir;
    KeptRun defaults;
    defaults.scale = options.real.workload.scale;
    defaults.seed = options.real.workload.seed;
    ASSIGN_OR_RETURN(run, ReadKeptRun(dir, defaults));
    expected_jobs = static_cast<int>(run.jobs.size());
  } else {
    absl::StatusOr<KeptRun> real = RunReal(options.real, &dir);
    if (!real.ok()) return dir.empty() ? real.status() : WithDir(real.status(), dir);
    run = *std::move(real);
  }

  absl::StatusOr<RealMeasures> measured = MeasureReal(run, expected_jobs, kStartParallelism);
  if (!measured.ok()) return WithDir(measured.status(), dir);
  const RealMeasures& real = *measured;
  FidelityResult result = RealResult(real, run);

  SimulateOptions sim;
  sim.berth_plan = options.berth_plan;
  sim.snapshot = absl::StrCat(dir, "/snapshot.json");
  sim.extra_args = options.sim_args;
  sim.start_parallelism = kStartParallelism;
  const planner::StartFit start = CalibratedStartModel(real);
  const double start_s = absl::ToDoubleSeconds(start.alone);
  const double contention_s = absl::ToDoubleSeconds(start.contention);
  const double finish_s = CalibratedFinishLatency(real);
  const std::vector<std::string> calibrated_flags =
      LatencyFlags(sim, start_s * options.latency_factor, finish_s * options.latency_factor,
                   contention_s * options.latency_factor);
  std::vector<std::pair<std::string, std::vector<std::string>>> variants = {
      {"planner_only", LatencyFlags(sim, 0, 0)}, {"calibrated", calibrated_flags}};
  const std::string metrics = absl::StrCat(dir, "/metrics.txt");
  if (Exists(metrics)) variants.push_back({"metrics", {"--executor-metrics", metrics}});

  Simulation calibrated;
  for (const auto& [name, flags] : variants) {
    ASSIGN_OR_RETURN(Simulation simulation, RunSimulation(sim, flags));
    ASSIGN_OR_RETURN(SimulationScore score, Score(real, simulation));
    if (name == "calibrated") {
      if (options.passes) {
        ASSIGN_OR_RETURN(auto admitted, Admissions(real, simulation));
        out << RenderPasses(real.admitted, admitted);
      }
      calibrated = std::move(simulation);
    }
    result.simulations.emplace_back(name, score);
  }

  // Repeatability: the calibrated simulation again with each start moved at
  // random as far as the run's starts strayed, kRepeatDraws times. Where its
  // order changes, the workload sits on a near-tie that the executor's noise
  // decides: no simulation can be expected to predict the real order there.
  result.start_jitter_s = 2 * StartNoise(real);
  std::vector<Simulation> jittered;
  for (int draw = 1; draw <= kRepeatDraws && result.start_jitter_s > 0; ++draw) {
    std::vector<std::string> flags = calibrated_flags;
    flags.insert(flags.end(), {"--start-jitter", absl::StrFormat("%.4fs", result.start_jitter_s),
                               "--jitter-seed", absl::StrCat(draw)});
    ASSIGN_OR_RETURN(Simulation s, RunSimulation(sim, flags));
    jittered.push_back(std::move(s));
  }
  ASSIGN_OR_RETURN(result.repeat_taus, RepeatTaus(real, calibrated, jittered));
  result.stability_tau = result.repeat_taus.empty() ? 1 : Quantile(result.repeat_taus, 0.5);

  if (!options.against_dir.empty()) {
    ASSIGN_OR_RETURN(KeptRun other, ReadKeptRun(options.against_dir));
    ASSIGN_OR_RETURN(result.against_real, CompareAgainst(real, other, options.against_dir));
  }

  out << (options.json ? RenderJson(result) : RenderText(result));
  out.flush();
  ASSIGN_OR_RETURN(std::vector<std::string> problems, GateProblems(result, options.gate));
  if (!problems.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("fidelity: ", absl::StrJoin(problems, "; "), " (run kept in ", dir, ")"));
  }
  return absl::OkStatus();
}

}  // namespace berth::fidelity
