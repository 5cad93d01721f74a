#include "planner/forecast/eta.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <queue>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "planner/plan/nodes.h"
#include "planner/plan/prepare.h"
#include "planner/model/saturating.h"

namespace berth::planner {
namespace {

using internal::SatAdd;
constexpr int64_t kUnlimited = Amounts::kUnlimited;

struct Release {
  absl::Time end;
  int64_t memory_bytes;
  int64_t cpu_millis;
  uint32_t pool;
  uint32_t workspace;
  int32_t node = -1;  // NodeClock's releases only
  bool operator>(const Release& o) const { return end > o.end; }
};

bool WaitsForCapacity(Reason r) {
  switch (r) {
    case Reason::kWaitingForMemory:
    case Reason::kWaitingForCpu:
    case Reason::kWaitingForWorkerSlot:
    case Reason::kWaitingForPoolSlot:
    case Reason::kWaitingForWorkspaceCap:
    case Reason::kWaitingForPriority:
      return true;
    default:
      return false;
  }
}

// Names -> index in a sorted name list (PlanResult::pools / workspaces).
class NameIndex {
 public:
  explicit NameIndex(const std::vector<std::string>& names) {
    index_.reserve(names.size());
    for (size_t i = 0; i < names.size(); ++i) index_.emplace(names[i], i);
  }
  // The index, or `missing` for a name not listed.
  uint32_t Find(absl::string_view name, uint32_t missing) {
    if (name == last_name_ && has_last_) return last_;
    auto it = index_.find(name);
    last_ = it == index_.end() ? missing : it->second;
    last_name_ = name;
    has_last_ = true;
    return last_;
  }

 private:
  absl::flat_hash_map<absl::string_view, uint32_t> index_;
  absl::string_view last_name_;
  uint32_t last_ = 0;
  bool has_last_ = false;
};

// With Budgets::nodes: what is free on each node as the pass walks forward
// in time, so a job that fits the cluster but no node waits until a node
// frees enough, and each estimate is on a node. Inactive without nodes (the
// single-host pass is unchanged).
class NodeClock {
 public:
  NodeClock(const State& state, const PlanResult& result) {
    if (result.nodes.empty()) return;
    inv_.Build(result.node_specs);
    if (inv_.empty()) return;
    for (const RunningJob& r : state.running) {
      const int32_t node = inv_.Find(r.node);
      if (node < 0) continue;  // a node out of the inventory: cluster only
      const absl::Time end =
          internal::ExpectedEnd(r.started_at, Run(r.expected_duration, result), result.now);
      inv_.AddRunning(static_cast<uint32_t>(node), Mem(r.resources), Cpu(r.resources), end);
      releases_.push(Release{end, Mem(r.resources), Cpu(r.resources), 0, 0, node});
    }
    placer_.emplace(inv_);
    for (size_t k = 0; k < result.decisions.size() && k < result.placements.size(); ++k) {
      const Decision& d = result.decisions[k];
      const int32_t node = result.placements[k].node;
      if (d.verdict != Verdict::kAdmit || node < 0) continue;
      const QueuedJob& job = state.queued[d.job];
      const absl::Time end = result.now + Run(job.expected_duration, result);
      placer_->Take(static_cast<uint32_t>(node), Mem(job.resources), Cpu(job.resources), end);
      releases_.push(Release{end, Mem(job.resources), Cpu(job.resources), 0, 0, node});
    }
  }
  bool active() const { return placer_.has_value(); }
  // The node a job of `pool` needing (memory, cpu) would start on now, -1
  // if none has room (best fit, as admission places).
  int32_t Fit(absl::string_view pool, int64_t memory, int64_t cpu) const {
    return placer_->BestFit(inv_.GroupOf(pool), memory, cpu, {});
  }
  bool has_next() const { return !releases_.empty(); }
  // The end of the next node release. REQUIRES: has_next().
  absl::Time next() const { return releases_.top().end; }
  // Gives back every node release that ends at or before `t`.
  void ReleaseUntil(absl::Time t) {
    while (!releases_.empty() && releases_.top().end <= t) {
      const Release r = releases_.top();
      releases_.pop();
      placer_->Give(static_cast<uint32_t>(r.node), r.memory_bytes, r.cpu_millis);
    }
  }
  void Take(int32_t node, int64_t memory, int64_t cpu, absl::Time end) {
    placer_->Take(static_cast<uint32_t>(node), memory, cpu, end);
    releases_.push(Release{end, memory, cpu, 0, 0, node});
  }

 private:
  static int64_t Mem(const Resources& r) { return std::max<int64_t>(r.memory_bytes, 0); }
  static int64_t Cpu(const Resources& r) { return std::max<int64_t>(r.cpu_millis, 0); }
  static absl::Duration Run(absl::Duration d, const PlanResult& result) {
    return d > absl::ZeroDuration() ? d : result.default_duration;
  }

  internal::NodeInventory inv_;
  std::optional<internal::NodePlacer> placer_;  // over inv_
  std::priority_queue<Release, std::vector<Release>, std::greater<>> releases_;
};

}  // namespace

absl::string_view EtaKindName(EtaKind k) {
  switch (k) {
    case EtaKind::kUnknown: return "unknown";
    case EtaKind::kNow: return "now";
    case EtaKind::kReserved: return "reserved";
    case EtaKind::kIfEstimatesHold: return "if_estimates_hold";
  }
  return "unknown";
}

namespace {

// Walks the plan's ranking on its timeline, one waiting job after another
// (each estimate depends on the ones before it), calling sink(k, estimate)
// for k < n.
template <typename Sink>
void WalkEstimates(const State& state, const PlanResult& result, size_t n, Sink&& sink) {
  NameIndex pools(result.pools), workspaces(result.workspaces);
  const uint32_t no_pool = static_cast<uint32_t>(result.pools.size());
  const uint32_t no_ws = static_cast<uint32_t>(result.workspaces.size());
  // What is free after the plan's admissions; index no_pool / no_ws stands
  // for names the plan did not see (unlimited).
  int64_t mem = result.free_after.memory_bytes;
  int64_t cpu = result.free_after.cpu_millis;
  int64_t workers = result.free_after.worker_slots;
  std::vector<int64_t> pool_free = result.pool_free_after;
  pool_free.resize(result.pools.size() + 1, kUnlimited);
  std::vector<int64_t> ws_free = result.workspace_free_after;
  ws_free.resize(result.workspaces.size() + 1, kUnlimited);

  std::priority_queue<Release, std::vector<Release>, std::greater<>> releases;
  result.timeline.ForEachRelease([&](absl::Time end, int64_t m, int64_t c,
                                     uint32_t pool, uint32_t ws) {
    releases.push(Release{end, m, c, std::min(pool, no_pool), std::min(ws, no_ws)});
  });
  // The first release after now: the earliest anything can change.
  const absl::Time next_change =
      releases.empty() ? absl::InfiniteFuture() : std::max(releases.top().end, result.now);
  NodeClock nodes(state, result);

  absl::Time cursor = result.now;
  auto next = [&](size_t k) -> StartEstimate {
    const Decision& d = result.decisions[k];
    if (d.verdict == Verdict::kAdmit) {
      StartEstimate now{EtaKind::kNow, result.now};
      if (k < result.placements.size()) now.node = result.placements[k].node;
      return now;
    }
    if (d.verdict != Verdict::kWait || !WaitsForCapacity(d.reason)) return {};
    const QueuedJob& job = state.queued[d.job];
    const uint32_t pool = pools.Find(job.pool, no_pool);
    const uint32_t ws = workspaces.Find(job.workspace, no_ws);
    const int64_t need_mem = std::max<int64_t>(job.resources.memory_bytes, 0);
    const int64_t need_cpu = std::max<int64_t>(job.resources.cpu_millis, 0);
    int32_t node = -1;
    auto fits = [&] {
      if (!(workers >= 1 && pool_free[pool] >= 1 && ws_free[ws] >= 1 &&
            need_mem <= mem && need_cpu <= cpu))
        return false;
      if (!nodes.active()) return true;
      node = nodes.Fit(job.pool, need_mem, need_cpu);
      return node >= 0;
    };
    while (!fits()) {
      // The next release, the cluster's or a node's (a job's release is on
      // both: the cluster amounts and its node's come back at the same time).
      const bool node_left = nodes.active() && nodes.has_next();
      if (releases.empty() && !node_left) break;
      const absl::Time t =
          releases.empty() ? nodes.next()
                           : node_left ? std::min(releases.top().end, nodes.next())
                                       : releases.top().end;
      cursor = std::max(cursor, t);
      if (node_left) nodes.ReleaseUntil(t);
      if (releases.empty() || releases.top().end > t) continue;
      const Release r = releases.top();
      releases.pop();
      mem = SatAdd(mem, r.memory_bytes);
      cpu = SatAdd(cpu, r.cpu_millis);
      workers = SatAdd(workers, 1);
      pool_free[r.pool] = SatAdd(pool_free[r.pool], 1);
      ws_free[r.workspace] = SatAdd(ws_free[r.workspace], 1);
    }
    if (!fits()) return {};  // never fits what remains: unknown
    // A waiting job cannot start before something changes.
    const absl::Time at = std::max(cursor, next_change);
    StartEstimate e = d.reserved ? StartEstimate{EtaKind::kReserved, result.reservation_start}
                                 : StartEstimate{EtaKind::kIfEstimatesHold, at};
    e.node = node;
    if (d.reserved && k < result.placements.size() && result.placements[k].node >= 0) {
      e.node = result.placements[k].node;  // the reservation's node
    }
    mem -= need_mem;
    cpu -= need_cpu;
    workers -= 1;
    if (pool_free[pool] != kUnlimited) pool_free[pool] -= 1;
    if (ws_free[ws] != kUnlimited) ws_free[ws] -= 1;
    const absl::Duration run = job.expected_duration > absl::ZeroDuration()
                                   ? job.expected_duration
                                   : result.default_duration;
    releases.push(Release{at + run, need_mem, need_cpu, pool, ws});
    if (nodes.active() && node >= 0) nodes.Take(node, need_mem, need_cpu, at + run);
    return e;
  };
  for (size_t k = 0; k < n; ++k) sink(k, next(k));
}

}  // namespace

std::vector<StartEstimate> EstimateStarts(const State& state,
                                          const PlanResult& result,
                                          size_t limit) {
  const size_t n = std::min(limit, result.decisions.size());
  std::vector<StartEstimate> out(n);
  WalkEstimates(state, result, n,
                [&out](size_t k, const StartEstimate& e) { out[k] = e; });
  return out;
}

StartEstimate EstimateStart(const State& state, const PlanResult& result, size_t index) {
  StartEstimate last;
  if (index >= result.decisions.size()) return last;
  WalkEstimates(state, result, index + 1,
                [&last](size_t, const StartEstimate& e) { last = e; });
  return last;
}

StartEstimateTable::StartEstimateTable(const State& state, const PlanResult& result)
    : now_(result.now) {
  const size_t n = result.decisions.size();
  packed_.resize(n);
  WalkEstimates(state, result, n, [this](size_t k, const StartEstimate& e) {
    Packed& p = packed_[k];
    p.node = e.node;
    p.kind = e.kind;
    if (e.time == absl::InfiniteFuture()) {
      p.offset_ns = kInfinite;
      return;
    }
    const int64_t ns = absl::ToInt64Nanoseconds(e.time - now_);
    if (ns != kInfinite && ns != kInexact && now_ + absl::Nanoseconds(ns) == e.time) {
      p.offset_ns = ns;
    } else {
      p.offset_ns = kInexact;
      inexact_.emplace(static_cast<uint32_t>(k), e.time);
    }
  });
}

StartEstimate StartEstimateTable::operator[](size_t k) const {
  const Packed& p = packed_[k];
  StartEstimate e;
  e.kind = p.kind;
  e.node = p.node;
  if (p.offset_ns == kInexact) {
    e.time = inexact_.at(static_cast<uint32_t>(k));
  } else if (p.offset_ns != kInfinite) {
    e.time = now_ + absl::Nanoseconds(p.offset_ns);
  }  // else InfiniteFuture(), the default
  return e;
}

}  // namespace berth::planner
