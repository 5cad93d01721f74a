// Clock: the only source of "now" and of waiting in Berth.
//
// Only RealClock calls absl::Now(); everything else takes a Clock& (or, in the
// planner, an absl::Time argument), so tests run on simulated time.
// Thread-safe: all implementations may be called from any thread.
#ifndef BERTH_PLANNER_BASE_CLOCK_H_
#define BERTH_PLANNER_BASE_CLOCK_H_

#include "absl/time/time.h"

namespace berth {

class Clock {
 public:
  virtual ~Clock() = default;

  // The current time.
  virtual absl::Time Now() = 0;

  // Blocks the calling thread for `d` (returns at once for d <= 0).
  virtual void SleepFor(absl::Duration d) = 0;

  // The process-wide real clock. Never null; never deleted.
  static Clock* Real();
};

}  // namespace berth

#endif  // BERTH_PLANNER_BASE_CLOCK_H_
