#include "planner/starts/start_model.h"

#include <algorithm>
#include <utility>

namespace berth::planner {
namespace {

// Shared work at or below this counts as done (Duration arithmetic rounds
// when work is divided among the sharers).
constexpr absl::Duration kDone = absl::Nanoseconds(1);

}  // namespace

StartModel::StartModel(Params params, Started started, Delay delay)
    : params_(params), started_(std::move(started)), delay_(std::move(delay)) {}

void StartModel::Request(size_t token, absl::Time t, absl::Duration run) {
  const absl::Duration latency = std::max(absl::ZeroDuration(), params_.start_latency);
  if (params_.start_contention > absl::ZeroDuration()) {
    Advance(t);
    waiting_.push_back({token, t, absl::InfiniteFuture(), absl::ZeroDuration(), run});
    Advance(t);
    return;
  }
  absl::Time begin = t;
  if (params_.start_parallelism > 0) {
    if (slots_.empty()) {
      for (int32_t k = 0; k < params_.start_parallelism; ++k) slots_.push(t);
    }
    begin = std::max(t, slots_.top());
    slots_.pop();
  }
  const absl::Time run_start = begin + DelayOf(token, latency);
  if (params_.start_parallelism > 0) slots_.push(run_start);
  started_(token, t, run_start, run);
}

absl::Time StartModel::NextEvent() const {
  int64_t sharing = 0;
  for (const Starting& s : starting_) sharing += s.delay_until <= served_ ? 1 : 0;
  absl::Time next = absl::InfiniteFuture();
  for (const Starting& s : starting_) {
    next = std::min(next, s.delay_until > served_
                              ? s.delay_until
                              : served_ + std::max(absl::ZeroDuration(), s.work_left) * sharing);
  }
  return next;
}

void StartModel::Advance(absl::Time t) {
  if (served_ == absl::InfinitePast()) served_ = t;
  if (t > served_) {
    int64_t sharing = 0;
    for (const Starting& s : starting_) sharing += s.delay_until <= served_ ? 1 : 0;
    if (sharing > 0) {
      const absl::Duration each = (t - served_) / sharing;
      for (Starting& s : starting_) {
        if (s.delay_until <= served_) s.work_left -= each;
      }
    }
    served_ = t;
  }
  // Ends the starts done by now, in the order they began.
  size_t kept = 0;
  for (size_t k = 0; k < starting_.size(); ++k) {
    const Starting s = starting_[k];
    if (s.delay_until <= t && s.work_left <= kDone) {
      started_(s.token, s.requested, t, s.run);
    } else {
      starting_[kept++] = s;
    }
  }
  starting_.resize(kept);
  // Begins waiting starts in the slots that are free.
  const absl::Duration latency = std::max(absl::ZeroDuration(), params_.start_latency);
  const absl::Duration work = std::min(params_.start_contention, latency);
  while (!waiting_.empty() &&
         (params_.start_parallelism <= 0 ||
          starting_.size() < static_cast<size_t>(params_.start_parallelism))) {
    Starting s = waiting_.front();
    waiting_.pop_front();
    s.delay_until = t + DelayOf(s.token, latency - work);
    s.work_left = work;
    if (s.delay_until <= t && s.work_left <= kDone) {
      started_(s.token, s.requested, t, s.run);  // no latency at all
    } else {
      starting_.push_back(s);
    }
  }
}

void StartModel::Clear() {
  slots_ = {};
  starting_ = {};
  waiting_ = {};
  served_ = absl::InfinitePast();
}

}  // namespace berth::planner
