// A planner state as a berth-plan workload file (berth.v1.Workload): the one
// writer of the planning fields of a job and of the planner's memory, for
// berth-plan (a state it emits at a moment, tools/plan/state_at.h) and for
// berthd (the state a plan was made from, GetPlanRequest.include_state), so
// that `berth-plan now` reads both the same way.
//
// Thread-compatible pure functions.
#ifndef BERTH_PLANNER_CONVERT_WORKLOAD_STATE_H_
#define BERTH_PLANNER_CONVERT_WORKLOAD_STATE_H_

#include <string>

#include "absl/time/time.h"
#include "berth/v1/files.pb.h"
#include "berth/v1/job.pb.h"
#include "planner/model/model.h"

namespace berth::planner {

// The spec of `q` with only what planning reads: id, workspace, `action`
// (if not empty), priority, resources, pool (if not the default),
// expected_duration, depends_on and created_at (if after the epoch). No
// image, argv, env or labels.
v1::JobSpec PlanningSpecOf(const QueuedJob& q, const std::string& action);

// A job holding capacity as a workload's running job: its planning spec
// (PlanningSpecOf, no action), started_at and node (if any).
v1::RunningJob RunningJobToProto(const RunningJob& r);

// True if `m` remembers nothing (a first plan's memory).
bool IsEmpty(const PlannerMemory& m);

// `m` as its message; unknown times (InfiniteFuture / InfinitePast) unset;
// workspace turns sorted by workspace, so the same memory is always written
// the same.
v1::PlannerMemory MemoryToProto(const PlannerMemory& m);

// What a plan of `state` with `budgets` at `now` read, as a workload whose
// start is `now`: running = state.running (started_at, node); jobs =
// state.queued (arrival 0, queued_at when after the epoch, at most `now`),
// dependencies on jobs of state.finished that succeeded dropped (met); a
// queued job with a dependency that failed or that is neither queued,
// running nor finished is left out (it can never start), and so are its
// dependents, transitively (their count is returned in *left_out if not
// null); planner_memory = MemoryOf(state) unless empty, without a holder
// that is not one of the jobs. The pause, pools in maintenance and the policy are not part
// of a workload and are not carried.
v1::Workload WorkloadOfState(const State& state, const Budgets& budgets, absl::Time now,
                             const std::string& description, int* left_out = nullptr);

}  // namespace berth::planner

#endif  // BERTH_PLANNER_CONVERT_WORKLOAD_STATE_H_
