// The requeue-OOM policy: an OOM-killed job goes back to the queue
// once with a higher memory reservation instead of failing, when berthd's
// --requeue_oom names its pool or the last applied snapshot asked for it
// (SnapshotHeader.requeue_oom_once). Pure: the reconciler supplies the
// budgets and applies the result to the job's final transition.
//
// Thread-safe (no state).
#ifndef BERTH_EXECUTOR_USAGE_OOM_REQUEUE_H_
#define BERTH_EXECUTOR_USAGE_OOM_REQUEUE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "berth/v1/budgets.pb.h"
#include "berth/v1/job.pb.h"
#include "executor/store/store.h"

namespace berth {

struct OomRaise {
  // The new reservation (Job.raised_memory_bytes): > the job's current one.
  int64_t memory_bytes = 0;
  // The decision's reason, e.g. "OOM-killed at its 32 MiB limit (peak
  // 33 MiB): requeued once with 256 MiB (2 x its limit, rounded up to
  // 256 MiB)".
  std::string reason;
};

// The reservation an OOM-killed `job` is requeued with: the larger of twice
// its effective memory (max(estimate, raised_memory_bytes)) and 1.25 x
// `peak_memory_bytes` (its observed peak; 0 if not sampled), rounded up to a
// multiple of 256 MiB, then capped at the memory budget (budgets.memory_bytes,
// or the nodes' sum when that is <= 0) and, with a node inventory, at the
// largest node that may run the job's pool (planner/model/model.h kPoolLabel).
// Errors (FAILED_PRECONDITION, the message says why, for the job's message):
//   the job was already raised once (raised_memory_bytes > 0);
//   the cap is not above its current reservation.
[[nodiscard]] absl::StatusOr<OomRaise> RaiseAfterOom(const v1::Job& job,
                                                     int64_t peak_memory_bytes,
                                                     const v1::Budgets& budgets);

// Applies the policy to `t`, the FAILED (OOM_KILLED) transition of `job`:
// with a raise, `t` becomes a requeue (new_state QUEUED, raised_memory_bytes,
// requeue_reason: recorded as a decision in the same write) whose message is
// "requeued: <reason>"; without, `t` stays FAILED and its message gains
// "; not requeued: <why>". Returns whether it requeues.
// REQUIRES: t.new_state FAILED with failure_cause OOM_KILLED.
bool RequeueOomKilled(const v1::Job& job, const v1::Budgets& budgets, TransitionRequest& t);

}  // namespace berth

#endif  // BERTH_EXECUTOR_USAGE_OOM_REQUEUE_H_
