// The simulator's model of container starts (planner::SimOptions::
// start_latency, start_contention), fitted to measured latencies: from a
// berthd's metrics (executor_metrics.h) or from a real run (berth-fidelity).
//
// Thread-safe: a pure function.
#ifndef BERTH_TOOLS_PLAN_START_MODEL_H_
#define BERTH_TOOLS_PLAN_START_MODEL_H_

#include <cstdint>
#include <vector>

#include "absl/time/time.h"

namespace berth {
namespace plan {

// The start latency measured at one level of contention: the median of the
// starts that ran with `starts` starts in flight (itself included).
struct StartLevel {
  int starts = 1;
  double median_s = 0;
  int64_t count = 0;
  // How far its starts scatter: the median of |latency - median_s|. 0 when
  // unknown (a histogram's levels). Not used by the fit.
  double spread_s = 0;
};

// The simulator's start model (planner::SimOptions::start_latency,
// start_contention) that best fits `levels`: median = alone + (starts - 1)
// * contention, least squares weighted by count. contention is clamped to
// [0, alone] and alone to >= 0. Fewer than two levels with observations:
// alone is their weighted mean and contention 0.
struct StartModel {
  absl::Duration alone;
  absl::Duration contention;
};
StartModel FitStartModel(const std::vector<StartLevel>& levels);

}  // namespace plan
}  // namespace berth

#endif  // BERTH_TOOLS_PLAN_START_MODEL_H_
