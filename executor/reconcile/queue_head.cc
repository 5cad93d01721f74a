#include "executor/reconcile/queue_head.h"

#include <algorithm>

namespace berth {

bool HeadIsBlocked(const planner::Decision& head) {
  if (head.verdict == planner::Verdict::kAdmit) return true;
  switch (head.reason) {
    case planner::Reason::kWaitingForMemory:
    case planner::Reason::kWaitingForCpu:
    case planner::Reason::kWaitingForWorkerSlot:
    case planner::Reason::kWaitingForPoolSlot:
    case planner::Reason::kWaitingForWorkspaceCap:
      return head.needed <= head.free;  // its binding dimension has room
    default:
      return false;
  }
}

void QueueHeadWatch::Observe(const planner::State& state, const planner::PlanResult& result) {
  const planner::Decision* head = nullptr;
  for (const planner::Decision& d : result.decisions) {
    if (d.verdict != planner::Verdict::kReject) {
      head = &d;
      break;
    }
  }
  absl::MutexLock lock(&mu_);
  if (result.now < last_plan_) return;
  last_plan_ = result.now;
  if (head == nullptr || !HeadIsBlocked(*head)) {
    head_.clear();
    return;
  }
  const std::string& id = state.queued[head->job].id;
  if (head_ != id) {
    head_ = id;
    blocked_since_ = result.now;
  }
}

absl::Duration QueueHeadWatch::BlockedFor(absl::Time now) const {
  absl::MutexLock lock(&mu_);
  if (head_.empty()) return absl::ZeroDuration();
  return std::max(absl::ZeroDuration(), now - blocked_since_);
}

}  // namespace berth
