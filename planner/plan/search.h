// The admission search: one walk over the ranking that admits what fits,
// places the head-of-line reservation, lets later jobs backfill only when
// they do not delay it, and records a reason for every other job. The rules
// are stated in plan.h; Plan() is the public entry. Internal to planner/.
#ifndef BERTH_PLANNER_PLAN_SEARCH_H_
#define BERTH_PLANNER_PLAN_SEARCH_H_

#include <cstdint>
#include <vector>

#include "absl/time/time.h"
#include "planner/model/model.h"
#include "planner/plan/plan.h"
#include "planner/ranking/policy.h"
#include "planner/plan/prepare.h"

namespace berth::planner::internal {

// Makes `out` a fresh PlanResult but for the memory of its decisions,
// pending dependencies and placements (emptied: a planner that plans again
// and again reuses them) and, with `keep_names`, its workspace and pool
// names as they are (the caller compares them with the new ones).
void ResetResult(PlanResult& out, bool keep_names);

// Appends one decision per entry of `order` (indices into p.jobs, best first)
// to out.decisions, and fills out's admitted count, reservation, pending
// dependencies, usage, timeline and free amounts. REQUIRES: out.decisions
// and out.pending_dependencies are empty; p = Prepare(state, budgets, ...).
void Search(const Prepared& p, const State& state, const Budgets& budgets,
            const Policy& policy, absl::Time now,
            const std::vector<uint32_t>& order, PlanResult& out);

}  // namespace berth::planner::internal

#endif  // BERTH_PLANNER_PLAN_SEARCH_H_
