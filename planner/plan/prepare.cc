#include "planner/plan/prepare.h"

#include <algorithm>
#include <memory>
#include <numeric>

#include "planner/plan/dependencies.h"
#include "planner/plan/fast_hash.h"
#include "planner/plan/id_index.h"
#include "planner/model/saturating.h"

namespace berth::planner::internal {
namespace {

// Interns names; Finish() renumbers them by sorted name so that the numbers
// do not depend on the order they were seen in. Open addressing with a fast
// hash: called twice per queued job.
class Interner {
 public:
  Interner() : slots_(16, kEmpty), mask_(15) {}

  uint32_t Add(absl::string_view name) {
    if (!names_.empty() && SameString(name, last_name_)) return last_id_;
    const uint64_t h = FastHash(name);
    size_t s = h & mask_;
    while (true) {
      const uint32_t id = slots_[s];
      if (id == kEmpty) break;
      if (SameString(names_[id], name)) {
        last_name_ = name;
        last_id_ = id;
        return id;
      }
      s = (s + 1) & mask_;
    }
    const uint32_t id = static_cast<uint32_t>(names_.size());
    names_.push_back(name);
    slots_[s] = id;
    if (names_.size() * 2 > slots_.size()) Grow();
    last_name_ = name;
    last_id_ = id;
    return id;
  }

  // Returns old id -> rank and the sorted names.
  std::vector<uint32_t> Finish(std::vector<absl::string_view>& sorted) {
    std::vector<uint32_t> by_rank(names_.size());
    std::iota(by_rank.begin(), by_rank.end(), 0);
    std::sort(by_rank.begin(), by_rank.end(),
              [&](uint32_t a, uint32_t b) { return names_[a] < names_[b]; });
    std::vector<uint32_t> rank(names_.size());
    sorted.resize(names_.size());
    for (uint32_t r = 0; r < by_rank.size(); ++r) {
      rank[by_rank[r]] = r;
      sorted[r] = names_[by_rank[r]];
    }
    return rank;
  }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;

  void Grow() {
    slots_.assign(slots_.size() * 2, kEmpty);
    mask_ = slots_.size() - 1;
    for (uint32_t id = 0; id < names_.size(); ++id) {
      size_t s = FastHash(names_[id]) & mask_;
      while (slots_[s] != kEmpty) s = (s + 1) & mask_;
      slots_[s] = id;
    }
  }

  std::vector<uint32_t> slots_;
  size_t mask_;
  std::vector<absl::string_view> names_;
  absl::string_view last_name_;
  uint32_t last_id_ = 0;
};

}  // namespace

int64_t DurationNanos(absl::Duration d, absl::Duration fallback) {
  if (d <= absl::ZeroDuration()) d = fallback;
  if (d <= absl::ZeroDuration()) d = absl::Hours(1);
  const int64_t ns = absl::ToInt64Nanoseconds(d);  // saturates
  return ns < 1 ? 1 : ns;
}

absl::Time ExpectedEnd(absl::Time started, absl::Duration estimate,
                       absl::Time now) {
  if (estimate <= absl::ZeroDuration()) estimate = absl::Nanoseconds(1);
  absl::Time end = started + estimate;
  // Doubling: at most ~64 steps before the duration saturates.
  while (end <= now) {
    if (estimate >= absl::Hours(24 * 365 * 1000)) return absl::InfiniteFuture();
    estimate *= 2;
    end = started + estimate;
  }
  return end;
}

absl::Time WaitingSince(const QueuedJob& job) {
  return job.queued_at > absl::UnixEpoch() ? job.queued_at : job.created_at;
}

int32_t AgedPriority(int32_t priority, absl::Time since, absl::Time now,
                     absl::Duration interval, int32_t ceiling) {
  if (interval <= absl::ZeroDuration() || priority >= ceiling ||
      since >= now || since <= absl::UnixEpoch()) {
    return priority;
  }
  const int64_t steps = (now - since) / interval;  // saturates
  const int64_t room = static_cast<int64_t>(ceiling) - priority;  // > 0
  return steps >= room ? ceiling : static_cast<int32_t>(priority + steps);
}

void Prepare(const State& state, const Budgets& budgets,
             const Policy& policy, absl::Time now,
             ScratchBuffers& scratch, Prepared& out) {
  const absl::Duration default_duration = policy.default_duration;
  const size_t n = state.queued.size();
  Interner workspaces, pools;
  pools.Add(kDefaultPool);

  // What the search needs of a pool, by raw interned id.
  struct PoolInfo {
    bool known;
    bool maintenance;
    int64_t capacity;
    uint32_t node_group;
  };
  out.nodes.Build(budgets.nodes);
  const bool with_nodes = !out.nodes.empty();
  std::vector<PoolInfo> pool_info;
  auto add_pool = [&](absl::string_view name) {
    const uint32_t id = pools.Add(name);
    if (id == pool_info.size()) {
      PoolInfo info{name == kDefaultPool, false, Amounts::kUnlimited,
                    with_nodes ? out.nodes.GroupOf(name) : 0};
      if (auto it = budgets.pool_max_workers.find(name);
          it != budgets.pool_max_workers.end()) {
        info.known = true;
        if (it->second > 0) info.capacity = it->second;
      }
      info.maintenance = state.pools_in_maintenance.contains(name);
      pool_info.push_back(info);
    }
    return id;
  };
  add_pool(kDefaultPool);

  // Running jobs: raw interned ids first.
  std::vector<uint32_t> run_ws(state.running.size()), run_pool(state.running.size());
  for (size_t i = 0; i < state.running.size(); ++i) {
    run_ws[i] = workspaces.Add(state.running[i].workspace);
    run_pool[i] = add_pool(state.running[i].pool);
  }

  // Queued jobs, one pass: records with raw interned ids, every problem but
  // duplicate ids, the ids' hashes.
  out.jobs.clear();
  out.jobs.reserve(n);
  out.plain.resize(n);
  // One borrowed buffer: n hashes, then the id table's slots.
  const size_t id_slots = IdIndex::CapacityFor(n);
  static_assert(sizeof(IdIndex::Slot) == sizeof(uint64_t));
  uint64_t* const hashes = scratch.Get<uint64_t>(0, n + id_slots);
  IdIndex::Slot* const slot_memory =
      reinterpret_cast<IdIndex::Slot*>(hashes + n);
  int32_t min_prio = n > 0 ? state.queued[0].priority : 0;
  int32_t max_prio = min_prio;
  // The highest priority of a job that fits the budgets (aging's ceiling).
  int32_t ceiling = INT32_MIN;
  const int64_t max_workers = budgets.max_workers;
  std::vector<uint32_t> with_dependencies;
  for (size_t i = 0; i < n; ++i) {
    const QueuedJob& q = state.queued[i];
    if (!q.depends_on.empty()) with_dependencies.push_back(static_cast<uint32_t>(i));
    hashes[i] = IdIndex::Hash(q.id);
    JobRecord& r = out.jobs.emplace_back();
    r.memory_bytes = q.resources.memory_bytes;
    r.cpu_millis = q.resources.cpu_millis;
    r.created_ns = absl::ToUnixNanos(q.created_at);  // saturates
    r.waiting_since_ns = q.queued_at > absl::UnixEpoch()
                             ? absl::ToUnixNanos(q.queued_at)
                             : r.created_ns;
    r.duration_ns = DurationNanos(q.expected_duration, default_duration);
    r.priority = q.priority;
    r.aged_levels = 0;
    min_prio = std::min(min_prio, q.priority);
    max_prio = std::max(max_prio, q.priority);
    r.workspace = workspaces.Add(q.workspace);
    r.pool = add_pool(q.pool);
    const PoolInfo& pool = pool_info[r.pool];
    r.flags = (q.depends_on.empty() ? 0 : JobRecord::kFlagHasDependencies) |
              (pool.maintenance ? JobRecord::kFlagPoolInMaintenance : 0);
    // In precedence order (duplicate ids, found below, come first).
    if (r.memory_bytes <= 0 || r.cpu_millis <= 0) {
      r.problem = Problem::kInvalidResources;
    } else if (!pool.known) {
      r.problem = Problem::kUnknownPool;
    } else if (r.memory_bytes > budgets.memory_bytes ||
               r.cpu_millis > budgets.cpu_millis || max_workers <= 0 ||
               (with_nodes && !out.nodes.FitsSomeNode(pool.node_group, r.memory_bytes,
                                                      r.cpu_millis))) {
      r.problem = Problem::kExceedsBudget;
    } else {
      r.problem = Problem::kNone;
      ceiling = std::max(ceiling, q.priority);
    }
    out.plain[i] = r.problem == Problem::kNone && r.flags == 0;
  }
  // Aging: every job below the ceiling rises with its wait since it was
  // queued (WaitingSince(); jobs without either time, at or before the Unix
  // epoch, do not age). Effective
  // priorities stay within [min_prio, max_prio].
  out.queued_top = ceiling;
  out.aging_ceiling = ceiling == INT32_MIN ? max_prio : ceiling;
  if (policy.aging_interval > absl::ZeroDuration() &&
      policy.aging_top_memory > absl::ZeroDuration() &&
      state.top_priority > out.aging_ceiling &&
      now - state.top_priority_seen <= policy.aging_top_memory) {
    out.aging_ceiling = state.top_priority;  // remembered (State::top_priority)
  }
  if (policy.aging_interval > absl::ZeroDuration() && min_prio < out.aging_ceiling) {
    // Same as AgedPriority(), on the records' nanoseconds (one sequential
    // pass, no QueuedJob reads).
    const int64_t now_ns = absl::ToUnixNanos(now);  // saturates
    const uint64_t step =
        static_cast<uint64_t>(std::max<int64_t>(1, absl::ToInt64Nanoseconds(policy.aging_interval)));
    const int32_t ceil = out.aging_ceiling;
    for (JobRecord& r : out.jobs) {
      if (r.priority >= ceil || r.waiting_since_ns >= now_ns || r.waiting_since_ns <= 0) continue;
      const uint64_t waited =
          static_cast<uint64_t>(now_ns) - static_cast<uint64_t>(r.waiting_since_ns);
      const uint64_t room = static_cast<uint64_t>(static_cast<int64_t>(ceil) - r.priority);
      const uint64_t steps = std::min(room, waited / step);
      if (steps == 0) continue;
      r.priority = static_cast<int32_t>(r.priority + static_cast<int64_t>(steps));
      r.aged_levels = static_cast<uint16_t>(std::min<uint64_t>(steps, UINT16_MAX));
    }
  }

  out.min_priority = min_prio;
  // Aged jobs may reach a remembered top above every queued priority.
  out.max_priority = std::max(max_prio, out.aging_ceiling);
  const std::vector<uint32_t> ws_rank = workspaces.Finish(out.workspaces);
  const std::vector<uint32_t> pool_rank = pools.Finish(out.pools);
  const size_t num_pools = out.pools.size();
  out.pool_capacity.assign(num_pools, Amounts::kUnlimited);
  out.pool_group.assign(num_pools, 0);
  for (size_t raw = 0; raw < num_pools; ++raw) {
    out.pool_capacity[pool_rank[raw]] = pool_info[raw].capacity;
    out.pool_group[pool_rank[raw]] = pool_info[raw].node_group;
  }

  // Running usage and timeline.
  PrepareRunningUse(
      state, default_duration, now, [&](size_t i) { return ws_rank[run_ws[i]]; },
      [&](size_t i) { return pool_rank[run_pool[i]]; },
      [&](size_t i, int64_t mem, int64_t cpu, absl::Time end) {
        if (!with_nodes) return;
        if (const int32_t node = out.nodes.Find(state.running[i].node); node >= 0)
          out.nodes.AddRunning(static_cast<uint32_t>(node), mem, cpu, end);
      },
      out);

  // Names renumbered by rank, so numbering is independent of input order.
  const bool identity_ws = std::is_sorted(ws_rank.begin(), ws_rank.end());
  const bool identity_pool = std::is_sorted(pool_rank.begin(), pool_rank.end());
  if (!identity_ws || !identity_pool) {
    for (JobRecord& r : out.jobs) {
      r.workspace = ws_rank[r.workspace];
      r.pool = pool_rank[r.pool];
    }
  }

  // Duplicate ids: among queued jobs, and against running / finished ones.
  // Build() lists every copy of an id repeated among queued jobs; an id
  // shared with a running or finished job has a single queued copy.
  IdIndex index;
  std::vector<uint32_t> duplicates;
  auto get_id = [&state](uint32_t i) -> absl::string_view {
    return state.queued[i].id;
  };
  index.Build(n, hashes, get_id, duplicates, slot_memory);
  for (const RunningJob& r : state.running) {
    if (uint32_t q = index.Find(r.id, get_id); q != IdIndex::kNotFound)
      duplicates.push_back(q);
  }
  for (const auto& [id, outcome] : state.finished) {
    if (uint32_t q = index.Find(id, get_id); q != IdIndex::kNotFound)
      duplicates.push_back(q);
  }
  for (uint32_t i : duplicates) {
    out.jobs[i].problem = Problem::kDuplicateId;
    out.plain[i] = 0;
  }
  out.holder = -1;
  if (!state.reservation_holder.empty()) {
    const uint32_t h = index.Find(state.reservation_holder, get_id);
    if (h != IdIndex::kNotFound && !out.jobs[h].rejected()) out.holder = h;
  }

  ResolveDependencies(state, index, with_dependencies, out.jobs, out.pending);
  for (uint32_t i : with_dependencies) {
    const JobRecord& r = out.jobs[i];
    out.plain[i] = !r.rejected() &&
                   !(r.flags & (JobRecord::kFlagPoolInMaintenance |
                                JobRecord::kFlagDependenciesPending));
  }
}

}  // namespace berth::planner::internal
