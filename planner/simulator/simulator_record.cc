// The simulator's accounting: wait reasons per job and the usage timeline.
// See simulation.h.
#include <algorithm>
#include <cstdint>

#include "planner/simulator/simulation.h"

namespace berth::planner::internal {

// Ends job i's current wait reason at `now`. Only the current reason's
// total grows here, and after every call the main total is at least every
// other total (the first call finds them all 0): comparing that one total
// with it keeps the main reason exactly as a scan of all of them would,
// ties going to the reason that reached the total first.
void Simulation::CloseWait(size_t i, absl::Time now) {
  // The wait for dependencies is never the main reason: not kept.
  const Reason cur = cur_reason_[i];
  if (cur != Reason::kUnspecified && cur != Reason::kWaitingForDependencies) {
    Quarters* row = &reason_time_[i * kReasonCount];
    Quarters& total = row[static_cast<int>(cur)];
    total += ToQuarters(now) - ToQuarters(cur_since_[i]);
    if (total > row[kMainSlot]) {
      row[kMainSlot] = total;
      SimJobResult& r = result_.jobs[i];
      r.main_wait_time = FromQuarters(total);
      r.main_wait_reason = cur;
    }
  }
  cur_since_[i] = now;
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
