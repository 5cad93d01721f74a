// The forecast's model of the executor's container starts
// (ForecastOptions::executor): planner::StartModel, the model
// planner::Simulate() plays too, so that a forecast made with the
// executor's measured model gives each job the start the simulation of
// that executor gives it.
#include <algorithm>

#include "planner/forecast/forward.h"

namespace berth::planner::internal {

void Forward::Launch(size_t slot, absl::Time t, absl::Duration run) {
  if (options_.executor.zero()) {
    EndAt(slot, t + run);
    return;
  }
  starts_.Request(slot, t, run);
}

void Forward::RunContainer(size_t slot, absl::Time admitted, absl::Time at,
                           absl::Duration run) {
  EndAt(slot, at + run + std::max(absl::ZeroDuration(), options_.executor.finish_latency));
  // berthd records RUNNING, a store change, and plans again.
  if (options_.executor.plan_at_starts && at > admitted) wakeups_.push(at);
}

absl::Time Forward::NextWakeup() {
  while (!wakeups_.empty() && wakeups_.top() <= last_plan_) wakeups_.pop();
  return wakeups_.empty() ? absl::InfiniteFuture() : wakeups_.top();
}

}  // namespace berth::planner::internal
