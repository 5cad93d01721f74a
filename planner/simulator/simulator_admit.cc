// The simulator's admissions: Plan() at an event, or the count-only
// baseline. See simulation.h.
#include <algorithm>
#include <cstdint>
#include <utility>

#include "planner/plan/plan.h"
#include "planner/simulator/simulation.h"

namespace berth::planner::internal {

void Simulation::StartQueued(size_t i, const QueuedJob& q, absl::Time now,
                             const std::string& node) {
  RunningJob r;
  r.node = node;
  r.id = q.id;
  r.workspace = q.workspace;
  r.pool = q.pool;
  r.resources = q.resources;
  r.started_at = now;
  r.expected_duration = q.expected_duration;
  AddRunning(r, static_cast<Owner>(i));
  Start(i, now);
}

void Simulation::Watch(size_t i) {
  if (watched_[i]) return;
  watched_[i] = 1;
  watch_.push_back(i);
}

void Simulation::WatchWaiters(const std::string& id) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return;
  for (size_t i : it->second) {
    if (queue_pos_[i] >= 0) Watch(i);
  }
}

void Simulation::Dequeue(size_t k) {
  planner_.Dequeue(k);
  queue_pos_[queued_owner_[k]] = -1;
  const size_t last = queued_owner_.size() - 1;
  if (k != last) {
    queued_owner_[k] = queued_owner_[last];
    queue_pos_[queued_owner_[k]] = static_cast<int64_t>(k);
  }
  queued_owner_.pop_back();
  queued_[k] = queued_.back();
  queued_.pop_back();
}

void Simulation::SetReason(size_t i, Reason r, absl::Time now) {
  if (cur_reason_[i] == r) return;
  CloseWait(i, now);
  cur_reason_[i] = r;
  queued_[queue_pos_[i]].reason = r;
}

void Simulation::FreeByName(const std::vector<std::string>& names,
                            const std::vector<int64_t>& free, const std::vector<std::string>& mine,
                            NameMap& map, std::vector<int64_t>& out) {
  // A plan names the same pools and workspaces as the last one but for the
  // few events that add or retire one: comparing the names is cheaper than
  // searching each of `mine` among them (most of this per plan before).
  if (!map.valid || map.at.size() != mine.size() || names != map.names) {
    map.names = names;
    map.at.assign(mine.size(), -1);
    for (size_t n = 0; n < mine.size(); ++n) {
      const auto it = std::lower_bound(names.begin(), names.end(), mine[n]);
      if (it != names.end() && *it == mine[n]) map.at[n] = it - names.begin();
    }
    map.valid = true;
  }
  out.assign(mine.size() + 1, Amounts::kUnlimited);
  for (size_t n = 0; n < mine.size(); ++n) {
    if (map.at[n] >= 0) out[n + 1] = free[static_cast<size_t>(map.at[n])];
  }
}

void Simulation::SetTailReasons(const PlanResult& plan, int64_t call, absl::Time now) {
  // Whether a job not decided waits for a dependency changes only for the
  // watched ones (the others keep what the last plan that looked said).
  for (size_t i : watch_) {
    if (queue_pos_[i] < 0) continue;
    Queued& q = queued_[queue_pos_[i]];
    if (q.decided_in != call) q.pending = planner_.dependency_pending(queue_pos_[i]);
  }
  FreeByName(plan.pools, plan.pool_free_after, capped_pools_, pool_map_, pool_free_);
  FreeByName(plan.workspaces, plan.workspace_free_after, workspaces_, workspace_map_,
             workspace_free_);
  // TailReason reads only whether a pool or workspace has a slot free.
  for (int64_t& f : pool_free_) f = std::min<int64_t>(f, 1);
  for (int64_t& f : workspace_free_) f = std::min<int64_t>(f, 1);
  const Amounts& free = plan.free_after;
  auto set = [&](size_t k) {
    Queued& q = queued_[k];
    if (q.decided_in == call) return;
    const Reason r = q.pending ? Reason::kWaitingForDependencies
                               : IncrementalPlanner::TailReason(free, pool_free_[q.pool],
                                                                workspace_free_[q.workspace],
                                                                q.memory, q.cpu);
    if (r == q.reason) return;
    // Applied after the sweep, the rows prefetched here: a job's wait
    // totals are a cache miss each close would otherwise wait for in turn.
    const size_t i = queued_owner_[k];
    const Quarters* row = &reason_time_[i * kReasonCount];
    __builtin_prefetch(&cur_since_[i]);
    __builtin_prefetch(row + kMainSlot);
    __builtin_prefetch(row + static_cast<int>(q.reason));
    changes_.push_back({i, r});
  };
  changes_.clear();
  // A tail reason is a function of what is free (as TailReason reads it)
  // and of the job. With the same free amounts as at the last sweep, only a
  // job that sweep did not give its reason to (the last plan decided it) or
  // whose dependencies' status may have changed (watched) can take another.
  const bool same = swept_ && (free.worker_slots < 1
                                   ? swept_free_.worker_slots < 1
                                   : swept_free_.worker_slots >= 1 &&
                                         free.memory_bytes == swept_free_.memory_bytes &&
                                         free.cpu_millis == swept_free_.cpu_millis &&
                                         pool_free_ == swept_pool_free_ &&
                                         workspace_free_ == swept_workspace_free_);
  // With a worker slot free before and after and the same pools' and
  // workspaces' slots, only free memory or cpu changed: a job's reason can
  // change only if its memory (or cpu) lies between the old and new free
  // amounts, found in the queue sorted by memory and by cpu.
  const bool ranged = !same && swept_ && free.worker_slots >= 1 &&
                      swept_free_.worker_slots >= 1 && pool_free_ == swept_pool_free_ &&
                      workspace_free_ == swept_workspace_free_;
  if (joined_.size() > 64 + queued_.size() / 16) SortQueue();
  auto visit = [&](size_t i) {
    if (queue_pos_[i] >= 0) set(static_cast<size_t>(queue_pos_[i]));
  };
  if (same || ranged) {
    for (size_t i : prev_decided_) visit(i);
    for (size_t i : watch_) visit(i);
  }
  if (ranged) {
    for (size_t i : joined_) visit(i);
    auto between = [&](const std::vector<std::pair<int64_t, size_t>>& sorted, int64_t a,
                       int64_t b) {
      if (a == b) return;
      auto above = [](int64_t v, const std::pair<int64_t, size_t>& e) { return v < e.first; };
      const auto first = std::upper_bound(sorted.begin(), sorted.end(), std::min(a, b), above);
      const auto last = std::upper_bound(first, sorted.end(), std::max(a, b), above);
      for (auto it = first; it != last; ++it) visit(it->second);
    };
    between(by_memory_, swept_free_.memory_bytes, free.memory_bytes);
    between(by_cpu_, swept_free_.cpu_millis, free.cpu_millis);
  } else if (!same) {
    for (size_t k = 0; k < queued_.size(); ++k) set(k);
  }
  for (const auto& [i, r] : changes_) SetReason(i, r, now);
  swept_ = true;
  swept_free_ = free;
  swept_pool_free_ = pool_free_;
  swept_workspace_free_ = workspace_free_;
}

void Simulation::SortQueue() {
  by_memory_.clear();
  by_cpu_.clear();
  for (size_t k = 0; k < queued_.size(); ++k) {
    by_memory_.emplace_back(queued_[k].memory, queued_owner_[k]);
    by_cpu_.emplace_back(queued_[k].cpu, queued_owner_[k]);
  }
  std::sort(by_memory_.begin(), by_memory_.end());
  std::sort(by_cpu_.begin(), by_cpu_.end());
  joined_.clear();
}

void Simulation::PlanAndApply(absl::Time now) {
  // One call: Plan() rejects a whole failed chain (kDependencyFailed, then
  // kDependencyRejected for the jobs behind it) in one pass.
  if (queued_owner_.empty()) return;
  PlanResult& plan = plan_;
  // Incremental (planner/plan/incremental.h): the decisions cover the
  // ranked prefix the walk decided until nothing more could be admitted;
  // every other queued job waits for its dependencies or for what the
  // walk left free (SetTailReasons).
  planner_.Plan(in_.budgets, opt_.policy, now,
                opt_.on_plan ? IncrementalPlanner::Detail::kWhole
                             : IncrementalPlanner::Detail::kPrefixFree,
                plan);
  const bool whole = planner_.last_was_whole_queue();
  ++result_.plan_calls;
  const int64_t call = result_.plan_calls;
  if (opt_.on_plan) opt_.on_plan(planner_.state(), plan);
  // The holder and its first promise, passed to the next plan as the
  // executor does.
  planner_.Carry(plan);
  if (plan.reserved_decision >= 0) {
    const uint32_t job = plan.decisions[plan.reserved_decision].job;
    SimJobResult& held = result_.jobs[queued_owner_[job]];
    if (held.first_promise == absl::InfiniteFuture()) {
      held.first_promise = plan.reservation_start;
      held.first_promised_at = now;
    }
  }
  std::vector<uint32_t> leave;
  for (size_t k = 0; k < plan.decisions.size(); ++k) {
    const Decision& d = plan.decisions[k];
    size_t i = queued_owner_[d.job];
    queued_[d.job].decided_in = call;
    switch (d.verdict) {
      case Verdict::kAdmit: {
        CloseWait(i, now);
        cur_reason_[i] = Reason::kUnspecified;
        const int32_t node = k < plan.placements.size() ? plan.placements[k].node : -1;
        StartQueued(i, planner_.state().queued[d.job], now,
                    node >= 0 ? plan.nodes[node] : std::string());
        leave.push_back(d.job);
        break;
      }
      case Verdict::kReject: {
        bool dep = d.reason == Reason::kDependencyFailed;
        Leave(i, now, dep ? SimOutcome::kDependencyFailed : SimOutcome::kRejected,
              d.problem);
        if (d.reason == Reason::kNeverFits) result_.never_fits.push_back(i);
        leave.push_back(d.job);
        break;
      }
      default:
        decided_.push_back(i);
        SetReason(i, d.reason, now);
        queued_[d.job].pending = d.reason == Reason::kWaitingForDependencies;
        break;
    }
  }
  if (!whole) SetTailReasons(plan, call, now);
  // A whole plan gives every job its reason: the next sweep is whole too.
  if (whole) swept_ = false;
  std::swap(prev_decided_, decided_);
  decided_.clear();
  for (size_t i : watch_) watched_[i] = 0;
  watch_.clear();
  std::sort(leave.rbegin(), leave.rend());
  for (uint32_t k : leave) Dequeue(k);
  // A whole plan (a fallback) may say another reason than
  // WAITING_FOR_DEPENDENCIES of a job that waits for one (paused, a pool in
  // maintenance): the next incremental plan asks the planner for every job.
  if (whole) {
    for (size_t i : queued_owner_) Watch(i);
  }
}

void Simulation::BaselineAdmit(absl::Time now) {
  // FIFO: baseline_queue_ is in arrival order; skip jobs whose
  // dependencies are not done; admit while fewer than N run.
  size_t w = 0;
  for (size_t k = 0; k < baseline_queue_.size(); ++k) {
    size_t i = baseline_queue_[k];
    const QueuedJob& q = in_.jobs[i].job;
    bool ready = true, failed = false;
    for (const std::string& d : q.depends_on) {
      auto it = state_.finished.find(d);
      if (it == state_.finished.end()) {
        ready = false;
      } else if (it->second == DependencyOutcome::kFailed) {
        failed = true;
      }
    }
    if (failed) {
      Leave(i, now, SimOutcome::kDependencyFailed, Problem::kDependencyFailed);
      continue;
    }
    if (ready && static_cast<int64_t>(state_.running.size()) < baseline_limit_) {
      StartQueued(i, q, now);
      continue;
    }
    baseline_queue_[w++] = i;
  }
  baseline_queue_.resize(w);
}

}  // namespace berth::planner::internal
