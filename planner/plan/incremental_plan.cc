// The IncrementalPlanner's plans (incremental.h): the preparation of
// running jobs and names (as Prepare() does it), the ranking drawn lazily
// from the index (as the "drf" and "fifo" policies rank), and the admission
// walk until it is saturated (as Search() walks).
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "planner/model/saturating.h"
#include "planner/plan/incremental.h"
#include "planner/plan/incremental_index.h"
#include "planner/plan/prepare.h"
#include "planner/plan/walk.h"
#include "planner/ranking/ranking.h"

namespace berth::planner {
namespace {

using internal::SatAdd;

// Beyond this many distinct queued priorities, finding the next aged band
// costs more than the whole-queue planner saves.
constexpr size_t kMaxLevels = 64;

const std::string kEmptyId;

int64_t DurationNanos(absl::Duration d, absl::Duration fallback) {
  if (d <= absl::ZeroDuration()) d = fallback;
  if (d <= absl::ZeroDuration()) d = absl::Hours(1);
  const int64_t ns = absl::ToInt64Nanoseconds(d);
  return ns < 1 ? 1 : ns;
}

int64_t SatMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return (a < 0) != (b < 0) ? internal::kInt64Min
                                                                   : internal::kInt64Max;
  return r;
}

// As the "drf" ranking (ranking_drf.cc) orders workspaces.
uint32_t ShareBits(double share) {
  const float f = static_cast<float>(share);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

uint64_t Salt(int64_t created_ns, uint32_t workspace) {
  uint64_t x = static_cast<uint64_t>(created_ns) * 0x9E3779B97F4A7C15ull ^
               (uint64_t{workspace} + 0x632BE59BD9B4E019ull);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return x;
}

float Weight(int64_t v, double inv) {
  return v > 0 ? static_cast<float>(static_cast<double>(v) * inv) : 0.0f;
}

// The ranking, one job at a time.
class RankStream {
 public:
  using Index = IncrementalPlanner::Index;

  RankStream(const Index& x, bool drf, bool aging, int64_t now_ns, int64_t step,
             int32_t ceiling, int32_t top, const std::vector<double>& mem,
             const std::vector<double>& cpu, const std::vector<uint64_t>& turns,
             const Budgets& b, const State& state)
      : x_(x), drf_(drf), aging_(aging), now_(now_ns), step_(step), ceiling_(ceiling),
        mem_(mem), cpu_(cpu), turns_(turns), state_(state) {
    inv_mem_ = b.memory_bytes > 0 ? 1.0 / static_cast<double>(b.memory_bytes) : 0.0;
    inv_cpu_ = b.cpu_millis > 0 ? 1.0 / static_cast<double>(b.cpu_millis) : 0.0;
    fifo_ = x.fifo.begin();
    level_ = static_cast<int64_t>(top) + 1;
  }

  // The next job's handle; false when every job has been drawn.
  bool Next(uint32_t& h) {
    if (!drf_) {
      if (fifo_ == x_.fifo.end()) return false;
      h = (fifo_++)->handle;
      return true;
    }
    while (true) {
      if (band_) {
        if (NextAged(h)) return true;
        band_ = false;
        if (!NextLevel()) return false;
        continue;
      }
      if (NextOwn(h)) return true;
      band_ = true;
      StartBand();
    }
  }

 private:
  struct Run {
    uint32_t share;
    uint32_t ws;  // rank
    int64_t created;
    uint64_t turn;
    uint64_t salt;
    RankSet::const_iterator pos, end;
  };
  static bool After(const Run& a, const Run& b) {
    if (a.share != b.share) return a.share > b.share;
    if (a.created != b.created) return a.created > b.created;
    if (a.turn != b.turn) return a.turn > b.turn;
    if (a.salt != b.salt) return a.salt > b.salt;
    return a.ws > b.ws;
  }
  struct Band {
    int64_t key;  // created + levels risen (JobRecord::aged_levels, saturated)
    RankSet::const_iterator pos, end;
    int64_t rise;
  };
  static int64_t Risen(int64_t rise) { return std::min<int64_t>(rise, UINT16_MAX); }
  static bool BandAfter(const Band& a, const Band& b) {
    if (a.key != b.key) return a.key > b.key;
    return *a.pos->id > *b.pos->id;
  }

  // The first created_at at which a job of priority p has risen fewer than
  // `levels` levels (jobs created before it have risen at least that many).
  int64_t RiseBound(int64_t levels) const {
    return SatAdd(SatSub(now_, SatMul(levels, step_)), 1);
  }
  static int64_t SatSub(int64_t a, int64_t b) { return internal::SatSub(a, b); }

  RankSet::const_iterator LowerBound(const RankSet& s, int64_t created) const {
    return s.lower_bound(RankKey{created, &kEmptyId, 0});
  }

  // Moves to the next (lower) level that has own or aged jobs.
  bool NextLevel() {
    int64_t next = INT64_MIN;
    for (const auto& [p, level] : x_.levels) {
      if (p < level_) {
        next = std::max<int64_t>(next, p);
        break;
      }
    }
    if (aging_) {
      for (const auto& [p, level] : x_.levels) {
        if (p >= ceiling_ || p + 1 >= level_) continue;
        // The first job of p below the current level.
        auto it = level_ > ceiling_ ? level.all.begin()
                                    : LowerBound(level.all, RiseBound(level_ - p));
        if (it == level.all.end() || it->created >= now_) continue;
        const int64_t steps = static_cast<int64_t>(
            (static_cast<uint64_t>(now_) - static_cast<uint64_t>(it->created)) /
            static_cast<uint64_t>(step_));
        if (steps < 1) continue;
        next = std::max<int64_t>(next, p + std::min<int64_t>(ceiling_ - p, steps));
      }
    }
    if (next == INT64_MIN) return false;
    level_ = next;
    StartOwn();
    return true;
  }

  void StartOwn() {
    heap_.clear();
    auto it = x_.levels.find(static_cast<int32_t>(level_));
    if (it == x_.levels.end()) return;
    const bool unaged_only = aging_ && level_ < ceiling_;
    for (const auto& [ws, set] : it->second.by_workspace) {
      auto pos = unaged_only ? LowerBound(set, RiseBound(1)) : set.begin();
      if (pos == set.end()) continue;
      const uint32_t w = x_.workspaces.rank(ws);
      Run r{0, w, 0, w < turns_.size() ? turns_[w] : 0, 0, pos, set.end()};
      Rekey(r);
      heap_.push_back(r);
    }
    std::make_heap(heap_.begin(), heap_.end(), After);
  }

  void Rekey(Run& r) const {
    r.share = ShareBits(std::max(mem_[r.ws], cpu_[r.ws]));
    r.created = r.pos->created;
    r.salt = Salt(r.created, r.ws);
  }

  void Count(uint32_t h) {
    const Index::Entry& e = x_.entries[h];
    const QueuedJob& q = state_.queued[e.pos];
    const uint32_t w = x_.workspaces.rank(e.workspace);
    mem_[w] += Weight(q.resources.memory_bytes, inv_mem_);
    cpu_[w] += Weight(q.resources.cpu_millis, inv_cpu_);
  }

  bool NextOwn(uint32_t& h) {
    if (heap_.empty()) return false;
    std::pop_heap(heap_.begin(), heap_.end(), After);
    Run& r = heap_.back();
    h = r.pos->handle;
    Count(h);
    if (++r.pos == r.end) {
      heap_.pop_back();
    } else {
      Rekey(r);
      std::push_heap(heap_.begin(), heap_.end(), After);
    }
    // The other workspaces' shares are unchanged; their keys stay valid.
    return true;
  }

  void StartBand() {
    bands_.clear();
    if (!aging_ || level_ > ceiling_) return;
    for (const auto& [p, level] : x_.levels) {
      if (p >= level_) continue;
      const int64_t rise = level_ - p;
      auto end = LowerBound(level.all, RiseBound(rise));
      auto pos = level_ == ceiling_ ? level.all.begin()
                                    : LowerBound(level.all, RiseBound(rise + 1));
      if (pos == end) continue;
      bands_.push_back(Band{SatAdd(pos->created, Risen(rise)), pos, end, rise});
    }
    std::make_heap(bands_.begin(), bands_.end(), BandAfter);
  }

  bool NextAged(uint32_t& h) {
    if (bands_.empty()) return false;
    std::pop_heap(bands_.begin(), bands_.end(), BandAfter);
    Band& b = bands_.back();
    h = b.pos->handle;
    Count(h);
    if (++b.pos == b.end) {
      bands_.pop_back();
    } else {
      b.key = SatAdd(b.pos->created, Risen(b.rise));
      std::push_heap(bands_.begin(), bands_.end(), BandAfter);
    }
    return true;
  }

  const Index& x_;
  const bool drf_;
  const bool aging_;
  const int64_t now_;
  const int64_t step_;
  const int64_t ceiling_;
  double inv_mem_ = 0, inv_cpu_ = 0;
  std::vector<double> mem_, cpu_;
  const std::vector<uint64_t>& turns_;
  const State& state_;
  RankSet::const_iterator fifo_;
  int64_t level_;
  bool band_ = true;  // so that the first Next() moves to the top level
  std::vector<Run> heap_;
  std::vector<Band> bands_;
};

}  // namespace

void IncrementalPlanner::Plan(const Budgets& budgets, const Policy& policy,
                              absl::Time now, Detail detail, PlanResult& out) {
  if (!whole_queue_only_ && PlanIncrementally(budgets, policy, now, detail, out)) {
    ++incremental_plans_;
    return;
  }
  planner_.Plan(state_, budgets, policy, now, out);
  ++whole_plans_;
  last_whole_ = true;
}

bool IncrementalPlanner::PlanIncrementally(const Budgets& budgets, const Policy& policy,
                                           absl::Time now, Detail detail, PlanResult& out) {
  const bool whole = detail == Detail::kWhole;
  Index& x = *index_;
  const bool drf = policy.ranking == nullptr || policy.ranking == &DrfRanking();
  if ((!drf && policy.ranking != &FifoRanking()) || !budgets.nodes.empty() ||
      state_.paused || !state_.pools_in_maintenance.empty() || x.levels.size() > kMaxLevels) {
    return false;
  }
  x.Classify(budgets, state_);
  if (x.static_problems > 0 || x.duplicate_ids > 0 || x.dependency_problems > 0 ||
      x.cycle_suspect) {
    return false;
  }
  const int32_t min_prio = x.levels.empty() ? 0 : x.levels.rbegin()->first;
  const int32_t max_prio = x.levels.empty() ? 0 : x.levels.begin()->first;
  // Every queued job fits the budgets: the top is the highest queued.
  const int32_t queued_top = x.levels.empty() ? INT32_MIN : max_prio;
  int32_t ceiling = x.levels.empty() ? max_prio : queued_top;
  if (policy.aging_interval > absl::ZeroDuration() &&
      policy.aging_top_memory > absl::ZeroDuration() && state_.top_priority > ceiling &&
      now - state_.top_priority_seen <= policy.aging_top_memory) {
    ceiling = state_.top_priority;
  }
  const bool aging = policy.aging_interval > absl::ZeroDuration() && min_prio < ceiling;
  if (aging && x.undated > 0) return false;
  const int64_t now_ns = absl::ToUnixNanos(now);
  const int64_t step = std::max<int64_t>(1, absl::ToInt64Nanoseconds(policy.aging_interval));

  // What Prepare() computes apart from the queued jobs' records.
  x.workspaces.Refresh();
  x.pools.Refresh();
  internal::Prepared& p = *prepared_;
  p.workspaces = x.workspaces.sorted();
  p.pools = x.pools.sorted();
  const size_t num_ws = p.workspaces.size();
  const size_t num_pools = p.pools.size();
  p.min_priority = min_prio;
  p.max_priority = std::max(max_prio, ceiling);
  p.aging_ceiling = ceiling;
  p.queued_top = queued_top;
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
  for (const RunningJob& r : state_.running) {
    const uint32_t w = x.workspaces.rank(static_cast<uint32_t>(x.workspaces.Find(r.workspace)));
    const uint32_t pool = x.pools.rank(static_cast<uint32_t>(x.pools.Find(r.pool)));
    const int64_t mem = std::max<int64_t>(0, r.resources.memory_bytes);
    const int64_t cpu = std::max<int64_t>(0, r.resources.cpu_millis);
    p.used_memory = SatAdd(p.used_memory, mem);
    p.used_cpu = SatAdd(p.used_cpu, cpu);
    p.used_workers = SatAdd(p.used_workers, 1);
    p.running_memory_by_workspace[w] = SatAdd(p.running_memory_by_workspace[w], mem);
    p.running_cpu_by_workspace[w] = SatAdd(p.running_cpu_by_workspace[w], cpu);
    p.workers_by_workspace[w] += 1;
    p.workers_by_pool[pool] += 1;
    const absl::Duration estimate =
        absl::Nanoseconds(DurationNanos(r.expected_duration, policy.default_duration));
    const absl::Time end = internal::ExpectedEnd(r.started_at, estimate, now);
    if (now - r.started_at > estimate) {
      p.overrun = std::min(internal::Prepared::kMaxOverrun,
                           std::max(p.overrun, absl::FDivDuration(now - r.started_at, estimate)));
    }
    p.timeline.AddRelease(end, mem, cpu, pool, w);
  }
  static const std::vector<Node>* const kNoNodes = new std::vector<Node>();
  p.nodes.Build(*kNoNodes);
  p.holder = -1;
  if (!state_.reservation_holder.empty()) {
    if (auto it = x.queued_handle.find(state_.reservation_holder);
        it != x.queued_handle.end())
      p.holder = x.entries[it->second].pos;
  }

  // The result, keeping the big vectors' memory (as Planner::Plan()).
  {
    std::vector<Decision> decisions = std::move(out.decisions);
    std::vector<PendingDependency> pending = std::move(out.pending_dependencies);
    std::vector<NodePlacement> placements = std::move(out.placements);
    decisions.clear();
    pending.clear();
    placements.clear();
    out = PlanResult();
    out.decisions = std::move(decisions);
    out.pending_dependencies = std::move(pending);
    out.placements = std::move(placements);
  }
  out.now = now;
  out.aging_interval = policy.aging_interval;
  out.aging_ceiling = ceiling;
  out.queued_top_priority = queued_top;
  out.default_duration = policy.default_duration > absl::ZeroDuration()
                             ? policy.default_duration
                             : absl::Hours(1);

  // DRF shares start from the running jobs.
  const double inv_mem =
      budgets.memory_bytes > 0 ? 1.0 / static_cast<double>(budgets.memory_bytes) : 0.0;
  const double inv_cpu =
      budgets.cpu_millis > 0 ? 1.0 / static_cast<double>(budgets.cpu_millis) : 0.0;
  std::vector<double> mem(num_ws), cpu(num_ws);
  for (size_t w = 0; w < num_ws; ++w) {
    mem[w] = Weight(p.running_memory_by_workspace[w], inv_mem);
    cpu[w] = Weight(p.running_cpu_by_workspace[w], inv_cpu);
  }
  RankStream stream(x, drf, aging, now_ns, step, ceiling, p.max_priority, mem, cpu,
                    p.last_turn_by_workspace, budgets, state_);

  // The reservation holder keeps its place (as KeepReservationHolder in
  // plan.cc): draw up to it, then move it ahead of the jobs just before it
  // whose own priority is not above its effective one.
  std::vector<uint32_t>& buffer = buffer_;
  buffer.clear();
  if (p.holder >= 0) {
    const uint32_t hh = x.handle_of[static_cast<size_t>(p.holder)];
    uint32_t h;
    while (stream.Next(h)) {
      buffer.push_back(h);
      if (h == hh) break;
    }
    if (!buffer.empty() && buffer.back() == hh) {
      const QueuedJob& holder = state_.queued[static_cast<size_t>(p.holder)];
      const int32_t prio = internal::AgedPriority(
          holder.priority, holder.created_at, now,
          aging ? policy.aging_interval : absl::ZeroDuration(), ceiling);
      const bool aged = prio != holder.priority;
      const absl::Time reached_top =
          holder.created_at +
          policy.aging_interval * (static_cast<int64_t>(ceiling) - holder.priority);
      size_t first = buffer.size() - 1;
      while (first > 0) {
        const QueuedJob& q = state_.queued[x.entries[buffer[first - 1]].pos];
        if (q.priority > prio) break;
        if (aged && q.priority >= ceiling && q.created_at > reached_top) break;
        --first;
      }
      std::rotate(buffer.begin() + static_cast<std::ptrdiff_t>(first), buffer.end() - 1,
                  buffer.end());
    }
  }

  internal::Walk walk(p, state_, budgets, policy, now, out);
  size_t k = 0;
  auto decide = [&](uint32_t h) {
    const Index::Entry& e = x.entries[h];
    const QueuedJob& q = state_.queued[e.pos];
    Decision& d = out.decisions.emplace_back();
    d.job = e.pos;
    d.jobs_ahead = static_cast<uint32_t>(k);
    if (e.waiting > 0) {
      d.verdict = Verdict::kWait;
      d.reason = Reason::kWaitingForDependencies;
      for (uint32_t i = 0; i < q.depends_on.size(); ++i) {
        const std::string& dep = q.depends_on[i];
        if (x.queued_count.contains(dep) || x.running_count.contains(dep)) {
          out.pending_dependencies.push_back(PendingDependency{static_cast<uint32_t>(k), i});
        }
      }
    } else {
      JobRecord j{};
      j.memory_bytes = q.resources.memory_bytes;
      j.cpu_millis = q.resources.cpu_millis;
      j.created_ns = e.created;
      j.duration_ns = DurationNanos(q.expected_duration, policy.default_duration);
      j.priority = q.priority;
      j.workspace = x.workspaces.rank(e.workspace);
      j.pool = x.pools.rank(e.pool);
      j.problem = Problem::kNone;
      walk.Decide(j, d, k);
    }
    ++k;
  };
  size_t b = 0;
  uint32_t h;
  const int64_t min_memory = x.memory.empty() ? 0 : *x.memory.begin();
  const int64_t min_cpu = x.cpu.empty() ? 0 : *x.cpu.begin();
  // The shortest expected duration, the default standing for unknown ones.
  int64_t min_duration = 0;
  if (!x.duration.empty()) {
    const auto known = x.duration.upper_bound(0);
    min_duration = known == x.duration.end() ? internal::kInt64Max : *known;
    if (*x.duration.begin() == 0)
      min_duration = std::min(min_duration,
                              DurationNanos(absl::ZeroDuration(), policy.default_duration));
  }
  const bool admissions = detail == Detail::kAdmissions;
  while (!walk.Saturated() &&
         !(admissions && walk.AdmitsNone(min_memory, min_cpu, min_duration))) {
    if (b < buffer.size()) {
      decide(buffer[b++]);
    } else if (stream.Next(h)) {
      decide(h);
    } else {
      break;
    }
  }
  tail_ = Decision();
  tail_.verdict = Verdict::kWait;
  tail_.reason = Reason::kWaitingForWorkerSlot;
  tail_.dimension = Dimension::kWorkerSlots;
  walk.FillNow(JobRecord{}, Dimension::kWorkerSlots, tail_);
  decided_jobs_ += static_cast<int64_t>(k);
  if (whole) {
    auto rest = [&](uint32_t hr) {
      const Index::Entry& e = x.entries[hr];
      if (e.waiting > 0) return decide(hr);
      Decision& d = out.decisions.emplace_back(tail_);
      d.job = e.pos;
      d.jobs_ahead = static_cast<uint32_t>(k++);
    };
    while (b < buffer.size()) rest(buffer[b++]);
    while (stream.Next(h)) rest(h);
  }
  last_whole_ = whole || k == state_.queued.size();
  walk.Finish();
  out.workspaces.reserve(num_ws);
  for (absl::string_view w : p.workspaces) out.workspaces.emplace_back(w);
  out.pools.reserve(num_pools);
  for (absl::string_view pool : p.pools) out.pools.emplace_back(pool);
  return true;
}

}  // namespace berth::planner
