// The simulator's accounting: wait reasons per job and the usage timeline.
// See simulation.h.
#include <algorithm>
#include <cstdint>

#include "planner/simulator/simulation.h"

namespace berth::planner::internal {

// Ends job i's current wait reason at `now`.
void Simulation::CloseWait(size_t i, absl::Time now) {
  Reason cur = cur_reason_[i];
  if (cur != Reason::kUnspecified) {
    reason_time_[i * kReasonCount + static_cast<int>(cur)] += now - cur_since_[i];
  }
  cur_since_[i] = now;
  SimJobResult& r = result_.jobs[i];
  for (int k = 0; k < kReasonCount; ++k) {
    if (k == static_cast<int>(Reason::kWaitingForDependencies)) continue;
    absl::Duration d = reason_time_[i * kReasonCount + k];
    if (d > r.main_wait_time) {
      r.main_wait_time = d;
      r.main_wait_reason = static_cast<Reason>(k);
    }
  }
}

void Simulation::Record(absl::Time now) {
  SimUsagePoint p;
  p.time = now;
  p.memory_bytes = used_memory_;
  p.cpu_millis = used_cpu_;
  p.workers = static_cast<int32_t>(state_.running.size());
  p.queued = static_cast<int32_t>(queued_owner_.size() + baseline_queue_.size());
  if (used_memory_ > result_.peak_memory_bytes) {
    result_.peak_memory_bytes = used_memory_;
    result_.peak_memory_at = now;
  }
  result_.peak_cpu_millis = std::max(result_.peak_cpu_millis, used_cpu_);
  result_.peak_memory_over_budget =
      std::max(result_.peak_memory_over_budget, used_memory_ - in_.budgets.memory_bytes);
  result_.peak_cpu_over_budget =
      std::max(result_.peak_cpu_over_budget, used_cpu_ - in_.budgets.cpu_millis);
  auto& tl = result_.timeline;
  if (!tl.empty() && tl.back().time == now) {
    tl.back() = p;
  } else if (!tl.empty() && tl.back().memory_bytes == p.memory_bytes &&
             tl.back().cpu_millis == p.cpu_millis &&
             tl.back().workers == p.workers && tl.back().queued == p.queued) {
    // Unchanged: the step continues.
  } else {
    tl.push_back(p);
  }
}

void Simulation::ReportProgress() {
  if (!opt_.progress || n_ == 0) return;
  size_t step = std::max<size_t>(1, n_ / 100);
  if (done_ / step != last_progress_) {
    last_progress_ = done_ / step;
    opt_.progress(static_cast<double>(done_) / static_cast<double>(n_));
  }
}

}  // namespace berth::planner::internal
