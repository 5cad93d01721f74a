#include "tools/fidelity/gate.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace berth::fidelity {

absl::StatusOr<std::vector<std::string>> GateProblems(const FidelityResult& result,
                                                      const GateOptions& options) {
  const std::vector<std::string> gates =
      options.gates.empty() ? std::vector<std::string>{"calibrated"} : options.gates;
  std::vector<std::string> problems;
  for (const std::string& name : gates) {
    const SimulationScore* sim = result.Find(name);
    if (sim == nullptr) {
      return absl::NotFoundError(absl::StrCat(
          "no ", name, " simulation (metrics need a real run, not an old replay)"));
    }
    // A NaN error (no real makespan) fails the bound rather than passing it.
    if (options.max_makespan_error.has_value() &&
        !(std::fabs(sim->makespan_error) <= *options.max_makespan_error)) {
      problems.push_back(absl::StrFormat("%s: makespan error %+.1f%% beyond ±%.1f%%", name,
                                         sim->makespan_error * 100,
                                         *options.max_makespan_error * 100));
    }
    if (options.min_tau.has_value() && !(sim->tau >= *options.min_tau)) {
      problems.push_back(
          absl::StrFormat("%s: tau %.3f below %g", name, sim->tau, *options.min_tau));
    }
  }
  if (options.min_stability.has_value() && !(result.stability_tau >= *options.min_stability)) {
    problems.push_back(absl::StrFormat(
        "the workload sits on a near-tie (repeatability: median tau %.3f of the simulation "
        "against itself with the start noise, below %g): a different --seed, not a lower bar",
        result.stability_tau, *options.min_stability));
  }
  return problems;
}

}  // namespace berth::fidelity
