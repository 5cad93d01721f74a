// StartModel: the executor's container starts, as the simulator
// (planner::Simulate) and the forecast (ForecastOptions::executor) both play
// them, so that a forecast made with an executor's model gives each job the
// start the simulation of that executor gives it.
//
// A start requested at t takes start_latency. Without contention it runs in
// one of start_parallelism slots (0: unbounded), the next free one in
// request order. With contention (start_contention > 0) it is processor
// sharing: a fixed delay of start_latency - start_contention, then the
// start's share of start_contention of work that every start past its
// delay uses equally; at most start_parallelism starts are in flight, the
// others wait in request order.
//
// Each start, once done, is reported to the `started` callback with the
// token the caller gave, when it was requested, when its container runs
// from and the `run` the caller gave. Without contention a request is
// reported at once (from inside Request()); with contention, from
// Request() or Advance(), in the order the starts began.
//
// Not thread-safe: one caller at a time.
#ifndef BERTH_PLANNER_STARTS_START_MODEL_H_
#define BERTH_PLANNER_STARTS_START_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <queue>
#include <vector>

#include "absl/time/time.h"

namespace berth::planner {

class StartModel {
 public:
  struct Params {
    absl::Duration start_latency = absl::ZeroDuration();     // < 0 counts as 0
    absl::Duration start_contention = absl::ZeroDuration();  // > 0: shared work
    int32_t start_parallelism = 0;                           // <= 0: unbounded
  };
  using Started = std::function<void(size_t token, absl::Time requested, absl::Time at,
                                     absl::Duration run)>;
  // The fixed delay a start of `token` takes instead of `delay` (a caller's
  // jitter); must not be negative. Empty: `delay` itself.
  using Delay = std::function<absl::Duration(size_t token, absl::Duration delay)>;

  StartModel(Params params, Started started, Delay delay = Delay());

  // Requests the start of `token` at `t` (>= every earlier event time given).
  void Request(size_t token, absl::Time t, absl::Duration run);
  // With contention: when the next start in flight ends its fixed delay or
  // its shared work; InfiniteFuture() if none is in flight (always without
  // contention).
  absl::Time NextEvent() const;
  // Serves the starts in flight up to `t` (<= NextEvent()): reports the
  // starts done by then and begins waiting ones in the slots that are free.
  void Advance(absl::Time t);
  // Forgets every start in flight or waiting.
  void Clear();

 private:
  struct Starting {
    size_t token;
    absl::Time requested;
    absl::Time delay_until;
    absl::Duration work_left;
    absl::Duration run;
  };
  absl::Duration DelayOf(size_t token, absl::Duration d) const {
    return delay_ ? delay_(token, d) : d;
  }

  Params params_;
  Started started_;
  Delay delay_;
  // Without contention: when each start slot is free next.
  std::priority_queue<absl::Time, std::vector<absl::Time>, std::greater<>> slots_;
  // With contention: the starts in flight, the starts waiting for a slot,
  // and the instant starting_ was served to.
  std::vector<Starting> starting_;
  std::deque<Starting> waiting_;
  absl::Time served_ = absl::InfinitePast();
};

}  // namespace berth::planner

#endif  // BERTH_PLANNER_STARTS_START_MODEL_H_
