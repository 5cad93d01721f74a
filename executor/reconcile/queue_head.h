// QueueHeadWatch: whether the queue is moving, as the planner itself sees it.
//
// The head of the queue is the first job in the ranking that is not
// rejected. Its wait is explained when the plan says why it cannot start
// now: its binding dimension has no room (memory, CPU, a worker, pool or
// workspace slot: needed > free), a dependency has not succeeded, admission
// is paused, its pool is in maintenance, or a reservation holds the capacity
// (WAITING_FOR_PRIORITY). It is blocked when nothing explains the wait: the
// plan admits it (and a later plan still finds it queued: the admission
// never took effect), or its binding dimension has room. Blocked for long
// means the queue is stuck — a legitimate wait for capacity, however long,
// never counts (an alert on this fires only when something is wrong).
//
// Thread-safe.
#ifndef BERTH_EXECUTOR_RECONCILE_QUEUE_HEAD_H_
#define BERTH_EXECUTOR_RECONCILE_QUEUE_HEAD_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "planner/model/model.h"
#include "planner/plan/plan.h"

namespace berth {

// True if the decision's wait has no explanation in the plan (see above).
bool HeadIsBlocked(const planner::Decision& head);

class QueueHeadWatch {
 public:
  // Observes a plan of `state`, computed at result.now. A plan older than
  // the last one observed is ignored.
  void Observe(const planner::State& state, const planner::PlanResult& result);

  // How long the current head has been blocked, without interruption, in
  // every plan observed since it first was: `now` minus the first such
  // plan's time; zero if the last plan's head is not blocked, or there is
  // no queued job. Keeps growing while no new plan is observed (a stuck
  // reconcile loop plans no more).
  absl::Duration BlockedFor(absl::Time now) const;

 private:
  mutable absl::Mutex mu_;
  absl::Time last_plan_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::string head_ ABSL_GUARDED_BY(mu_);  // empty: no blocked head
  absl::Time blocked_since_ ABSL_GUARDED_BY(mu_);
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_RECONCILE_QUEUE_HEAD_H_
