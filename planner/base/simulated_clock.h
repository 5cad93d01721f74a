// SimulatedClock: a Clock whose time moves only when told to (tests only).
//
// SleepFor(d) advances the simulated time by d and returns at once, so code
// with retries and backoff runs instantly and deterministically.
// Thread-safe.
#ifndef BERTH_PLANNER_BASE_SIMULATED_CLOCK_H_
#define BERTH_PLANNER_BASE_SIMULATED_CLOCK_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "planner/base/clock.h"

namespace berth {

class SimulatedClock final : public Clock {
 public:
  explicit SimulatedClock(absl::Time start = absl::FromUnixSeconds(1'700'000'000))
      : now_(start) {}

  absl::Time Now() override {
    absl::MutexLock lock(&mu_);
    return now_;
  }

  void SleepFor(absl::Duration d) override { Advance(d); }

  // Moves time forward by `d` (ignored if d <= 0).
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    if (d > absl::ZeroDuration()) now_ += d;
  }

 private:
  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace berth

#endif  // BERTH_PLANNER_BASE_SIMULATED_CLOCK_H_
