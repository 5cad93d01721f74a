// The admission walk: see plan.h for the rules and search.h for the entry.
#include "planner/plan/search.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "planner/plan/walk.h"

namespace berth::planner::internal {
namespace {

// NEVER_FITS details: the dimension the job cannot be given.
void FillRejected(const JobRecord& j, const Budgets& b, Decision& d) {
  const bool deps = j.problem == Problem::kDependencyFailed ||
                    j.problem == Problem::kDependencyRejected;
  d.verdict = Verdict::kReject;
  d.reason = deps ? Reason::kDependencyFailed : Reason::kNeverFits;
  d.problem = j.problem;
  if (j.problem == Problem::kInvalidResources ||
      j.problem == Problem::kExceedsBudget) {
    if (j.memory_bytes <= 0 || j.memory_bytes > b.memory_bytes) {
      d.dimension = Dimension::kMemory;
      d.needed = j.memory_bytes;
      d.capacity = b.memory_bytes;
    } else if (j.cpu_millis <= 0 || j.cpu_millis > b.cpu_millis) {
      d.dimension = Dimension::kCpu;
      d.needed = j.cpu_millis;
      d.capacity = b.cpu_millis;
    } else {
      d.dimension = Dimension::kWorkerSlots;
      d.needed = 1;
      d.capacity = b.max_workers;
    }
    if (j.problem == Problem::kExceedsBudget && b.max_workers > 0) {
      d.fits_memory_bytes = b.memory_bytes > 0 ? b.memory_bytes : Decision::kNoFit;
      d.fits_cpu_millis = b.cpu_millis > 0 ? b.cpu_millis : Decision::kNoFit;
    }
  } else if (j.problem == Problem::kUnknownPool) {
    d.dimension = Dimension::kPoolSlots;
    d.needed = 1;
    d.capacity = 0;
  }
}

}  // namespace

void Search(const Prepared& p, const State& state, const Budgets& budgets,
            const Policy& policy, absl::Time now,
            const std::vector<uint32_t>& order, PlanResult& out) {
  Walk search(p, state, budgets, policy, now, out);
  if (!p.nodes.empty()) out.placements.assign(order.size(), NodePlacement());
  uint32_t competing = 0;  // non-rejected decisions so far
  auto decide = [&](size_t k, uint32_t i) {
    const JobRecord& j = p.jobs[i];
    Decision& d = out.decisions.emplace_back();
    d.job = i;
    d.jobs_ahead = competing;
    if (!j.rejected()) ++competing;
    if (j.rejected()) {
      FillRejected(j, budgets, d);
      const bool node_bound = !p.nodes.empty() && j.problem == Problem::kExceedsBudget &&
                              j.memory_bytes <= budgets.memory_bytes &&
                              j.cpu_millis <= budgets.cpu_millis && budgets.max_workers > 0;
      if (node_bound) {
        search.FillNeverFitsOnNode(j, d, k);
      } else if (d.reason == Reason::kNeverFits && d.dimension != Dimension::kUnspecified &&
          d.dimension != Dimension::kPoolSlots) {
        Decision now_view;
        search.FillNow(j, d.dimension, now_view);
        d.free = now_view.free;
      }
    } else if (state.paused) {
      d.verdict = Verdict::kWait;
      d.reason = Reason::kPaused;
    } else if (j.flags & JobRecord::kFlagPoolInMaintenance) {
      d.verdict = Verdict::kWait;
      d.reason = Reason::kPoolInMaintenance;
    } else if (j.flags & JobRecord::kFlagDependenciesPending) {
      d.verdict = Verdict::kWait;
      d.reason = Reason::kWaitingForDependencies;
      auto it = std::lower_bound(
          p.pending.begin(), p.pending.end(), i,
          [](const PendingDep& a, uint32_t job) { return a.job < job; });
      for (; it != p.pending.end() && it->job == i; ++it) {
        out.pending_dependencies.push_back(
            PendingDependency{static_cast<uint32_t>(k), it->position});
      }
    } else {
      search.Decide(j, d, k);
    }
  };
  const size_t n = order.size();
  size_t k = 0;
  for (; k < n && !search.Saturated(); ++k) {
    // Ranked jobs are scattered over p.jobs: fetch ahead.
    if (k + 16 < n) __builtin_prefetch(&p.jobs[order[k + 16]]);
    decide(k, order[k]);
  }
  // Early exit: no worker slot is left and the reservation is placed, so
  // every remaining eligible job waits for a worker slot — decided from a
  // byte per job instead of its record. Same decisions as decide().
  if (k < n) {
    Decision worker_wait;
    worker_wait.verdict = Verdict::kWait;
    worker_wait.reason = Reason::kWaitingForWorkerSlot;
    worker_wait.dimension = Dimension::kWorkerSlots;
    search.FillNow(JobRecord{}, Dimension::kWorkerSlots, worker_wait);
    for (; k < n; ++k) {
      const uint32_t i = order[k];
      if (!p.plain[i] || state.paused) {
        decide(k, i);
        continue;
      }
      Decision& d = out.decisions.emplace_back(worker_wait);
      d.job = i;
      d.jobs_ahead = competing++;
    }
  }
  search.Finish();
}

void ResetResult(PlanResult& out, bool keep_names) {
  std::vector<Decision> decisions = std::move(out.decisions);
  std::vector<PendingDependency> pending = std::move(out.pending_dependencies);
  std::vector<NodePlacement> placements = std::move(out.placements);
  std::vector<std::string> workspaces, pools;
  if (keep_names) {
    workspaces = std::move(out.workspaces);
    pools = std::move(out.pools);
  }
  decisions.clear();
  pending.clear();
  placements.clear();
  out = PlanResult();
  out.decisions = std::move(decisions);
  out.pending_dependencies = std::move(pending);
  out.placements = std::move(placements);
  out.workspaces = std::move(workspaces);
  out.pools = std::move(pools);
}

}  // namespace berth::planner::internal
