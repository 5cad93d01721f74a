#include "executor/reconcile/requeue_why.h"

#include <vector>

#include "absl/strings/str_cat.h"

namespace berth {

// Where a requeued job runs next is the planner's later choice (a lost node
// that comes back may get it again), so the messages say only what is known
// when it is requeued.
const char kDrainedNext[] =
    " is drained; it goes back to the queue for a node that accepts jobs";

RequeueWhy WhyRequeued(const Store& store, const StoredJob& job,
                       const ContainerObservation* observation,
                       const absl::flat_hash_set<std::string>& drained_nodes, int code) {
  RequeueWhy why;
  if (job.stop_intent == StopIntent::kRequeue) {
    absl::StatusOr<std::vector<Decision>> decisions =
        store.DecisionsForJob(job.job.spec().id());
    if (decisions.ok()) {
      for (auto it = decisions->rbegin(); it != decisions->rend(); ++it) {
        if (it->kind != DecisionKind::kRequeue) continue;
        why.cause = it->requeue_cause;
        why.message = absl::StrCat("requeued: ", it->reason);
        return why;
      }
    }
    if (!job.job.node().empty() && drained_nodes.contains(job.job.node())) {
      why.cause = v1::REQUEUE_CAUSE_NODE_DRAINED;
      why.message = absl::StrCat("requeued: its node ", job.job.node(), kDrainedNext);
      return why;
    }
    why.message = "requeued by an operator (its decision could not be read)";
    return why;
  }
  if (observation != nullptr && observation->lost) {
    why.cause = v1::REQUEUE_CAUSE_NODE_LOST;
    why.message = absl::StrCat("requeued: the engine lost it (",
                               observation->error.empty() ? "its node went away"
                                                          : observation->error,
                               "); it goes back to the queue");
    return why;
  }
  why.cause = v1::REQUEUE_CAUSE_ENGINE_STOPPED;
  why.message = absl::StrCat("requeued: the container engine stopped it (exit ", code,
                             ") while it was unreachable, e.g. a dockerd restart "
                             "without live-restore");
  return why;
}

}  // namespace berth
