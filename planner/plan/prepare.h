// Prepare: turns a State into the compact, string-free form the search runs
// on — interned workspaces and pools, JobRecords with every per-job problem
// (invalid resources, unknown pool, duplicate id, exceeds budget, unknown /
// failed / rejected dependency, cycle), running usage, and the timeline of
// running jobs' expected ends. Internal to planner/; O(n + d log d) for n
// queued jobs and d of them with dependencies.
#ifndef BERTH_PLANNER_PLAN_PREPARE_H_
#define BERTH_PLANNER_PLAN_PREPARE_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "planner/plan/id_index.h"
#include "planner/model/job_record.h"
#include "planner/model/model.h"
#include "planner/model/saturating.h"
#include "planner/plan/nodes.h"
#include "planner/ranking/policy.h"
#include "planner/model/scratch.h"
#include "planner/timeline/timeline.h"

namespace berth::planner::internal {

// A dependency of queued job `job` (index into State::queued) that has not
// succeeded yet: State::queued[job].depends_on[position].
struct PendingDep {
  uint32_t job;
  uint32_t position;
};

struct Prepared {
  std::vector<JobRecord> jobs;  // jobs[i] describes State::queued[i]
  // plain[i] = 1 iff jobs[i] has no problem, no pending dependency and an
  // open pool: admission depends only on capacity. Compact (a byte per job)
  // for the search's early exit.
  std::vector<uint8_t> plain;
  // Sorted distinct names; JobRecord::workspace / pool index these. They
  // point into the State.
  std::vector<absl::string_view> workspaces;
  std::vector<absl::string_view> pools;
  // Range of queued jobs' priorities (0, 0 without jobs).
  int32_t min_priority = 0;
  int32_t max_priority = 0;

  // Running jobs' reservations (negative resources count as 0; saturated).
  int64_t used_memory = 0;
  int64_t used_cpu = 0;
  int64_t used_workers = 0;
  std::vector<int64_t> running_memory_by_workspace;
  std::vector<int64_t> running_cpu_by_workspace;
  std::vector<int64_t> workers_by_workspace;
  std::vector<int64_t> workers_by_pool;
  // Per workspace: State::workspace_turns (0 = never admitted).
  std::vector<uint64_t> last_turn_by_workspace;
  // Per pool: its max_workers, Amounts::kUnlimited without a limit.
  std::vector<int64_t> pool_capacity;

  // Releases of running jobs at their expected ends (ExpectedEnd()).
  Timeline timeline;
  // The largest overrun among running jobs: max over them of (now -
  // started_at) / estimate, at least 1, at most kMaxOverrun. Backfill that
  // relies on a job's own estimate ("ends before the reservation") stretches
  // the estimate by it: if running jobs have overrun, queued ones may too.
  static constexpr double kMaxOverrun = 8;
  double overrun = 1;
  // Index into jobs of State::reservation_holder if it is queued exactly
  // once, -1 otherwise.
  int64_t holder = -1;
  // Aging (Policy::aging_interval): the effective priorities in
  // JobRecord::priority never exceed aging_ceiling: the highest priority of
  // the queued jobs that fit the budgets (queued_top, INT32_MIN if none),
  // or State::top_priority if higher and seen within
  // Policy::aging_top_memory.
  int32_t aging_ceiling = 0;
  int32_t queued_top = INT32_MIN;
  // Sorted by job.
  std::vector<PendingDep> pending;

  // Budgets::nodes (empty without an inventory), what running jobs hold on
  // each node, and per pool the group of nodes that may run it.
  NodeInventory nodes;
  std::vector<uint32_t> pool_group;

};

// When a job that started at `started` with expected duration `estimate`
// (> 0) is expected to end, as seen at `now`: started + estimate while that
// is after `now`; for a job past its estimate, started + estimate * 2^k for
// the smallest k that puts the end after `now` (a job that has overrun is
// expected to run at most as long again as it has so far). Never <= now;
// absl::InfiniteFuture() on overflow.
absl::Time ExpectedEnd(absl::Time started, absl::Duration estimate,
                       absl::Time now);

// A job's expected duration in ns: `d`, else `fallback`, else one hour
// (never below 1 ns; saturated).
int64_t DurationNanos(absl::Duration d, absl::Duration fallback);

// Where aging counts a queued job's wait from: when Berth first queued it
// (QueuedJob::queued_at), or its created_at when that is unknown.
absl::Time WaitingSince(const QueuedJob& job);

// A queued job's effective priority under aging: priority + floor((now -
// since) / interval), at most `ceiling` (and never below priority), where
// `since` is WaitingSince(job). interval <= 0, or `since` at or before the
// Unix epoch (unset): priority.
int32_t AgedPriority(int32_t priority, absl::Time since, absl::Time now,
                     absl::Duration interval, int32_t ceiling);

// The running jobs' part of `out`, whose workspaces and pools are named:
// what they use (in all, per workspace, per pool), each workspace's last
// turn, the timeline of their expected ends and the overrun. Running job i
// counts in workspace rank ws_of(i) and pool rank pool_of(i); then
// each(i, memory, cpu, end) is called (Prepare places it on its node).
// Prepare() and the IncrementalPlanner, which names its own, share it.
template <typename WsOf, typename PoolOf, typename Each>
void PrepareRunningUse(const State& state, absl::Duration default_duration, absl::Time now,
                       WsOf ws_of, PoolOf pool_of, Each each, Prepared& out) {
  const size_t num_ws = out.workspaces.size();
  out.used_memory = out.used_cpu = out.used_workers = 0;
  out.running_memory_by_workspace.assign(num_ws, 0);
  out.running_cpu_by_workspace.assign(num_ws, 0);
  out.workers_by_workspace.assign(num_ws, 0);
  out.workers_by_pool.assign(out.pools.size(), 0);
  out.last_turn_by_workspace.assign(num_ws, 0);
  if (!state.workspace_turns.empty()) {
    for (size_t w = 0; w < num_ws; ++w) {
      if (auto it = state.workspace_turns.find(out.workspaces[w]);
          it != state.workspace_turns.end())
        out.last_turn_by_workspace[w] = it->second;
    }
  }
  out.timeline.Clear();
  out.overrun = 1;
  for (size_t i = 0; i < state.running.size(); ++i) {
    const RunningJob& r = state.running[i];
    const uint32_t w = ws_of(i);
    const uint32_t p = pool_of(i);
    const int64_t mem = std::max<int64_t>(0, r.resources.memory_bytes);
    const int64_t cpu = std::max<int64_t>(0, r.resources.cpu_millis);
    out.used_memory = SatAdd(out.used_memory, mem);
    out.used_cpu = SatAdd(out.used_cpu, cpu);
    out.used_workers = SatAdd(out.used_workers, 1);
    out.running_memory_by_workspace[w] = SatAdd(out.running_memory_by_workspace[w], mem);
    out.running_cpu_by_workspace[w] = SatAdd(out.running_cpu_by_workspace[w], cpu);
    out.workers_by_workspace[w] += 1;
    out.workers_by_pool[p] += 1;
    const absl::Duration estimate =
        absl::Nanoseconds(DurationNanos(r.expected_duration, default_duration));
    const absl::Time end = ExpectedEnd(r.started_at, estimate, now);
    if (now - r.started_at > estimate) {
      out.overrun = std::min(Prepared::kMaxOverrun,
                             std::max(out.overrun, absl::FDivDuration(now - r.started_at,
                                                                      estimate)));
    }
    out.timeline.AddRelease(end, mem, cpu, p, w);
    each(i, mem, cpu, end);
  }
}

// Overwrites `out`, reusing its vectors' memory. Borrows buffer 0 of
// `scratch` (ids' hashes and the duplicate-id table, 24-32 bytes per job)
// only until it returns: Plan() then lends the same memory to the ranking.
// REQUIRES: `state` outlives `out` (names are string_views into it).
void Prepare(const State& state, const Budgets& budgets,
             const Policy& policy, absl::Time now,
             ScratchBuffers& scratch, Prepared& out);

}  // namespace berth::planner::internal

#endif  // BERTH_PLANNER_PLAN_PREPARE_H_
