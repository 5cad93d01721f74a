// The admission walk on a node inventory (Budgets::nodes): placement,
// node-bound waits and the reservation's node. See walk.h and plan.h.
#include <algorithm>

#include "planner/model/saturating.h"
#include "planner/plan/walk.h"

namespace berth::planner::internal {
namespace {

Reason NodeReasonFor(Dimension d) {
  switch (d) {
    case Dimension::kMemory: return Reason::kWaitingForMemory;
    case Dimension::kCpu: return Reason::kWaitingForCpu;
    default: return Reason::kWaitingForWorkerSlot;
  }
}

int64_t Needed(const JobRecord& j, Dimension dim) {
  switch (dim) {
    case Dimension::kMemory: return j.memory_bytes;
    case Dimension::kCpu: return j.cpu_millis;
    default: return 1;
  }
}

}  // namespace

int64_t Walk::ClusterFree(uint32_t group, Dimension dim) const {
  if (dim != Dimension::kMemory && dim != Dimension::kCpu) return free_.worker_slots;
  int64_t sum = 0;
  for (uint32_t n : p_.nodes.members(group)) {
    const NodeAmounts& f = placer_->free(n);
    const int64_t v =
        std::max<int64_t>(0, dim == Dimension::kMemory ? f.memory_bytes : f.cpu_millis);
    sum = SatAdd(sum, v);  // nodes may report amounts near INT64_MAX (plan_fuzzer)
  }
  return std::min(sum, dim == Dimension::kMemory ? free_.memory_bytes : free_.cpu_millis);
}

NodeAmounts Walk::Offered(const JobRecord& j, const Decision& d, uint32_t n) const {
  NodeAmounts f = placer_->free(n);
  if (!res_.active || d.reserved || static_cast<int32_t>(n) != guard_.node ||
      EndsBeforeReservation(j)) {
    return f;
  }
  // Advice that names this node must leave the reservation what it holds
  // here, or, applied, the job would still wait for priority.
  f.memory_bytes = std::min(f.memory_bytes, guard_.spare.memory_bytes);
  f.cpu_millis = std::min(f.cpu_millis, guard_.spare.cpu_millis);
  f.slots = std::min(f.slots, guard_.spare.slots);
  return f;
}

void Walk::ClampFitsToNodes(const JobRecord& j, Decision& d) const {
  if (!placer_ || d.fits_memory_bytes == Decision::kNoFit ||
      d.fits_cpu_millis == Decision::kNoFit) {
    return;
  }
  const std::vector<uint32_t>& nodes = p_.nodes.members(p_.pool_group[j.pool]);
  int64_t mem = 0, cpu = 0;
  for (uint32_t n : nodes) {
    const NodeAmounts f = Offered(j, d, n);
    if (f.slots >= 1 && f.cpu_millis >= std::min(j.cpu_millis, d.fits_cpu_millis)) {
      mem = std::max(mem, f.memory_bytes);
    }
  }
  d.fits_memory_bytes = std::min(d.fits_memory_bytes, mem);
  // CPU on a node with the (bounded) memory free: with the memory bound
  // taken before, a job short of memory everywhere would get no CPU room
  // either, and no advice at all.
  for (uint32_t n : nodes) {
    const NodeAmounts f = Offered(j, d, n);
    if (f.slots >= 1 && f.memory_bytes >= std::min(j.memory_bytes, d.fits_memory_bytes)) {
      cpu = std::max(cpu, f.cpu_millis);
    }
  }
  d.fits_cpu_millis = std::min(d.fits_cpu_millis, cpu);
}

void Walk::NameFitsNode(const JobRecord& j, const Decision& d, size_t k) {
  if (d.verdict != Verdict::kWait || d.fits_memory_bytes == Decision::kNoFit ||
      d.fits_cpu_millis == Decision::kNoFit) {
    return;
  }
  const int64_t mem = std::min(j.memory_bytes, d.fits_memory_bytes);
  const int64_t cpu = std::min(j.cpu_millis, d.fits_cpu_millis);
  if (mem <= 0 || cpu <= 0) return;
  int32_t best = -1;
  int64_t best_free = -1;
  for (uint32_t n : p_.nodes.members(p_.pool_group[j.pool])) {
    const NodeAmounts f = Offered(j, d, n);
    if (f.slots < 1 || f.memory_bytes < mem || f.cpu_millis < cpu) continue;
    // Most memory free, ties by id (the inventory is sorted by id).
    if (f.memory_bytes > best_free ||
        (f.memory_bytes == best_free && static_cast<int32_t>(n) < best)) {
      best = static_cast<int32_t>(n);
      best_free = f.memory_bytes;
    }
  }
  out_.placements[k].fits_node = best;
}

void Walk::DecideOnNodes(const JobRecord& j, Decision& d, size_t k) {
  NodePlacement& place = out_.placements[k];
  if (res_.active && res_.strict) return WaitForPriority(j, d, /*fits=*/false);
  const uint32_t group = p_.pool_group[j.pool];
  const bool ends = res_.active && EndsBeforeReservation(j);
  const bool cluster_ok = !res_.active || ends || FitsSpare(j);
  const NodePlacer::Guard no_guard;
  // No node fits even without the reservation's guard: wait for a node.
  const bool fits_somewhere =
      placer_->BestFitUnguarded(group, j.memory_bytes, j.cpu_millis) >= 0;
  if (cluster_ok && fits_somewhere) {
    const NodePlacer::Guard& guard = ends ? no_guard : guard_;
    const int32_t node = placer_->BestFit(group, j.memory_bytes, j.cpu_millis, guard);
    if (node >= 0) {
      if (res_.active && !ends) ConsumeSpare(j);
      if (node == guard_.node && !ends) {
        guard_.spare.memory_bytes -= j.memory_bytes;
        guard_.spare.cpu_millis -= j.cpu_millis;
        if (guard_.spare.slots != kNodeUnlimited) guard_.spare.slots -= 1;
      }
      Admit(j, d);
      placer_->Take(static_cast<uint32_t>(node), j.memory_bytes, j.cpu_millis,
                    now_ + absl::Nanoseconds(j.duration_ns));
      place.node = node;
      return;
    }
  }
  if (fits_somewhere) {
    // A node has room now, but the reservation holds it (or the cluster's).
    WaitForPriority(j, d, /*fits=*/true);
    if (d.dimension == Dimension::kUnspecified && guard_.node >= 0) {
      place.on_node = true;
      place.short_node = guard_.node;
      const NodeAmounts& cap = p_.nodes.capacity(guard_.node);
      const bool mem = j.memory_bytes > guard_.spare.memory_bytes;
      d.dimension = mem ? Dimension::kMemory : Dimension::kCpu;
      d.needed = Needed(j, d.dimension);
      d.free = mem ? guard_.spare.memory_bytes : guard_.spare.cpu_millis;
      d.capacity = mem ? cap.memory_bytes : cap.cpu_millis;
      place.cluster_free = ClusterFree(group, d.dimension);
    }
    return;
  }
  // No node has room now: wait for the node dimension that is short.
  const NodeShort s = placer_->ShortNow(group, j.memory_bytes, j.cpu_millis);
  d.verdict = Verdict::kWait;
  d.reason = NodeReasonFor(s.dimension);
  d.dimension = s.dimension == Dimension::kUnspecified ? Dimension::kWorkerSlots
                                                       : s.dimension;
  d.needed = Needed(j, d.dimension);
  d.free = s.free;
  d.capacity = s.capacity;
  place.on_node = true;
  place.short_node = s.node;
  place.cluster_free = ClusterFree(group, d.dimension);
  if (!res_.active) {
    Reserve(j, d, k);
    if (s.node >= 0) {
      // Fits now on the named node if its estimate in the short dimension
      // shrinks to what that node has free.
      const NodeAmounts& f = placer_->free(s.node);
      if (s.dimension == Dimension::kMemory && f.cpu_millis >= j.cpu_millis) {
        d.fits_memory_bytes = std::min(f.memory_bytes, free_.memory_bytes);
        d.fits_cpu_millis = std::min(f.cpu_millis, free_.cpu_millis);
      } else if (s.dimension == Dimension::kCpu) {
        d.fits_memory_bytes = std::min(f.memory_bytes, free_.memory_bytes);
        d.fits_cpu_millis = std::min(f.cpu_millis, free_.cpu_millis);
      }
    }
  }
}

absl::Time Walk::ReserveOnNode(const JobRecord& j, size_t k, absl::Time start) {
  const uint32_t group = p_.pool_group[j.pool];
  const NodePlacer::Slot slot =
      placer_->Reserve(group, j.memory_bytes, j.cpu_millis, start);
  out_.placements[k].node = slot.node;
  guard_.node = slot.node;
  guard_.spare = slot.spare;
  const bool overdue = p_.holder == static_cast<int64_t>(out_.decisions[k].job) &&
                       state_.reservation_promised <= now_;
  if (overdue && slot.node >= 0) {
    // As for the cluster: only what is free now beyond the head's needs.
    const NodeAmounts& f = placer_->free(slot.node);
    guard_.spare = {SatSub(f.memory_bytes, j.memory_bytes),
                    SatSub(f.cpu_millis, j.cpu_millis),
                    f.slots == kNodeUnlimited ? f.slots : SatSub(f.slots, 1)};
  }
  return slot.node >= 0 ? slot.start : absl::InfiniteFuture();
}

void Walk::FillNeverFitsOnNode(const JobRecord& j, Decision& d, size_t k) const {
  const NodeShort s = p_.nodes.Largest(p_.pool_group[j.pool], j.memory_bytes,
                                       j.cpu_millis);
  NodePlacement& place = out_.placements[k];
  place.on_node = true;
  place.short_node = s.node;
  d.dimension = s.dimension;
  d.needed = Needed(j, s.dimension);
  d.capacity = s.capacity;
  d.free = s.node >= 0 ? (s.dimension == Dimension::kCpu
                              ? placer_->free(s.node).cpu_millis
                              : placer_->free(s.node).memory_bytes)
                       : 0;
  place.cluster_free = ClusterFree(p_.pool_group[j.pool], s.dimension);
  d.fits_memory_bytes = Decision::kNoFit;
  d.fits_cpu_millis = Decision::kNoFit;
  if (s.node >= 0) {
    const NodeAmounts& cap = p_.nodes.capacity(s.node);
    d.fits_memory_bytes = std::min(cap.memory_bytes, budgets_.memory_bytes);
    d.fits_cpu_millis = std::min(cap.cpu_millis, budgets_.cpu_millis);
  }
}

}  // namespace berth::planner::internal
