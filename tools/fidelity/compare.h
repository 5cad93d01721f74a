// The comparison of a real run with simulations of it: what the
// real run measured, how close each simulation came, how stable the
// simulated order is, and how far a second real run repeats the first.
//
// Thread-compatible: free functions over their arguments.
#ifndef BERTH_TOOLS_FIDELITY_COMPARE_H_
#define BERTH_TOOLS_FIDELITY_COMPARE_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/fidelity/kept_run.h"
#include "planner/starts/start_fit.h"

namespace berth::fidelity {

// One job of berth-plan simulate's per-job table, seconds from the start.
struct SimulatedJob {
  double admitted_s = 0;
  double finished_s = 0;
};

// One berth-plan simulate run: the latencies it modelled and its jobs.
struct Simulation {
  double start_latency_s = 0;
  double start_contention_s = 0;
  double finish_latency_s = 0;
  std::map<std::string, SimulatedJob> jobs;
};

// What the real run measured. Times are seconds; offsets are from t0.
struct RealMeasures {
  std::vector<std::string> ids;              // sorted
  std::map<std::string, double> admitted;    // admission offset per job
  std::vector<double> start_latency;         // admitted -> started, per job
  std::vector<planner::StartLevel> start_levels;  // StartLevels of those
  std::vector<double> held;                  // container exit -> finished, jobs with a die
  // Docker's die - (started + expected duration), jobs with both: how long
  // after its nominal run, dated from RUNNING as the simulator dates it, a
  // job's capacity came back for the planner (the container's own
  // overhead; berthd plans at the die event, its next admission follows
  // within a millisecond, and records the outcome after that pass).
  std::vector<double> after_run;
  double makespan_s = 0;                     // t0 -> the last finished
};

// REQUIRES for the ids: every job of `run` succeeded and there are
// `expected_jobs` of them, else FAILED_PRECONDITION
// "N jobs did not succeed: [first ids]". `parallelism`: berthd's start slots.
[[nodiscard]] absl::StatusOr<RealMeasures> MeasureReal(const KeptRun& run, int expected_jobs,
                                                      int parallelism);

// The finish latency the calibrated simulation models: the median of
// after_run (of held if there is none).
double CalibratedFinishLatency(const RealMeasures& real);

// The start model the calibrated simulation models: FitStarts of the
// start levels (the median of all starts, no contention, if none
// qualifies).
planner::StartFit CalibratedStartModel(const RealMeasures& real);

struct SimulationScore {
  double start_latency_s = 0;
  double start_contention_s = 0;
  double finish_latency_s = 0;
  // The last simulated finish plus the finish latency (when its outcome is
  // recorded, as the real makespan ends).
  double makespan_s = 0;
  // (simulated - real) / real.
  double makespan_error = 0;
  // TauB of the real against the simulated admission offsets.
  double tau = 0;
  // |real - simulated| admission offset per job: median, p95.
  double start_error_median_s = 0;
  double start_error_p95_s = 0;
};

// NOT_FOUND naming the job if the simulation lacks one of real.ids.
[[nodiscard]] absl::StatusOr<SimulationScore> Score(const RealMeasures& real,
                                                   const Simulation& simulation);

// The simulated admission offsets of real.ids (NOT_FOUND as Score).
[[nodiscard]] absl::StatusOr<std::map<std::string, double>> Admissions(
    const RealMeasures& real, const Simulation& simulation);

// The run's start noise: how far a start strays from its level's median
// (StartLevel::spread_s, weighted by count); without levels, the median
// absolute deviation of all start latencies; 0 without starts. Uniform noise
// of +-2x this strays as far (the median of |U(-a, a)| is a / 2): the
// --start-jitter of the repeatability simulations.
double StartNoise(const RealMeasures& real);

// TauB of `calibrated` against each of `jittered` (the same simulation with
// the start noise), in order: how well the simulated order repeats itself
// when starts vary as much as the real ones did, so the most any
// simulation can be expected to match a real run.
[[nodiscard]] absl::StatusOr<std::vector<double>> RepeatTaus(
    const RealMeasures& real, const Simulation& calibrated,
    const std::vector<Simulation>& jittered);

struct AgainstReal {
  std::string dir;
  double makespan_s = 0;
  double makespan_difference = 0;  // (other - this) / this
  double tau = 0;
};

// Compares with another real run of the same workload (job ids equal up to
// the runs' tags: "<workspace>.<index>"). INVALID_ARGUMENT
// "--against DIR: not the same workload" otherwise.
[[nodiscard]] absl::StatusOr<AgainstReal> CompareAgainst(const RealMeasures& real,
                                                         const KeptRun& other,
                                                         const std::string& other_dir);

// Everything berth-fidelity reports.
struct FidelityResult {
  int jobs = 0;
  double scale_s_per_min = 0;
  uint64_t seed = 0;
  double load_average = 0;
  double real_makespan_s = 0;
  double start_latency_median_s = 0;
  double start_latency_p95_s = 0;
  double held_beyond_run_median_s = 0;
  double held_beyond_run_p95_s = 0;
  // By name (planner_only, calibrated, metrics), in the order simulated.
  std::vector<std::pair<std::string, SimulationScore>> simulations;
  // Repeatability: the --start-jitter of the jittered simulations, their
  // RepeatTaus, and the median of those (1 for none), which --min-stability
  // bounds.
  double start_jitter_s = 0;
  std::vector<double> repeat_taus;
  double stability_tau = 1;
  std::optional<AgainstReal> against_real;

  const SimulationScore* Find(const std::string& name) const;
};

// The real-run half of the result (everything but simulations, stability
// and against_real).
FidelityResult RealResult(const RealMeasures& real, const KeptRun& run);

}  // namespace berth::fidelity

#endif  // BERTH_TOOLS_FIDELITY_COMPARE_H_
