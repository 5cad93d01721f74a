// The admission walk's state and per-job decision: see walk.h and plan.h.
#include "planner/plan/walk.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "planner/model/saturating.h"

namespace berth::planner::internal {
namespace {

constexpr int64_t kUnlimited = Amounts::kUnlimited;

Reason ReasonFor(Dimension d) {
  switch (d) {
    case Dimension::kMemory: return Reason::kWaitingForMemory;
    case Dimension::kCpu: return Reason::kWaitingForCpu;
    case Dimension::kWorkerSlots: return Reason::kWaitingForWorkerSlot;
    case Dimension::kPoolSlots: return Reason::kWaitingForPoolSlot;
    case Dimension::kWorkspaceSlots: return Reason::kWaitingForWorkspaceCap;
    case Dimension::kUnspecified: break;
  }
  return Reason::kUnspecified;
}

Usage MakeUsage(const std::vector<absl::string_view>& pools, int64_t mem,
                int64_t cpu, int64_t workers,
                const std::vector<int64_t>& pool_workers) {
  Usage u;
  u.memory_bytes = mem;
  u.cpu_millis = cpu;
  u.workers = workers;
  for (size_t i = 0; i < pools.size(); ++i) {
    if (pool_workers[i] > 0) u.pool_workers.emplace(std::string(pools[i]), pool_workers[i]);
  }
  return u;
}

}  // namespace

Walk::Walk(const Prepared& p, const State& state, const Budgets& b,
           const Policy& policy, absl::Time now, PlanResult& out)
    : p_(p), state_(state), budgets_(b), now_(now), out_(out) {
  free_.memory_bytes = SatSub(b.memory_bytes, p.used_memory);
  free_.cpu_millis = SatSub(b.cpu_millis, p.used_cpu);
  free_.worker_slots = SatSub(b.max_workers, p.used_workers);
  pool_free_.resize(p.pools.size());
  for (size_t i = 0; i < pool_free_.size(); ++i) {
    pool_free_[i] = p.pool_capacity[i] == kUnlimited
                        ? kUnlimited
                        : SatSub(p.pool_capacity[i], p.workers_by_pool[i]);
  }
  ws_capacity_ = b.workspace_max_workers > 0 ? b.workspace_max_workers
                                             : kUnlimited;
  ws_free_.resize(p.workspaces.size());
  for (size_t i = 0; i < ws_free_.size(); ++i) {
    ws_free_[i] = ws_capacity_ == kUnlimited
                      ? kUnlimited
                      : SatSub(ws_capacity_, p.workers_by_workspace[i]);
  }
  res_.strict = !policy.backfill;
  admitted_by_pool_.assign(p.pools.size(), 0);
  timeline_ = p.timeline;
  if (!p.nodes.empty()) placer_.emplace(p.nodes);
}

// Decides one eligible job (no problem, not paused, pool open, no pending
// dependency).
void Walk::Decide(const JobRecord& j, Decision& d, size_t k) {
  DecideNow(j, d, k);
  if (placer_) NameFitsNode(j, d, k);
}

void Walk::DecideNow(const JobRecord& j, Decision& d, size_t k) {
  const Dimension binding = FirstShortNow(j);
  if (binding == Dimension::kUnspecified) {
    if (placer_) return DecideOnNodes(j, d, k);
    if (!res_.active) return Admit(j, d);
    if (res_.strict) return WaitForPriority(j, d, /*fits=*/false);
    if (EndsBeforeReservation(j)) return Admit(j, d);
    if (FitsSpare(j)) {
      ConsumeSpare(j);
      return Admit(j, d);
    }
    return WaitForPriority(j, d, /*fits=*/true);
  }
  d.verdict = Verdict::kWait;
  d.reason = ReasonFor(binding);
  d.dimension = binding;
  FillNow(j, binding, d);
  if (!res_.active) {
    Reserve(j, d, k);
    if (SlotsNow(j)) {
      d.fits_memory_bytes = free_.memory_bytes;
      d.fits_cpu_millis = free_.cpu_millis;
    }
    ClampFitsToNodes(j, d);
    return;
  }
  SuggestBackfill(j, d);
  ClampFitsToNodes(j, d);
}

void Walk::Finish() {
  out_.free_after = free_;
  out_.pool_free_after = pool_free_;
  out_.workspace_free_after = ws_free_;
  out_.timeline = std::move(timeline_);
  std::vector<int64_t> pool_after = p_.workers_by_pool;
  for (size_t i = 0; i < pool_after.size(); ++i)
    pool_after[i] += admitted_by_pool_[i];
  out_.used_before = MakeUsage(p_.pools, p_.used_memory, p_.used_cpu,
                               p_.used_workers, p_.workers_by_pool);
  out_.used_after = MakeUsage(
      p_.pools, SatAdd(p_.used_memory, admitted_memory_),
      SatAdd(p_.used_cpu, admitted_cpu_),
      SatAdd(p_.used_workers, out_.admitted_count), pool_after);
}

// Fills needed/free/capacity of `d` for dimension `dim` as of now.
void Walk::FillNow(const JobRecord& j, Dimension dim, Decision& d) const {
  switch (dim) {
    case Dimension::kWorkerSlots:
      d.needed = 1;
      d.free = free_.worker_slots;
      d.capacity = budgets_.max_workers;
      break;
    case Dimension::kPoolSlots:
      d.needed = 1;
      d.free = pool_free_[j.pool];
      d.capacity = p_.pool_capacity[j.pool];
      break;
    case Dimension::kWorkspaceSlots:
      d.needed = 1;
      d.free = ws_free_[j.workspace];
      d.capacity = ws_capacity_;
      break;
    case Dimension::kMemory:
      d.needed = j.memory_bytes;
      d.free = free_.memory_bytes;
      d.capacity = budgets_.memory_bytes;
      break;
    case Dimension::kCpu:
      d.needed = j.cpu_millis;
      d.free = free_.cpu_millis;
      d.capacity = budgets_.cpu_millis;
      break;
    case Dimension::kUnspecified:
      break;
  }
}

bool Walk::EndsBefore(int64_t duration_ns) const {
  if (res_.overdue) return false;
  const double stretched = static_cast<double>(duration_ns) * p_.overrun;
  return stretched <= static_cast<double>(res_.start_in_ns);
}

// EndsBefore is monotone in the duration: the largest one it holds for,
// found by bisection on the same arithmetic (so the bound is exact).
int64_t Walk::BackfillLimit() const {
  if (!EndsBefore(0)) return -1;
  int64_t lo = 0, hi = kInt64Max;  // EndsBefore(lo) holds
  if (EndsBefore(hi)) return hi;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (EndsBefore(mid) ? lo : hi) = mid;
  }
  return lo;
}

bool Walk::SlotsNow(const JobRecord& j) const {
  return free_.worker_slots >= 1 && pool_free_[j.pool] >= 1 &&
         ws_free_[j.workspace] >= 1;
}

Dimension Walk::FirstShortNow(const JobRecord& j) const {
  if (free_.worker_slots < 1) return Dimension::kWorkerSlots;
  if (pool_free_[j.pool] < 1) return Dimension::kPoolSlots;
  if (ws_free_[j.workspace] < 1) return Dimension::kWorkspaceSlots;
  if (j.memory_bytes > free_.memory_bytes) return Dimension::kMemory;
  if (j.cpu_millis > free_.cpu_millis) return Dimension::kCpu;
  return Dimension::kUnspecified;
}

// First dimension in which `j` started now would eat into the head's
// reservation.
Dimension Walk::FirstShortSpare(const JobRecord& j) const {
  if (res_.spare.worker_slots < 1) return Dimension::kWorkerSlots;
  if (j.pool == res_.pool && res_.spare.pool_slots < 1)
    return Dimension::kPoolSlots;
  if (j.workspace == res_.workspace && res_.spare.workspace_slots < 1)
    return Dimension::kWorkspaceSlots;
  if (j.memory_bytes > res_.spare.memory_bytes) return Dimension::kMemory;
  if (j.cpu_millis > res_.spare.cpu_millis) return Dimension::kCpu;
  return Dimension::kUnspecified;
}
void Walk::ConsumeSpare(const JobRecord& j) {
  res_.spare.worker_slots -= 1;
  if (j.pool == res_.pool) res_.spare.pool_slots = SatSub(res_.spare.pool_slots, 1);
  if (j.workspace == res_.workspace)
    res_.spare.workspace_slots = SatSub(res_.spare.workspace_slots, 1);
  res_.spare.memory_bytes -= j.memory_bytes;  // fits: no overflow
  res_.spare.cpu_millis -= j.cpu_millis;
}

void Walk::Admit(const JobRecord& j, Decision& d) {
  d.verdict = Verdict::kAdmit;
  d.reason = Reason::kAdmitted;
  free_.worker_slots -= 1;
  free_.memory_bytes -= j.memory_bytes;
  free_.cpu_millis -= j.cpu_millis;
  if (pool_free_[j.pool] != kUnlimited) pool_free_[j.pool] -= 1;
  if (ws_free_[j.workspace] != kUnlimited) ws_free_[j.workspace] -= 1;
  timeline_.AddRelease(now_ + absl::Nanoseconds(j.duration_ns),
                       j.memory_bytes, j.cpu_millis, j.pool, j.workspace);
  ++out_.admitted_count;
  admitted_memory_ = SatAdd(admitted_memory_, j.memory_bytes);
  admitted_cpu_ = SatAdd(admitted_cpu_, j.cpu_millis);
  admitted_by_pool_[j.pool] += 1;
}

// Fits now, but a reservation holds the capacity (or strict order).
// Reports the dimension in which it would eat into the reservation, with
// `free` = what the reservation leaves spare at its start.
void Walk::WaitForPriority(const JobRecord& j, Decision& d, bool fits_now) {
  d.verdict = Verdict::kWait;
  d.reason = Reason::kWaitingForPriority;
  if (!fits_now || res_.strict) return;
  const Dimension dim = FirstShortSpare(j);
  d.dimension = dim;
  switch (dim) {
    case Dimension::kWorkerSlots:
      d.needed = 1;
      d.free = res_.spare.worker_slots;
      d.capacity = budgets_.max_workers;
      break;
    case Dimension::kPoolSlots:
      d.needed = 1;
      d.free = res_.spare.pool_slots;
      d.capacity = p_.pool_capacity[j.pool];
      break;
    case Dimension::kWorkspaceSlots:
      d.needed = 1;
      d.free = res_.spare.workspace_slots;
      d.capacity = ws_capacity_;
      break;
    case Dimension::kMemory:
      d.needed = j.memory_bytes;
      d.free = res_.spare.memory_bytes;
      d.capacity = budgets_.memory_bytes;
      break;
    case Dimension::kCpu:
      d.needed = j.cpu_millis;
      d.free = res_.spare.cpu_millis;
      d.capacity = budgets_.cpu_millis;
      break;
    case Dimension::kUnspecified:
      break;
  }
  SuggestBackfill(j, d);
}

// With a reservation active: the largest estimates that would backfill.
void Walk::SuggestBackfill(const JobRecord& j, Decision& d) const {
  if (res_.strict || !SlotsNow(j)) return;
  int64_t mem = free_.memory_bytes;
  int64_t cpu = free_.cpu_millis;
  if (!EndsBeforeReservation(j)) {
    const bool spare_slots =
        res_.spare.worker_slots >= 1 &&
        (j.pool != res_.pool || res_.spare.pool_slots >= 1) &&
        (j.workspace != res_.workspace || res_.spare.workspace_slots >= 1);
    if (!spare_slots) return;
    mem = std::min(mem, res_.spare.memory_bytes);
    cpu = std::min(cpu, res_.spare.cpu_millis);
  }
  d.fits_memory_bytes = mem;
  d.fits_cpu_millis = cpu;
  ClampFitsToNodes(j, d);
}

void Walk::Reserve(const JobRecord& j, Decision& d, size_t k) {
  res_.active = true;
  res_.pool = j.pool;
  res_.workspace = j.workspace;
  Amounts free_now = free_;
  free_now.pool_slots = pool_free_[j.pool];
  free_now.workspace_slots = ws_free_[j.workspace];
  const Amounts need{j.memory_bytes, j.cpu_millis, 1, 1, 1};
  absl::Time start =
      timeline_.EarliestFit(now_, free_now, need, j.pool, j.workspace);
  if (placer_) start = ReserveOnNode(j, k, start);
  out_.reserved_decision = static_cast<int64_t>(k);
  out_.reservation_start = start;
  d.reserved = true;
  res_.overdue = p_.holder == static_cast<int64_t>(d.job) &&
                 state_.reservation_promised <= now_;
  res_.start_in_ns = start == absl::InfiniteFuture()
                         ? kInt64Max
                         : absl::ToInt64Nanoseconds(start - now_);
  // Overdue: the estimates that placed the reservation did not hold, so
  // neither do the releases before its start. What the head needs is then
  // taken from what is free now: only what is free beyond that is spare.
  const Amounts at =
      res_.overdue ? free_now
                   : timeline_.FreeAt(start, free_now, j.pool, j.workspace);
  res_.spare.memory_bytes = SatSub(at.memory_bytes, need.memory_bytes);
  res_.spare.cpu_millis = SatSub(at.cpu_millis, need.cpu_millis);
  res_.spare.worker_slots = SatSub(at.worker_slots, 1);
  res_.spare.pool_slots = SatSub(at.pool_slots, 1);
  res_.spare.workspace_slots = SatSub(at.workspace_slots, 1);
}

}  // namespace berth::planner::internal
