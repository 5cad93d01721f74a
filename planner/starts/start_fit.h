// The start model's parameters (StartModel::Params start_latency and
// start_contention) fitted to measured start latencies: by berthd from its
// own starts (MeasuredExecutor), by berth-plan from a berthd's metrics and by
// berth-fidelity from a real run.
//
// Thread-safe: a pure function.
#ifndef BERTH_PLANNER_STARTS_START_FIT_H_
#define BERTH_PLANNER_STARTS_START_FIT_H_

#include <cstdint>
#include <vector>

#include "absl/time/time.h"

namespace berth::planner {

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

// The start latency alone and the contention each start in flight adds
// (StartModel::Params start_latency = alone, start_contention = contention)
// that best fit `levels`: median = alone + (starts - 1)
// * contention, least squares weighted by count. contention is clamped to
// [0, alone] and alone to >= 0. Fewer than two levels with observations:
// alone is their weighted mean and contention 0.
struct StartFit {
  absl::Duration alone;
  absl::Duration contention;
};
StartFit FitStarts(const std::vector<StartLevel>& levels);

}  // namespace berth::planner

#endif  // BERTH_PLANNER_STARTS_START_FIT_H_
