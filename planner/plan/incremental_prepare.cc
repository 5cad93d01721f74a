// The IncrementalPlanner's preparation of a plan (incremental.h): what
// Prepare() computes apart from the queued jobs' records — the names, the
// pools' capacities, and the running jobs' part (PrepareRunningUse) — from
// the index's name tables and State::running.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "planner/plan/incremental.h"
#include "planner/plan/incremental_index.h"
#include "planner/plan/prepare.h"

namespace berth::planner {

void IncrementalPlanner::PrepareRunning(const Budgets& budgets, const Policy& policy,
                                        absl::Time now, internal::Prepared& p) {
  Index& x = *index_;
  x.workspaces.Refresh();
  x.pools.Refresh();
  p.workspaces = x.workspaces.sorted();
  p.pools = x.pools.sorted();
  const size_t num_pools = p.pools.size();
  p.pool_capacity.assign(num_pools, Amounts::kUnlimited);
  for (size_t i = 0; i < num_pools; ++i) {
    if (auto it = budgets.pool_max_workers.find(p.pools[i]);
        it != budgets.pool_max_workers.end() && it->second > 0)
      p.pool_capacity[i] = it->second;
  }
  internal::PrepareRunningUse(
      state_, policy.default_duration, now,
      [&x](size_t i) { return x.workspaces.rank(x.running_meta[i].workspace); },
      [&x](size_t i) { return x.pools.rank(x.running_meta[i].pool); },
      [](size_t, int64_t, int64_t, absl::Time) {}, p);
  static const std::vector<Node>* const kNoNodes = new std::vector<Node>();
  p.nodes.Build(*kNoNodes);
}

}  // namespace berth::planner
