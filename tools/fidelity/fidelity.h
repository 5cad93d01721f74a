// berth-fidelity's core: a real run of a sleep-job workload on a
// fresh berthd (or a kept one, --replay), berth-plan's simulations of the
// same snapshot, their comparison and the gate. main() in
// berth_fidelity_main.cc only parses flags into FidelityOptions.
//
// The simulations: planner_only (no executor latencies); calibrated (the
// start model fitted to this run's starts and the finish latency measured
// from Docker's die, each times latency_factor); metrics (berth-plan
// --executor-metrics on what berthd exported, when the run kept
// metrics.txt). Repeatability: the calibrated simulation against 8 copies of
// itself with --start-jitter of twice the run's start noise (StartNoise).
//
// Not thread-safe (drives child processes; one call at a time).
#ifndef BERTH_TOOLS_FIDELITY_FIDELITY_H_
#define BERTH_TOOLS_FIDELITY_FIDELITY_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tools/fidelity/gate.h"
#include "tools/fidelity/real_run.h"

namespace berth::fidelity {

struct FidelityOptions {
  // The real run (berthd, berthctl, dir, workload). Unused with replay_dir.
  RealRunOptions real;
  // Non-empty: no real run; compare the run kept in this directory (its
  // real.json gives jobs, scale and seed).
  std::string replay_dir;
  // berth-plan binary (required) and extra arguments for its simulate.
  std::string berth_plan;
  std::vector<std::string> sim_args;
  // Non-empty: also compare with the real run kept there (same workload).
  std::string against_dir;
  // Multiplies the measured latencies in the calibrated simulation (> 0;
  // e.g. 10 checks that the gate can fail).
  double latency_factor = 1.0;
  // One JSON object instead of text.
  bool json = false;
  // Print the admitted sets per pass, real against calibrated (before the
  // result).
  bool passes = false;
  // The bounds; see gate.h.
  GateOptions gate;
};

// Runs, compares, writes the result to `out` and applies the gate. OK when
// every bound is met; FAILED_PRECONDITION "fidelity: <problems> (run kept
// in DIR)" when one is not; other codes as the step that failed (the real
// run, a kept file, berth-plan).
[[nodiscard]] absl::Status RunFidelity(const FidelityOptions& options, std::ostream& out);

}  // namespace berth::fidelity

#endif  // BERTH_TOOLS_FIDELITY_FIDELITY_H_
