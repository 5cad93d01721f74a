// The simulator's model of starts that slow each other
// (SimOptions::start_contention > 0): processor sharing. Each start is a
// fixed delay, then its share of work on a resource all starts past their
// delay use equally; at most start_parallelism are in flight, the others
// wait in request order. Also the start jitter of either model.
#include <algorithm>
#include <cstdint>
#include <random>

#include "planner/simulator/simulation.h"

namespace berth::planner::internal {
namespace {

// Shared work at or below this counts as done (Duration arithmetic rounds
// when work is divided among the sharers).
constexpr absl::Duration kDone = absl::Nanoseconds(1);

}  // namespace

void Simulation::RequestStart(size_t i, absl::Time now, absl::Duration run) {
  AdvanceStarts(now);
  start_queue_.push_back({i, absl::InfiniteFuture(), absl::ZeroDuration(), run});
  AdvanceStarts(now);
}

absl::Time Simulation::NextStartEvent() const {
  int64_t sharing = 0;
  for (const Starting& s : starting_) sharing += s.delay_until <= starts_served_ ? 1 : 0;
  absl::Time next = absl::InfiniteFuture();
  for (const Starting& s : starting_) {
    next = std::min(next, s.delay_until > starts_served_
                              ? s.delay_until
                              : starts_served_ + std::max(absl::ZeroDuration(), s.work_left) *
                                                     sharing);
  }
  return next;
}

void Simulation::AdvanceStarts(absl::Time t) {
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
      RunContainer(s.job, t, s.run);
    } else {
      starting_[kept++] = s;
    }
  }
  starting_.resize(kept);
  // Begins waiting starts in the slots that are free.
  const absl::Duration latency = std::max(absl::ZeroDuration(), opt_.start_latency);
  const absl::Duration work = std::min(opt_.start_contention, latency);
  while (!start_queue_.empty() &&
         (opt_.start_parallelism <= 0 ||
          starting_.size() < static_cast<size_t>(opt_.start_parallelism))) {
    Starting s = start_queue_.front();
    start_queue_.pop_front();
    s.delay_until = t + Jittered(s.job, latency - work);
    s.work_left = work;
    if (s.delay_until <= t && s.work_left <= kDone) {
      RunContainer(s.job, t, s.run);  // no latency at all
    } else {
      starting_.push_back(s);
    }
  }
}

absl::Duration Simulation::Jittered(size_t i, absl::Duration delay) const {
  if (opt_.start_jitter <= absl::ZeroDuration()) return delay;
  // One draw per job and seed, whatever order the starts come in; the
  // engine's output is fixed by the standard, so runs repeat everywhere.
  const uint64_t seed = opt_.start_jitter_seed, job = i;
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(job), static_cast<uint32_t>(job >> 32)};
  std::mt19937_64 engine(seq);
  const double u = static_cast<double>(engine() >> 11) * 0x1.0p-52 - 1.0;  // [-1, 1)
  return std::max(absl::ZeroDuration(), delay + opt_.start_jitter * u);
}

}  // namespace berth::planner::internal
