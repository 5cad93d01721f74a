// The IncrementalPlanner's events (incremental.h): what each does to the
// index; the index's own upkeep is in incremental_index.cc, the plans in
// incremental_plan.cc.
#include "planner/plan/incremental.h"

#include <algorithm>
#include <iterator>
#include <numeric>
#include <utility>

#include "absl/hash/hash.h"
#include "planner/plan/incremental_index.h"
#include "planner/plan/prepare.h"
#include "planner/ranking/created_sort.h"

namespace berth::planner {
namespace {

// An expected duration in ns as the index keeps it: 0 if unknown.
int64_t KnownDuration(absl::Duration d) {
  return d <= absl::ZeroDuration() ? 0 : std::max<int64_t>(1, absl::ToInt64Nanoseconds(d));
}

}  // namespace

IncrementalPlanner::IncrementalPlanner()
    : index_(std::make_unique<Index>()), prepared_(std::make_unique<internal::Prepared>()) {
  index_->pools.Ref(kDefaultPool);  // always known, always numbered
}

IncrementalPlanner::~IncrementalPlanner() = default;

void IncrementalPlanner::SetControls(const State& from) {
  state_.paused = from.paused;
  state_.pause_reason = from.pause_reason;
  state_.pools_in_maintenance = from.pools_in_maintenance;
  state_.maintenance_reasons = from.maintenance_reasons;
  state_.reservation_holder = from.reservation_holder;
  state_.reservation_promised = from.reservation_promised;
  state_.workspace_turns = from.workspace_turns;
  turns_within_ = false;
  state_.top_priority = from.top_priority;
  state_.top_priority_seen = from.top_priority_seen;
}

void IncrementalPlanner::Reserve(size_t jobs) {
  Index& x = *index_;
  const size_t n = state_.queued.size() + jobs;
  state_.queued.reserve(n);
  x.handle_of.reserve(n);
  x.queued_ids.reserve(n);
}

void IncrementalPlanner::Enqueue(QueuedJob job) {
  Index& x = *index_;
  x.memory.Insert(job.resources.memory_bytes);
  x.cpu.Insert(job.resources.cpu_millis);
  if (const int64_t d = KnownDuration(job.expected_duration); d > 0) {
    x.duration.Insert(d);
  } else {
    ++x.unknown_durations;
  }
  state_.queued.push_back(std::move(job));
  AddToIndex();
}

void IncrementalPlanner::EnqueueAll(const std::vector<const QueuedJob*>& jobs) {
  Reserve(jobs.size());
  const size_t first = state_.queued.size();
  for (const QueuedJob* job : jobs) {
    state_.queued.push_back(*job);
    AddToIndex(/*bulk=*/true);
  }
  AddSizes(first);
  RecheckJoined(first);
}

void IncrementalPlanner::EnqueueAll(std::vector<QueuedJob>&& jobs) {
  const std::vector<uint32_t> order = internal::CreationOrder(
      jobs.size(), [&jobs](size_t i) { return absl::ToUnixNanos(jobs[i].created_at); },
      [&jobs](size_t i) -> const std::string& { return jobs[i].id; });
  Reserve(jobs.size());
  const size_t first = state_.queued.size();
  for (uint32_t i : order) {
    state_.queued.push_back(std::move(jobs[i]));
    AddToIndex(/*bulk=*/true);
  }
  jobs.clear();
  jobs.shrink_to_fit();
  AddSizes(first);
  RecheckJoined(first);
}

void IncrementalPlanner::AddSizes(size_t first) {
  Index& x = *index_;
  // One buffer for the three, so that the peak stays one value per job.
  const size_t n = state_.queued.size() - first;
  const QueuedJob* jobs = state_.queued.data() + first;
  std::vector<int64_t> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = jobs[i].resources.memory_bytes;
  x.memory.InsertAll(values.data(), values.data() + n);
  for (size_t i = 0; i < n; ++i) values[i] = jobs[i].resources.cpu_millis;
  x.cpu.InsertAll(values.data(), values.data() + n);
  size_t known = 0;
  for (size_t i = 0; i < n; ++i) {
    if (const int64_t d = KnownDuration(jobs[i].expected_duration); d > 0) values[known++] = d;
  }
  x.duration.InsertAll(values.data(), values.data() + known);
  x.unknown_durations += static_cast<int64_t>(n - known);
}

void IncrementalPlanner::AddToIndex(bool bulk) {
  Index& x = *index_;
  const QueuedJob& q = state_.queued.back();
  uint32_t h;
  if (!x.free_handles.empty()) {
    h = x.free_handles.back();
    x.free_handles.pop_back();
  } else {
    h = static_cast<uint32_t>(x.entries.size());
    x.entries.emplace_back();
  }
  Index::Entry& e = x.entries[h];
  e = Index::Entry();
  e.id = q.id;
  e.pos = static_cast<uint32_t>(state_.queued.size() - 1);
  e.priority = q.priority;
  e.workspace = x.workspaces.Ref(q.workspace);
  e.pool = x.pools.Ref(q.pool);
  e.created = absl::ToUnixNanos(q.created_at);
  // As Prepare() dates the wait aging counts (internal::WaitingSince()).
  e.since = q.queued_at > absl::UnixEpoch() ? absl::ToUnixNanos(q.queued_at) : e.created;
  e.memory = q.resources.memory_bytes;
  e.cpu = q.resources.cpu_millis;
  e.duration = KnownDuration(q.expected_duration);
  e.live = true;
  x.undated += e.since <= 0;
  x.handle_of.push_back(h);

  const RankKey key{e.created, &e.id, h, e.since};
  Index::Level& level = x.levels[e.priority];
  // Hinted at the end: the position when jobs come in created_at order
  // (EnqueueAll's callers), else the usual search.
  level.aged.insert(level.aged.end(), key);
  e.odd = internal::WaitingSince(q) != q.created_at;
  level.odd += e.odd;
  RankSet& own = level.by_workspace[e.workspace];
  own.insert(own.end(), key);
  if (x.fifo_kept) {
    level.all.insert(level.all.end(), key);
    if (const auto it = x.fifo.insert(x.fifo.end(), key); std::next(it) == x.fifo.end()) {
      x.fit.Append(h, e.memory, e.cpu, e.duration);
    } else {
      x.fit.Invalidate();
    }
  } else {
    x.fit.Invalidate();
  }
  x.share.Invalidate();

  // The key is the handle, hashed through its entry's id (a duplicate id
  // takes the key over). One hash and probe per new id (a million-job queue's setup is mostly
  // such lookups); the empty maps are not hashed into at all.
  if (auto [it, added] = x.queued_ids.insert(Index::QueuedId{h, 1}); added) {
    // A new queued id: a duplicate now only if a running or finished job
    // carries it (Duplicate()).
    x.duplicate_ids += (!x.running_count.empty() && x.running_count.contains(e.id)) ||
                       (!state_.finished.empty() && state_.finished.contains(e.id));
  } else {
    const bool dup_before = x.Duplicate(e.id, state_);
    const uint32_t count = it->count + 1;
    x.queued_ids.erase(it);
    x.queued_ids.insert(Index::QueuedId{h, count});
    x.duplicate_ids += static_cast<int64_t>(x.Duplicate(e.id, state_)) - dup_before;
  }
  if (x.classified_valid) {
    e.static_problem = x.StaticProblem(q);
    x.static_problems += e.static_problem;
  }
  if (!q.depends_on.empty()) {
    std::vector<std::string> distinct = q.depends_on;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    for (const std::string& d : distinct) x.dependants[d].push_back(h);
    x.Recheck(h, state_);
  }
  if (x.dependants.empty() || bulk) return;
  x.RecheckJoined(e.id, h, state_);
}

void IncrementalPlanner::RecheckJoined(size_t first) {
  Index& x = *index_;
  if (x.dependants.empty()) return;
  const size_t joined = state_.queued.size() - first;
  if (x.dependants.size() >= joined) {
    for (size_t i = first; i < state_.queued.size(); ++i) {
      x.RecheckJoined(state_.queued[i].id, x.handle_of[i], state_);
    }
    return;
  }
  // Fewer ids depended on than jobs joined: each such id looked up once.
  // Rechecking a dependant whose dependency was queued before is harmless
  // (Recheck recomputes), and a cycle through jobs that joined earlier was
  // found when they joined.
  for (const auto& [id, hs] : x.dependants) {
    if (const auto q = x.queued_ids.find(id); q != x.queued_ids.end())
      x.RecheckJoined(id, q->handle, state_);
  }
}

void IncrementalPlanner::Dequeue(size_t index) {
  Index& x = *index_;
  const uint32_t h = x.handle_of[index];
  Index::Entry& e = x.entries[h];
  const RankKey key{e.created, &e.id, h, e.since};
  auto level = x.levels.find(e.priority);
  if (x.fifo_kept) {
    level->second.all.erase(key);
    x.fifo.erase(key);
  }
  level->second.aged.erase(key);
  level->second.odd -= e.odd;
  auto ws = level->second.by_workspace.find(e.workspace);
  ws->second.erase(key);
  if (ws->second.empty()) level->second.by_workspace.erase(ws);
  if (level->second.aged.empty()) x.levels.erase(level);
  x.fit.Remove(h);
  x.share.Remove(h, e.priority);
  // An aged order compacted after many removals is rebuilt alone, at once:
  // the rest of the share index stays fresh (rebuilding all of it, or
  // walking without it until then, cost a forecast more).
  if (!x.share.stale() && x.share.aged_stale(e.priority)) {
    x.RebuildAged(e.priority);
    ++aged_rebuilds_;
  }
  x.memory.Erase(state_.queued[index].resources.memory_bytes);
  x.cpu.Erase(state_.queued[index].resources.cpu_millis);
  if (const int64_t d = KnownDuration(state_.queued[index].expected_duration); d > 0) {
    x.duration.Erase(d);
  } else {
    --x.unknown_durations;
  }
  x.workspaces.Unref(e.workspace);
  x.pools.Unref(e.pool);
  x.undated -= e.since <= 0;
  x.static_problems -= e.static_problem;
  if (e.bad_deps > 0) x.bad_dep_jobs.erase(h);

  const std::string id = e.id;
  const bool dup_before = x.Duplicate(id, state_);
  if (auto q = x.queued_ids.find(id); --q->count == 0) {
    x.queued_ids.erase(q);
  } else if (q->handle == h) {
    // Another copy stays: its handle becomes the key (this entry's id,
    // which the key is hashed through, is about to be cleared).
    uint32_t other = h;
    for (uint32_t o : x.handle_of) {
      if (o != h && x.entries[o].id == id) other = o;
    }
    const Index::QueuedId kept{other, q->count};
    x.queued_ids.erase(q);
    x.queued_ids.insert(kept);
  }
  x.duplicate_ids += static_cast<int64_t>(x.Duplicate(id, state_)) - dup_before;
  for (const std::string& d : state_.queued[index].depends_on) {
    auto it = x.dependants.find(d);
    if (it == x.dependants.end()) continue;
    auto& v = it->second;
    v.erase(std::remove(v.begin(), v.end(), h), v.end());
    if (v.empty()) x.dependants.erase(it);
  }
  e.live = false;
  e.id.clear();
  x.free_handles.push_back(h);

  const size_t last = state_.queued.size() - 1;
  if (index != last) {
    state_.queued[index] = std::move(state_.queued[last]);
    x.handle_of[index] = x.handle_of[last];
    x.entries[x.handle_of[index]].pos = static_cast<uint32_t>(index);
  }
  state_.queued.pop_back();
  x.handle_of.pop_back();
  x.RecheckDependants(id, state_);
  if (x.cycle_suspect) x.cycle_suspect = x.HasCycle(state_);
}

void IncrementalPlanner::AddRunning(RunningJob job) {
  Index& x = *index_;
  x.running_meta.push_back(Index::RunningMeta{absl::Hash<absl::string_view>()(job.id),
                                              x.workspaces.Ref(job.workspace),
                                              x.pools.Ref(job.pool)});
  const bool dup_before = x.Duplicate(job.id, state_);
  ++x.running_count[job.id];
  x.duplicate_ids += static_cast<int64_t>(x.Duplicate(job.id, state_)) - dup_before;
  const std::string id = job.id;
  state_.running.push_back(std::move(job));
  x.RecheckDependants(id, state_);
}

bool IncrementalPlanner::RemoveRunning(absl::string_view id) {
  Index& x = *index_;
  // The first running job with this id (as a search of State::running).
  const size_t hash = absl::Hash<absl::string_view>()(id);
  size_t i = 0;
  while (i < x.running_meta.size() &&
         (x.running_meta[i].id_hash != hash || state_.running[i].id != id)) {
    ++i;
  }
  if (i == x.running_meta.size()) return false;
  const std::string name(id);
  x.workspaces.Unref(x.running_meta[i].workspace);
  x.pools.Unref(x.running_meta[i].pool);
  if (i + 1 != state_.running.size()) {
    state_.running[i] = std::move(state_.running.back());
    x.running_meta[i] = x.running_meta.back();
  }
  state_.running.pop_back();
  x.running_meta.pop_back();
  const bool dup_before = x.Duplicate(name, state_);
  if (--x.running_count[name] == 0) x.running_count.erase(name);
  x.duplicate_ids += static_cast<int64_t>(x.Duplicate(name, state_)) - dup_before;
  x.RecheckDependants(name, state_);
  return true;
}

void IncrementalPlanner::SetFinished(const std::string& id, DependencyOutcome outcome) {
  Index& x = *index_;
  const bool dup_before = x.Duplicate(id, state_);
  state_.finished[id] = outcome;
  x.duplicate_ids += static_cast<int64_t>(x.Duplicate(id, state_)) - dup_before;
  x.RecheckDependants(id, state_);
}

void IncrementalPlanner::ForgetFinished(const std::string& id) {
  Index& x = *index_;
  const bool dup_before = x.Duplicate(id, state_);
  state_.finished.erase(id);
  x.duplicate_ids += static_cast<int64_t>(x.Duplicate(id, state_)) - dup_before;
  x.RecheckDependants(id, state_);
}

void IncrementalPlanner::Carry(const PlanResult& prev) {
  // After a carry every remembered workspace is among prev's names (the
  // others are forgotten, an admission's is live): if this `prev` holds the
  // same names, none is to be forgotten.
  const bool known = &prev == names_out_;
  CarryReservation(state_, prev, state_,
                   /*none_forgotten=*/known && turns_within_ &&
                       turns_generation_ == names_generation_);
  turns_within_ = known;
  turns_generation_ = names_generation_;
}

int64_t IncrementalPlanner::QueuedIndexOf(absl::string_view id) const {
  auto it = index_->queued_ids.find(id);
  if (it == index_->queued_ids.end()) return -1;
  return static_cast<int64_t>(index_->entries[it->handle].pos);
}

bool IncrementalPlanner::HasQueuedDependants(absl::string_view id) const {
  return index_->dependants.contains(id);
}

bool IncrementalPlanner::dependency_pending(size_t index) const {
  const Index::Entry& e = index_->entries[index_->handle_of[index]];
  return e.waiting > 0 && e.bad_deps == 0;
}

}  // namespace berth::planner
