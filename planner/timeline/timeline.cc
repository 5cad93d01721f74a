#include "planner/timeline/timeline.h"

#include <algorithm>

#include "planner/model/saturating.h"

namespace berth::planner {

using internal::SatAdd;

bool Covers(const Amounts& free, const Amounts& need) {
  return need.memory_bytes <= free.memory_bytes &&
         need.cpu_millis <= free.cpu_millis &&
         need.worker_slots <= free.worker_slots &&
         need.pool_slots <= free.pool_slots &&
         need.workspace_slots <= free.workspace_slots;
}

void Timeline::AddRelease(absl::Time end, int64_t memory_bytes,
                          int64_t cpu_millis, Key pool, Key workspace) {
  if (!releases_.empty() && end < releases_.back().end) sorted_ = false;
  releases_.push_back(Release{end, std::max<int64_t>(memory_bytes, 0),
                              std::max<int64_t>(cpu_millis, 0), pool,
                              workspace});
}

void Timeline::SortIfNeeded() {
  if (sorted_) return;
  // Only the end matters: releases at the same time are applied together
  // (and their sums saturate the same in any order), so an unstable sort
  // will do: a stable one allocated a buffer on every plan.
  std::sort(releases_.begin(), releases_.end(),
            [](const Release& a, const Release& b) { return a.end < b.end; });
  sorted_ = true;
}

namespace {

void Apply(Amounts& a, int64_t mem, int64_t cpu, bool same_pool,
           bool same_workspace) {
  a.memory_bytes = SatAdd(a.memory_bytes, mem);
  a.cpu_millis = SatAdd(a.cpu_millis, cpu);
  a.worker_slots = SatAdd(a.worker_slots, 1);
  if (same_pool) a.pool_slots = SatAdd(a.pool_slots, 1);
  if (same_workspace) a.workspace_slots = SatAdd(a.workspace_slots, 1);
}

}  // namespace

Amounts Timeline::FreeAt(absl::Time t, const Amounts& free_now, Key pool,
                         Key workspace) {
  SortIfNeeded();
  Amounts free = free_now;
  for (const Release& r : releases_) {
    if (r.end > t) break;
    Apply(free, r.memory_bytes, r.cpu_millis, r.pool == pool,
          r.workspace == workspace);
  }
  return free;
}

absl::Time Timeline::EarliestFit(absl::Time now, const Amounts& free_now,
                                 const Amounts& need, Key pool,
                                 Key workspace) {
  if (Covers(free_now, need)) return now;
  SortIfNeeded();
  Amounts free = free_now;
  size_t i = 0;
  while (i < releases_.size()) {
    const absl::Time t = releases_[i].end;
    // Apply every release at time t before checking.
    for (; i < releases_.size() && releases_[i].end == t; ++i) {
      const Release& r = releases_[i];
      Apply(free, r.memory_bytes, r.cpu_millis, r.pool == pool,
            r.workspace == workspace);
    }
    if (Covers(free, need)) return std::max(t, now);
  }
  return absl::InfiniteFuture();
}

}  // namespace berth::planner
