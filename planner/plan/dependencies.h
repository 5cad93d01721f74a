// Dependency resolution for queued jobs: which dependencies have succeeded,
// are still pending, failed, or cannot be satisfied (unknown id, cycle,
// rejected dependency). Internal to planner/.
#ifndef BERTH_PLANNER_PLAN_DEPENDENCIES_H_
#define BERTH_PLANNER_PLAN_DEPENDENCIES_H_

#include <vector>

#include "planner/plan/id_index.h"
#include "planner/model/job_record.h"
#include "planner/model/model.h"
#include "planner/plan/prepare.h"

namespace berth::planner::internal {

// For every queued job with dependencies (JobRecord::kFlagHasDependencies):
//  - an unknown dependency id          -> Problem::kUnknownDependency;
//  - on a dependency cycle (incl. self) -> Problem::kDependencyCycle;
//  - a dependency finished unsuccessfully -> Problem::kDependencyFailed;
//  - a queued dependency is rejected     -> Problem::kDependencyRejected;
//  - otherwise, if some dependency is running or queued, the job gets
//    kFlagDependenciesPending and its pending dependencies go to `pending`
//    (sorted by job).
// A problem already set on a job (its own) is kept. Jobs are processed in
// dependency order (Tarjan's SCCs, iteratively: no recursion), so the result
// does not depend on the order of State::queued. O(d + e) for d jobs with
// dependencies and e dependency edges, plus the id lookups.
// `with_dependencies` lists, ascending, the jobs with a non-empty
// depends_on.
void ResolveDependencies(const State& state, const IdIndex& index,
                         std::vector<uint32_t> with_dependencies,
                         std::vector<JobRecord>& jobs,
                         std::vector<PendingDep>& pending);

}  // namespace berth::planner::internal

#endif  // BERTH_PLANNER_PLAN_DEPENDENCIES_H_
