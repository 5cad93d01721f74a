// KeepHolder (incremental_rank.h): the reservation holder moved forward in
// the lazily drawn ranking as KeepReservationHolder (plan.cc) moves it in the
// whole one.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "planner/plan/incremental_rank.h"
#include "planner/plan/prepare.h"

namespace berth::planner {

void KeepHolder(const IncrementalPlanner::Index& x, const State& state, uint32_t holder,
                int32_t prio, int32_t ceiling, absl::Time reached_top, RankStream& stream,
                std::vector<uint32_t>& buffer) {
  const IncrementalPlanner::Index::Entry& he = x.entries[holder];
  const bool aged = prio != he.priority;
  if (stream.CanSkip() && !aged) {
    // "fifo" from the fit index (slots in rank order): the holder goes right
    // after the last job ranked before it whose own priority is above
    // `prio`, found per priority level (each level's jobs in the same order).
    const RankKey key{he.created, &he.id, holder, he.since};
    size_t before = 0;
    for (const auto& [priority, level] : x.levels) {
      if (priority <= prio) break;  // levels by priority, highest first
      auto it = level.all.lower_bound(key);
      if (it == level.all.begin()) continue;
      --it;
      before = std::max(before, x.fit.slot_of(it->handle) + 1);
    }
    stream.Detour(before, x.fit.slot_of(holder));
    return;
  }
  // Draw up to it, then move it ahead of the jobs just before it whose own
  // priority is not above its effective one.
  uint32_t h;
  while (stream.Next(h)) {
    buffer.push_back(h);
    if (h == holder) break;
  }
  if (buffer.empty() || buffer.back() != holder) return;
  size_t first = buffer.size() - 1;
  while (first > 0) {
    const QueuedJob& q = state.queued[x.entries[buffer[first - 1]].pos];
    if (q.priority > prio) break;
    if (aged && q.priority >= ceiling && internal::WaitingSince(q) > reached_top) break;
    --first;
  }
  std::rotate(buffer.begin() + static_cast<std::ptrdiff_t>(first), buffer.end() - 1,
              buffer.end());
}

}  // namespace berth::planner
