// Why a requeued job went back to the queue: the cause and the message of
// its ended attempt (Job.attempts, the QUEUED event), naming what requeued
// it and, for an operator's drain or pool maintenance, the operator's reason.
#ifndef BERTH_EXECUTOR_RECONCILE_REQUEUE_WHY_H_
#define BERTH_EXECUTOR_RECONCILE_REQUEUE_WHY_H_

#include <string>

#include "absl/container/flat_hash_set.h"
#include "berth/v1/job.pb.h"
#include "executor/runtime/runtime.h"
#include "executor/store/store.h"

namespace berth {

// The end of a drained node's requeue reason, after "its node <node>".
extern const char kDrainedNext[];

struct RequeueWhy {
  v1::RequeueCause cause = v1::REQUEUE_CAUSE_UNSPECIFIED;
  // "requeued: drain: kernel upgrade", "requeued: the engine lost it (...)".
  std::string message;
};

// For a job whose run ended as a requeue (ExitKind::kRequeued):
// - with StopIntent::kRequeue, the last kRequeue decision of the job in
//   `store` (Drain, SetPoolMaintenance, a drained node) gives cause and
//   reason; a decision recorded before causes were kept (UNSPECIFIED) keeps
//   its reason; none readable: the node drain if its node is in
//   `drained_nodes`, else a generic operator requeue;
// - else an engine that lost the container (observation->lost) is
//   NODE_LOST, and a container the engine stopped (exit `code`) while it
//   was unreachable is ENGINE_STOPPED.
// `observation` may be null. Reads the store only for StopIntent::kRequeue.
RequeueWhy WhyRequeued(const Store& store, const StoredJob& job,
                       const ContainerObservation* observation,
                       const absl::flat_hash_set<std::string>& drained_nodes, int code);

}  // namespace berth

#endif  // BERTH_EXECUTOR_RECONCILE_REQUEUE_WHY_H_
