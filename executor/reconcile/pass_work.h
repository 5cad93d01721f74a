// What one reconcile pass carries between its steps (observe, finalise, plan,
// start, stop), shared by reconciler.cc and reconciler_finalise.cc. Private to
// the reconciler; not thread-safe (one pass at a time owns it).
#ifndef BERTH_EXECUTOR_RECONCILE_PASS_WORK_H_
#define BERTH_EXECUTOR_RECONCILE_PASS_WORK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "executor/reconcile/reconciler.h"
#include "planner/convert/convert.h"

namespace berth {

// An ADMITTED job to start: its spec, the node the planner placed it on
// (Job.node; "" = any), its attempt (Job.requeue_count) and the memory it
// was admitted at (EffectiveMemoryBytes: the container's limit).
struct ToStart {
  v1::JobSpec spec;
  std::string node;
  int attempt = 0;
  int64_t memory_bytes = 0;
};

struct Reconciler::Work {
  absl::Time now;
  // Starter::Mark() before the container list was taken.
  uint64_t start_mark = 0;
  ContainerList containers;
  // ADMITTED jobs to create/start this pass (new admissions and recovered).
  std::vector<ToStart> to_start;
  // Jobs whose running container must be stopped (intent recorded).
  std::vector<std::string> to_stop;
  // Finalised jobs whose container is to be removed before planning.
  std::vector<std::string> to_remove;
  // Multi-node: nodes drained by the operator this pass (from the node
  // list); jobs on them are requeued (RequeueIfNodeDrained).
  absl::flat_hash_set<std::string> drained_nodes;
  PassStats stats;
};

inline ToStart StartOf(const v1::Job& job) {
  return ToStart{job.spec(), job.node(), job.requeue_count(),
                 planner::EffectiveMemoryBytes(job)};
}

inline bool IsStale(const absl::Status& s) {
  // Someone else moved the job first (a sync cancelled it, another pass
  // finalised it): the decision is moot, not an error.
  return s.code() == absl::StatusCode::kFailedPrecondition ||
         s.code() == absl::StatusCode::kNotFound;
}

}  // namespace berth

#endif  // BERTH_EXECUTOR_RECONCILE_PASS_WORK_H_
