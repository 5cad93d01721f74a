// HeldJobs: which ADMITTED/RUNNING jobs the runtime holds because their node
// was lost, and why (executor/runtime/swarm/node_loss.h), as of the
// reconciler's last pass that observed the runtime.
//
// The reconciler replaces the whole set every pass that lists the runtime
// (ContainerSummary::held); ExplainJob reads it. In memory only: a hold is the
// runtime's current view, recomputed after a restart.
//
// Thread-safe.
#ifndef BERTH_EXECUTOR_RECONCILE_HELD_JOBS_H_
#define BERTH_EXECUTOR_RECONCILE_HELD_JOBS_H_

#include <map>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace berth {

class HeldJobs {
 public:
  // Replaces every hold: job id -> the runtime's reason (names the node, when
  // it was lost and what requeues the job).
  void Replace(std::map<std::string, std::string> holds);
  // The reason `job_id` is held, or nullopt if it is not.
  std::optional<std::string> Get(const std::string& job_id) const;
  // How many jobs are held.
  int size() const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::string> holds_ ABSL_GUARDED_BY(mu_);
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_RECONCILE_HELD_JOBS_H_
