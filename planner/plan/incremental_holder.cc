// KeepHolder (incremental_rank.h): the reservation holder moved forward in
// the lazily drawn ranking as KeepReservationHolder (plan.cc) moves it in the
// whole one.
#include <algorithm>
#include <cstddef>
#include <iterator>
#include <vector>

#include "planner/plan/incremental_rank.h"
#include "planner/model/saturating.h"
#include "planner/plan/prepare.h"

namespace berth::planner {
namespace {

// Beyond this many jobs of the ceiling's level queued apart from their
// creation ranked before the holder, or this many jobs of the level looked
// at to find them, drawing up to it costs about as much.
constexpr size_t kMaxOdd = 32;
constexpr size_t kMaxLooked = 8 * kMaxOdd;

// Raises `before` past the last job of `level` (the ceiling's) ranked before
// the holder (`key`) that reached the ceiling after it (`reached_top`); false
// if that takes more than kMaxOdd checks (or kMaxLooked jobs looked at), or
// the level's fifo order is not kept. A job queued at its created_at ranked
// before the holder was queued before the holder's created_at + 1 ns (ranks
// compare whole nanoseconds): if that is not after `reached_top`, only the
// level's odd jobs (Entry::odd) can be.
bool AgedBefore(const IncrementalPlanner::Index& x, const State& state,
                const IncrementalPlanner::Index::Level& level, const RankKey& key,
                absl::Time reached_top, size_t& before) {
  const QueuedJob& holder = state.queued[x.entries[key.handle].pos];
  if (holder.created_at + absl::Nanoseconds(1) > reached_top || key.created == internal::kInt64Max ||
      key.created == internal::kInt64Min)
    return false;
  if (level.odd == 0) return true;
  if (!x.fifo_kept) return false;
  size_t checked = 0, looked = 0;
  for (auto it = level.all.begin(); it != level.all.end() && RankKeyLess()(*it, key); ++it) {
    if (++looked > kMaxLooked) return false;
    const IncrementalPlanner::Index::Entry& e = x.entries[it->handle];
    if (!e.odd) continue;
    if (++checked > kMaxOdd) return false;
    if (internal::WaitingSince(state.queued[e.pos]) > reached_top)
      before = std::max(before, x.fit.slot_of(it->handle) + 1);
  }
  return true;
}

}  // namespace

// Each run's late jobs (waiting since after the bound) end it: the level's
// jobs wait since their created_at, its runs' order. So the holder follows
// the last of the runs' last jobs to be drawn, if late. That one comes after
// every such job of a smaller share before it (ShareIndex units, as the
// merge compares them): a run whose share is below the one the merge draws
// from is drawn first, and a run's share only grows. Only the tied ones of
// the largest share remain to be drawn in turn; if a share cannot be known
// exactly, every run's last late job is kept.
void RankStream::SetLateStops() {
  late_wanted_ = false;
  struct Stop {
    size_t run;
    uint32_t bits;
  };
  std::vector<Stop> stops;
  bool known = shares_ != nullptr && exact_;
  uint32_t largest = 0;
  for (size_t i = 0; i < heap_.size(); ++i) {
    const Run& r = heap_[i];
    const RankKey& last = *std::prev(r.end);
    if (last.since <= late_bound_) continue;
    uint32_t bits = 0;
    if (known) {
      const size_t slot = shares_->fit().slot_of(last.handle);
      int64_t m, c;
      if (slot == FitIndex::kNone || slot < r.slot || slot >= r.end_slot ||
          !ShareIndex::ToUnits(mem_[r.ws], m) || !ShareIndex::ToUnits(cpu_[r.ws], c)) {
        known = false;
      } else {
        const ShareIndex::Sum before = shares_->Total(r.slot, slot);
        if (m + before.memory >= ShareIndex::kExactLimit ||
            c + before.cpu >= ShareIndex::kExactLimit) {
          known = false;
        } else {
          bits = ShareBits(m, c, before);
        }
      }
    }
    largest = std::max(largest, bits);
    stops.push_back(Stop{i, bits});
  }
  for (const Stop& s : stops) {
    if (known && s.bits != largest) continue;
    heap_[s.run].late = std::prev(heap_[s.run].end)->handle;
    ++late_left_;
  }
}

void KeepHolder(const IncrementalPlanner::Index& x, const State& state, uint32_t holder,
                int32_t prio, int32_t ceiling, absl::Time reached_top, RankStream& stream,
                std::vector<uint32_t>& buffer) {
  const IncrementalPlanner::Index::Entry& he = x.entries[holder];
  const bool aged = prio != he.priority;
  if (stream.CanDetour()) {
    // "fifo" from the fit index (slots in rank order): the holder goes right
    // after the last job ranked before it whose own priority is above
    // `prio`, found per priority level (each level's jobs in the same
    // order), or, if it aged, of the ceiling's level and queued after it
    // reached the ceiling.
    const RankKey key{he.created, &he.id, holder, he.since};
    size_t before = 0;
    bool found = true;
    for (const auto& [priority, level] : x.levels) {
      if (priority <= prio) {
        if (aged && priority == ceiling) found = AgedBefore(x, state, level, key, reached_top, before);
        if (priority <= ceiling) break;
        continue;
      }
      auto it = level.all.lower_bound(key);
      if (it == level.all.begin()) continue;
      --it;
      before = std::max(before, x.fit.slot_of(it->handle) + 1);
    }
    if (found) {
      stream.Detour(before, x.fit.slot_of(holder));
      return;
    }
  }
  // "drf" passing over jobs with the share index, the holder at the top
  // level (no band of aged jobs above it): unless it aged and a job of the
  // level reached it later, no job of the level stays ahead of it, and every
  // job of a level above has a higher own priority.
  if (stream.drf() && stream.CanSkip() && prio >= ceiling && !aged) {
    stream.HolderLeads(holder, prio);
    return;
  }
  uint32_t h;
  bool reached = false;  // the holder drawn
  // Aged to the ceiling: it stays behind the ceiling's own jobs queued after
  // it reached the ceiling ("late"), and goes right after the last of them
  // drawn — the ceiling's own jobs are drawn before the jobs aged to it, so
  // before the holder's own place. The stream that passes over jobs finds
  // that job itself (RankStream::HolderAfterLate); otherwise the ranking is
  // drawn only until every late job is, the holder then decided there and
  // skipped where it ranks (SkipLater): the rest of the level's own jobs and
  // the aged ones ranked before it are not drawn to find it.
  if (aged && prio >= ceiling && stream.drf()) {
    if (const auto level = x.levels.find(prio); level != x.levels.end()) {
      // The last whole nanosecond at or before reached_top: since > bound
      // is since > reached_top.
      int64_t bound = absl::ToUnixNanos(reached_top);
      if (bound > internal::kInt64Min && absl::FromUnixNanos(bound) > reached_top) --bound;
      const AgedSet& by_since = level->second.aged;
      const auto first_late =
          bound < internal::kInt64Max ? LowerBoundSince(by_since, bound + 1) : by_since.end();
      // Passing over jobs with the share index: the stream finds the last
      // late job itself, without drawing the jobs before it.
      if (stream.CanSkip() && first_late == by_since.end()) {
        stream.HolderLeads(holder, prio);
        return;
      }
      if (first_late != by_since.end() && stream.CanSkip() && level->second.odd == 0) {
        stream.HolderAfterLate(holder, prio, bound);
        return;
      }
      size_t late = static_cast<size_t>(std::distance(first_late, by_since.end()));
      while (late > 0 && !reached && stream.Next(h)) {
        buffer.push_back(h);
        reached = h == holder;  // cannot be: it ranks after them
        const IncrementalPlanner::Index::Entry& e = x.entries[h];
        late -= e.priority == prio && e.since > bound;
      }
      if (!buffer.empty() && !reached) {
        buffer.push_back(holder);
        stream.SkipLater(holder);
        return;
      }
    }
  }
  // Draw up to it, then move it ahead of the jobs just before it whose own
  // priority is not above its effective one.
  while (!reached && stream.Next(h)) {
    buffer.push_back(h);
    reached = h == holder;
  }
  if (!reached) return;
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
