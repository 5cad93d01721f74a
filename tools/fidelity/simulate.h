// The simulation half of berth-fidelity: berth-plan simulate of the kept
// snapshot, run as a child process so that any berth-plan binary can be
// compared with a kept run (--berth-plan with --replay) and any of its flags
// passed through (--sim-arg).
//
// Thread-compatible: free functions over their arguments.
#ifndef BERTH_TOOLS_FIDELITY_SIMULATE_H_
#define BERTH_TOOLS_FIDELITY_SIMULATE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/fidelity/compare.h"

namespace berth::fidelity {

struct SimulateOptions {
  // Path of the berth-plan binary. Required.
  std::string berth_plan;
  // The snapshot to simulate (<dir>/snapshot.json).
  std::string snapshot;
  // berthd's budgets in the real run, as berth-plan flags.
  std::vector<std::string> budget_flags = {"--memory", "1Gi", "--cpus", "2",
                                           "--max-workers", "24", "--aging-interval", "0s"};
  // Appended after everything else (--sim-arg).
  std::vector<std::string> extra_args;
  // berthd's --start_parallelism (its default): the start slots modelled
  // when a start latency is.
  int start_parallelism = 4;
};

// berth-plan flags that model start latency `start_s` (alone), start
// contention `contention_s` and finish latency `finish_s` (seconds, printed
// to the ms), with options.start_parallelism slots (0 when start_s is 0: no
// latency, no slots).
std::vector<std::string> LatencyFlags(const SimulateOptions& options, double start_s,
                                      double finish_s, double contention_s = 0);

// Runs `berth_plan simulate SNAPSHOT --json <budget flags> <flags>
// <extra_args>` and parses its report. UNAVAILABLE with berth-plan's stderr
// if it fails; INVALID_ARGUMENT if its output is not the report expected.
[[nodiscard]] absl::StatusOr<Simulation> RunSimulation(const SimulateOptions& options,
                                                       const std::vector<std::string>& flags);

// Parses berth-plan simulate --json output: summary.start_latency_s,
// summary.finish_latency_s, summary.start_contention_s (0 if absent) and tables.jobs[] {job, admitted_s, finished_s}.
// INVALID_ARGUMENT naming what is missing.
[[nodiscard]] absl::StatusOr<Simulation> ParseSimulationReport(absl::string_view json);

}  // namespace berth::fidelity

#endif  // BERTH_TOOLS_FIDELITY_SIMULATE_H_
