// The planner's index upkeep apart from the events (incremental_index.h):
// the name tables, and what sends a plan to the whole-queue planner
// (duplicate ids, static problems, dependency problems and cycles), and
// the orders built on demand (the fifo order, the fit and share indexes).
#include "planner/plan/incremental_index.h"

#include <algorithm>
#include <string>
#include <vector>

#include "planner/ranking/created_sort.h"

namespace berth::planner {

uint32_t NameTable::Ref(absl::string_view name) {
  auto it = ids_.find(name);
  uint32_t id;
  if (it == ids_.end()) {
    id = static_cast<uint32_t>(names_.size());
    names_.emplace_back(name);
    refs_.push_back(0);
    rank_.push_back(0);
    ids_.emplace(std::string(name), id);
  } else {
    id = it->second;
  }
  if (refs_[id]++ == 0) changed_ = true;
  return id;
}

void NameTable::Unref(uint32_t id) {
  if (--refs_[id] == 0) changed_ = true;
}

int64_t NameTable::Find(absl::string_view name) const {
  auto it = ids_.find(name);
  return it == ids_.end() ? -1 : static_cast<int64_t>(it->second);
}

void NameTable::Refresh() {
  if (!changed_) return;
  changed_ = false;
  ++generation_;
  std::vector<uint32_t> live;
  for (uint32_t id = 0; id < refs_.size(); ++id) {
    if (refs_[id] > 0) live.push_back(id);
  }
  std::sort(live.begin(), live.end(),
            [this](uint32_t a, uint32_t b) { return names_[a] < names_[b]; });
  sorted_.clear();
  for (uint32_t r = 0; r < live.size(); ++r) {
    rank_[live[r]] = r;
    sorted_.push_back(names_[live[r]]);
  }
}

bool IncrementalPlanner::Index::Duplicate(const std::string& id,
                                          const State& state) const {
  auto q = queued_ids.find(id);
  if (q == queued_ids.end()) return false;
  if (q->count > 1) return true;
  auto r = running_count.find(id);
  return (r != running_count.end() && r->second > 0) || state.finished.contains(id);
}

bool IncrementalPlanner::Index::StaticProblem(const QueuedJob& q) const {
  if (q.resources.memory_bytes <= 0 || q.resources.cpu_millis <= 0) return true;
  if (q.pool != kDefaultPool && !classified.pool_max_workers.contains(q.pool)) return true;
  return q.resources.memory_bytes > classified.memory_bytes ||
         q.resources.cpu_millis > classified.cpu_millis || classified.max_workers <= 0;
}

void IncrementalPlanner::Index::Classify(const Budgets& budgets, const State& state) {
  if (classified_valid && budgets.memory_bytes == classified.memory_bytes &&
      budgets.cpu_millis == classified.cpu_millis &&
      budgets.max_workers == classified.max_workers &&
      budgets.pool_max_workers == classified.pool_max_workers) {
    return;
  }
  classified = budgets;
  classified.nodes.clear();
  classified_valid = true;
  static_problems = 0;
  for (uint32_t h : handle_of) {
    Entry& e = entries[h];
    e.static_problem = StaticProblem(state.queued[e.pos]);
    static_problems += e.static_problem;
  }
}

IncrementalPlanner::Index::Dependency IncrementalPlanner::Index::StatusOf(
    const std::string& id, const State& state) const {
  if (queued_ids.contains(id)) return Dependency::kPending;
  if (auto r = running_count.find(id); r != running_count.end() && r->second > 0)
    return Dependency::kPending;
  if (auto f = state.finished.find(id); f != state.finished.end())
    return f->second == DependencyOutcome::kSucceeded ? Dependency::kMet : Dependency::kFailed;
  return Dependency::kUnknown;
}

void IncrementalPlanner::Index::Recheck(uint32_t h, const State& state) {
  Entry& e = entries[h];
  const bool had = e.bad_deps > 0;
  e.waiting = e.bad_deps = 0;
  for (const std::string& d : state.queued[e.pos].depends_on) {
    switch (StatusOf(d, state)) {
      case Dependency::kPending: ++e.waiting; break;
      case Dependency::kMet: break;
      case Dependency::kFailed:
      case Dependency::kUnknown: ++e.bad_deps; break;
    }
  }
  if (e.bad_deps > 0 && !had) {
    bad_dep_jobs.insert(h);
  } else if (e.bad_deps == 0 && had) {
    bad_dep_jobs.erase(h);
  }
  fit.SetWaiting(h, e.waiting > 0);
  share.SetWaiting(h, e.priority, e.waiting > 0);
}

bool IncrementalPlanner::Index::DependencyRejections(const State& state,
                                                     std::vector<uint8_t>& marks,
                                                     std::vector<uint32_t>& jobs) const {
  jobs.clear();
  if (marks.size() < entries.size()) marks.resize(entries.size(), 0);
  for (const uint32_t h : bad_dep_jobs) {
    for (const std::string& d : state.queued[entries[h].pos].depends_on) {
      if (StatusOf(d, state) == Dependency::kUnknown) return false;
    }
    marks[h] = static_cast<uint8_t>(Problem::kDependencyFailed);
    jobs.push_back(h);
  }
  // Those behind them, breadth first (a job with a failed dependency of its
  // own is already marked: that problem comes first in Plan()).
  for (size_t i = 0; i < jobs.size(); ++i) {
    const auto it = dependants.find(entries[jobs[i]].id);
    if (it == dependants.end()) continue;
    for (const uint32_t d : it->second) {
      if (marks[d] != 0) continue;
      marks[d] = static_cast<uint8_t>(Problem::kDependencyRejected);
      jobs.push_back(d);
    }
  }
  return true;
}

void IncrementalPlanner::Index::RecheckDependants(const std::string& id,
                                                  const State& state) {
  auto it = dependants.find(id);
  if (it == dependants.end()) return;
  for (uint32_t h : it->second) Recheck(h, state);
}

void IncrementalPlanner::Index::RecheckJoined(const std::string& id, uint32_t h,
                                              const State& state) {
  RecheckDependants(id, state);
  if (!state.queued[entries[h].pos].depends_on.empty() && dependants.contains(id) &&
      CycleThrough(h, state))
    cycle_suspect = true;
}

bool IncrementalPlanner::Index::CycleThrough(uint32_t start, const State& state) const {
  // Depth-first over queued dependencies from `start`, looking for `start`.
  absl::flat_hash_map<uint32_t, bool> seen;
  std::vector<uint32_t> stack = {start};
  while (!stack.empty()) {
    const uint32_t h = stack.back();
    stack.pop_back();
    for (const std::string& d : state.queued[entries[h].pos].depends_on) {
      auto q = queued_ids.find(d);
      if (q == queued_ids.end()) continue;
      const uint32_t next = q->handle;
      if (next == start) return true;
      if (seen.emplace(next, true).second) stack.push_back(next);
    }
  }
  return false;
}

bool IncrementalPlanner::Index::HasCycle(const State& state) const {
  for (uint32_t h : handle_of) {
    if (!state.queued[entries[h].pos].depends_on.empty() && CycleThrough(h, state))
      return true;
  }
  return false;
}

void IncrementalPlanner::Index::RebuildShares(int64_t default_ns, double inv_mem, double inv_cpu) {
  share.Reset(handle_of.size(), default_ns, inv_mem, inv_cpu);
  for (const auto& [priority, level] : levels) {
    for (const auto& [ws, set] : level.by_workspace) {
      share.StartRun(priority, ws);
      for (const RankKey& key : set) {
        const Entry& e = entries[key.handle];
        share.Append(key.handle, e.memory, e.cpu, e.duration, e.since);
        if (e.waiting > 0) share.SetWaiting(key.handle, priority, true);
      }
    }
    AppendAged(priority, level);
  }
  share.Finish();
}

void IncrementalPlanner::Index::AppendAged(int32_t priority, const Level& level) {
  for (const RankKey& key : level.aged) {
    const Entry& e = entries[key.handle];
    share.AppendAged(priority, key.handle, e.memory, e.cpu, e.duration);
    if (e.waiting > 0) share.SetWaiting(key.handle, priority, true);
  }
}

void IncrementalPlanner::Index::RebuildAged(int32_t priority) {
  share.ResetAged(priority);
  if (const auto level = levels.find(priority); level != levels.end())
    AppendAged(priority, level->second);
}

void IncrementalPlanner::Index::KeepFifo() {
  if (fifo_kept) return;
  fifo_kept = true;
  const std::vector<uint32_t> order = internal::CreationOrder(
      handle_of.size(), [this](size_t i) { return entries[handle_of[i]].created; },
      [this](size_t i) -> const std::string& { return entries[handle_of[i]].id; });
  for (const uint32_t i : order) {
    const uint32_t h = handle_of[i];
    const Entry& e = entries[h];
    const RankKey key{e.created, &e.id, h, e.since};
    fifo.insert(fifo.end(), key);
    RankSet& all = levels.find(e.priority)->second.all;
    all.insert(all.end(), key);
  }
  fit.Invalidate();
}

void IncrementalPlanner::Index::RefreshFit(int64_t default_ns) {
  KeepFifo();
  if (!fit.stale() && fit.default_duration() == default_ns) return;
  fit.Reset(default_ns);
  for (const RankKey& key : fifo) {
    const Entry& e = entries[key.handle];
    fit.Append(key.handle, e.memory, e.cpu, e.duration);
    if (e.waiting > 0) fit.SetWaiting(key.handle, true);
  }
}

}  // namespace berth::planner
