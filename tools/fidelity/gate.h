// berth-fidelity's pass/fail decision (--gate, --max-makespan-error,
// --min-tau, --min-stability): the CI test (//tools/fidelity:fidelity_test)
// fails on any problem it lists.
//
// Thread-compatible: a free function over its arguments.
#ifndef BERTH_TOOLS_FIDELITY_GATE_H_
#define BERTH_TOOLS_FIDELITY_GATE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/fidelity/compare.h"

namespace berth::fidelity {

struct GateOptions {
  // The simulations the makespan and tau bounds apply to (planner_only,
  // calibrated, metrics). Empty means {"calibrated"}.
  std::vector<std::string> gates;
  // |makespan error| must not exceed this fraction (e.g. 0.05); unset: no bound.
  std::optional<double> max_makespan_error;
  // tau must be at least this; unset: no bound.
  std::optional<double> min_tau;
  // FidelityResult::stability_tau (the median repeatability tau) must be at
  // least this; unset: no bound. Below it the workload sits on a near-tie:
  // a different seed is the remedy, not a lower bar.
  std::optional<double> min_stability;
};

// The bounds `result` misses, one message each, in gate order then
// stability; empty if it meets them all. NOT_FOUND
// "no NAME simulation (metrics need a real run, not an old replay)" if a
// gated simulation was not run.
[[nodiscard]] absl::StatusOr<std::vector<std::string>> GateProblems(const FidelityResult& result,
                                                                   const GateOptions& options);

}  // namespace berth::fidelity

#endif  // BERTH_TOOLS_FIDELITY_GATE_H_
