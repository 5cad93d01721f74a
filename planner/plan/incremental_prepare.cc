// The IncrementalPlanner's preparation of a plan (incremental.h): what
// Prepare() computes apart from the queued jobs' records — the names, the
// pools' capacities, the fair turns, and the running jobs' use and expected
// ends — from the index's name tables and State::running.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "planner/model/saturating.h"
#include "planner/plan/incremental.h"
#include "planner/plan/incremental_index.h"
#include "planner/plan/prepare.h"

namespace berth::planner {

void IncrementalPlanner::PrepareRunning(const Budgets& budgets, const Policy& policy,
                                        absl::Time now, internal::Prepared& p) {
  using internal::SatAdd;
  Index& x = *index_;
  x.workspaces.Refresh();
  x.pools.Refresh();
  p.workspaces = x.workspaces.sorted();
  p.pools = x.pools.sorted();
  const size_t num_ws = p.workspaces.size();
  const size_t num_pools = p.pools.size();
  p.pool_capacity.assign(num_pools, Amounts::kUnlimited);
  for (size_t i = 0; i < num_pools; ++i) {
    if (auto it = budgets.pool_max_workers.find(p.pools[i]);
        it != budgets.pool_max_workers.end() && it->second > 0)
      p.pool_capacity[i] = it->second;
  }
  p.used_memory = p.used_cpu = p.used_workers = 0;
  p.running_memory_by_workspace.assign(num_ws, 0);
  p.running_cpu_by_workspace.assign(num_ws, 0);
  p.workers_by_workspace.assign(num_ws, 0);
  p.workers_by_pool.assign(num_pools, 0);
  p.last_turn_by_workspace.assign(num_ws, 0);
  if (!state_.workspace_turns.empty()) {
    for (size_t w = 0; w < num_ws; ++w) {
      if (auto it = state_.workspace_turns.find(p.workspaces[w]);
          it != state_.workspace_turns.end())
        p.last_turn_by_workspace[w] = it->second;
    }
  }
  p.timeline.Clear();
  p.overrun = 1;
  for (size_t i = 0; i < state_.running.size(); ++i) {
    const RunningJob& r = state_.running[i];
    const uint32_t w = x.workspaces.rank(x.running_meta[i].workspace);
    const uint32_t pool = x.pools.rank(x.running_meta[i].pool);
    const int64_t mem = std::max<int64_t>(0, r.resources.memory_bytes);
    const int64_t cpu = std::max<int64_t>(0, r.resources.cpu_millis);
    p.used_memory = SatAdd(p.used_memory, mem);
    p.used_cpu = SatAdd(p.used_cpu, cpu);
    p.used_workers = SatAdd(p.used_workers, 1);
    p.running_memory_by_workspace[w] = SatAdd(p.running_memory_by_workspace[w], mem);
    p.running_cpu_by_workspace[w] = SatAdd(p.running_cpu_by_workspace[w], cpu);
    p.workers_by_workspace[w] += 1;
    p.workers_by_pool[pool] += 1;
    const absl::Duration estimate = absl::Nanoseconds(
        internal::DurationNanos(r.expected_duration, policy.default_duration));
    const absl::Time end = internal::ExpectedEnd(r.started_at, estimate, now);
    if (now - r.started_at > estimate) {
      p.overrun = std::min(internal::Prepared::kMaxOverrun,
                           std::max(p.overrun, absl::FDivDuration(now - r.started_at, estimate)));
    }
    p.timeline.AddRelease(end, mem, cpu, pool, w);
  }
  static const std::vector<Node>* const kNoNodes = new std::vector<Node>();
  p.nodes.Build(*kNoNodes);
}

}  // namespace berth::planner
