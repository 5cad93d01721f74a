// The forecast's model of the executor's container starts
// (ForecastOptions::executor): the same model planner::Simulate() plays
// (planner/simulator/simulator_starts.cc), so that a forecast made with the
// executor's measured model gives each job the start the simulation of
// that executor gives it. Without contention each start takes
// start_latency in one of start_parallelism slots; with contention the last
// start_contention of it is work the starts in flight share equally.
#include <algorithm>

#include "planner/forecast/forward.h"

namespace berth::planner::internal {
namespace {

// Shared work at or below this counts as done (division rounds).
constexpr absl::Duration kDone = absl::Nanoseconds(1);

}  // namespace

void Forward::Launch(size_t slot, absl::Time t, absl::Duration run) {
  const ExecutorModel& m = options_.executor;
  if (m.zero()) {
    EndAt(slot, t + run);
    return;
  }
  const absl::Duration latency = std::max(absl::ZeroDuration(), m.start_latency);
  if (m.start_contention > absl::ZeroDuration()) {
    AdvanceStarts(t);
    start_queue_.push_back({slot, t, absl::InfiniteFuture(), absl::ZeroDuration(), run});
    AdvanceStarts(t);
    return;
  }
  absl::Time begin = t;
  if (m.start_parallelism > 0) {
    if (start_slots_.empty()) {
      for (int32_t k = 0; k < m.start_parallelism; ++k) start_slots_.push(t);
    }
    begin = std::max(t, start_slots_.top());
    start_slots_.pop();
  }
  const absl::Time run_start = begin + latency;
  if (m.start_parallelism > 0) start_slots_.push(run_start);
  RunContainer({slot, t, run_start, absl::ZeroDuration(), run}, run_start);
}

void Forward::RunContainer(const Starting& s, absl::Time at) {
  EndAt(s.slot, at + s.run + std::max(absl::ZeroDuration(), options_.executor.finish_latency));
  // berthd records RUNNING, a store change, and plans again.
  if (options_.executor.plan_at_starts && at > s.admitted) wakeups_.push(at);
}

absl::Time Forward::NextStartEvent() const {
  int64_t sharing = 0;
  for (const Starting& s : starting_) sharing += s.delay_until <= starts_served_ ? 1 : 0;
  absl::Time next = absl::InfiniteFuture();
  for (const Starting& s : starting_) {
    next = std::min(next, s.delay_until > starts_served_
                              ? s.delay_until
                              : starts_served_ +
                                    std::max(absl::ZeroDuration(), s.work_left) * sharing);
  }
  return next;
}

void Forward::AdvanceStarts(absl::Time t) {
  if (starts_served_ == absl::InfinitePast()) starts_served_ = t;
  if (t > starts_served_) {
    int64_t sharing = 0;
    for (const Starting& s : starting_) sharing += s.delay_until <= starts_served_ ? 1 : 0;
    if (sharing > 0) {
      const absl::Duration each = (t - starts_served_) / sharing;
      for (Starting& s : starting_) {
        if (s.delay_until <= starts_served_) s.work_left -= each;
      }
    }
    starts_served_ = t;
  }
  // Ends the starts done by now, in the order they began.
  size_t kept = 0;
  for (size_t k = 0; k < starting_.size(); ++k) {
    const Starting& s = starting_[k];
    if (s.delay_until <= t && s.work_left <= kDone) {
      RunContainer(s, t);
    } else {
      starting_[kept++] = s;
    }
  }
  starting_.resize(kept);
  // Begins waiting starts in the slots that are free.
  const ExecutorModel& m = options_.executor;
  const absl::Duration latency = std::max(absl::ZeroDuration(), m.start_latency);
  const absl::Duration work = std::min(m.start_contention, latency);
  while (!start_queue_.empty() &&
         (m.start_parallelism <= 0 ||
          starting_.size() < static_cast<size_t>(m.start_parallelism))) {
    Starting s = start_queue_.front();
    start_queue_.pop_front();
    s.delay_until = t + (latency - work);
    s.work_left = work;
    if (s.delay_until <= t && s.work_left <= kDone) {
      RunContainer(s, t);  // no latency at all
    } else {
      starting_.push_back(s);
    }
  }
}

absl::Time Forward::NextWakeup() {
  while (!wakeups_.empty() && wakeups_.top() <= last_plan_) wakeups_.pop();
  return wakeups_.empty() ? absl::InfiniteFuture() : wakeups_.top();
}

bool Forward::Exhausted() const {
  const Budgets& b = budgets_;
  if (!b.nodes.empty() && (b.memory_bytes <= 0 || b.cpu_millis <= 0 || b.max_workers <= 0)) {
    return false;  // totals taken from the nodes by Plan()
  }
  if (ends_.empty()) return false;
  if (static_cast<int64_t>(planner_->state().running.size()) >= b.max_workers) return true;
  int64_t memory = 0, cpu = 0;
  for (const RunningJob& r : planner_->state().running) {
    memory += std::max<int64_t>(0, r.resources.memory_bytes);
    cpu += std::max<int64_t>(0, r.resources.cpu_millis);
  }
  return memory >= b.memory_bytes || cpu >= b.cpu_millis;
}

}  // namespace berth::planner::internal
