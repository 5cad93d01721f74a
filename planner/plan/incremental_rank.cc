// RankStream (incremental_rank.h): the "drf" and "fifo" rankings
// (planner/ranking/ranking_drf.cc, ranking_fifo.cc) drawn lazily. Each key
// and tie-break here mirrors one there; incremental_test holds them equal.
#include "planner/plan/incremental_rank.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>

#include "planner/model/saturating.h"
#include "planner/ranking/drf_keys.h"

namespace berth::planner {
namespace {

using internal::SatAdd;
using internal::SatSub;

const std::string kEmptyId;




int64_t Risen(int64_t rise) { return std::min<int64_t>(rise, UINT16_MAX); }

// Restores a heap (std::make_heap's, by `after`) whose top was changed in
// place: one pass down, where pop_heap then push_heap of the new top takes
// two. The orders here are total (no two elements rank equal), so the top
// is the same either way.
// Most calls (an aged band or a run drawn from again) leave the top where
// it is: that is settled by its children alone, before the top is copied.
template <typename T, typename After>
void SiftTop(std::vector<T>& heap, After after) {
  const size_t n = heap.size();
  if (n < 2) return;
  size_t first = 1;  // the child ranked first
  if (n > 2 && after(heap[1], heap[2])) first = 2;
  if (!after(heap[0], heap[first])) return;
  T top = heap[0];
  heap[0] = heap[first];
  size_t i = first;
  while (true) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && after(heap[c], heap[c + 1])) ++c;  // the child ranked first
    if (!after(top, heap[c])) break;
    heap[i] = heap[c];
    i = c;
  }
  heap[i] = top;
}

// Removes a heap's top.
template <typename T, typename After>
void PopTop(std::vector<T>& heap, After after) {
  heap[0] = heap.back();
  heap.pop_back();
  SiftTop(heap, after);
}

}  // namespace

AgedSet::const_iterator LowerBoundSince(const AgedSet& s, int64_t since) {
  return s.lower_bound(RankKey{internal::kInt64Min, &kEmptyId, 0, since});
}

RankStream::RankStream(const Index& x, bool drf, bool aging, int64_t now_ns, int64_t step,
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

bool RankStream::NextFitting(const FitIndex::Limits* a, const FitIndex::Limits* b,
                             uint32_t& h, size_t& passed) {
  passed = 0;
  if (shares_ != nullptr) {
    // The holder drawn in its place is dropped (SkipLater), not counted.
    size_t more;
    bool found;
    do {
      found = NextFittingDrf(a, b, h, more);
      passed += more;
    } while (found && Skipped(h) && !std::exchange(lead_, false));
    return found;
  }
  for (; segment_ < segments_.size(); ++segment_) {
    const auto [from, to] = segments_[segment_];
    size_t more = 0;
    const size_t s = fit_->Find(std::max(slot_, from), to, a, b, more);
    passed += more;
    if (s != FitIndex::kNone) {
      h = fit_->handle(s);
      slot_ = s + 1;
      return true;
    }
    slot_ = 0;  // the next range from its start
  }
  return false;
}

bool RankStream::HolderIn(const FitIndex& f, size_t from, size_t to) const {
  if (!skipping_) return false;
  const size_t s = f.slot_of(skip_);
  return s != FitIndex::kNone && s >= from && s < to;
}

bool RankStream::Next(uint32_t& h) {
  if (fit_ != nullptr) {
    static constexpr FitIndex::Limits kAny{internal::kInt64Max, internal::kInt64Max,
                                           internal::kInt64Max, /*waiting_too=*/true};
    size_t passed;
    return NextFitting(&kAny, nullptr, h, passed);
  }
  if (!drf_) {
    if (fifo_ == x_.fifo.end()) return false;
    h = (fifo_++)->handle;
    return true;
  }
  while (true) {
    if (band_) {
      if (NextAged(h)) {
        if (Skipped(h)) continue;
        return true;
      }
      band_ = false;
      if (!NextLevel()) return false;
      continue;
    }
    if (NextOwn(h)) {
      if (Skipped(h)) continue;
      return true;
    }
    band_ = true;
    StartBand();
  }
}

bool RankStream::After(const Run& a, const Run& b) {
  if (a.share != b.share) return a.share > b.share;
  if (a.since != b.since) return a.since > b.since;
  if (a.turn != b.turn) return a.turn > b.turn;
  if (a.salt != b.salt) return a.salt > b.salt;
  return a.ws > b.ws;
}

bool RankStream::BandAfter(const Band& a, const Band& b) {
  if (a.key != b.key) return a.key > b.key;
  if (a.risen != b.risen) return a.risen > b.risen;  // the higher own priority first
  if (a.pos->created != b.pos->created) return a.pos->created > b.pos->created;
  return *a.pos->id > *b.pos->id;
}

int64_t RankStream::RiseBound(int64_t levels) const {
  return SatAdd(SatSub(now_, internal::SatMul(levels, step_)), 1);
}

int64_t RankStream::BandKey(int64_t since, int64_t risen) const {
  return SatAdd(since, internal::SatMul(step_, risen));
}

// Moves to the next (lower) level that has own or aged jobs.
bool RankStream::NextLevel() {
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
      // The job of p queued first among those below the current level.
      auto it = level_ > ceiling_ ? level.aged.begin()
                                  : LowerBoundSince(level.aged, RiseBound(level_ - p));
      if (it == level.aged.end() || it->since >= now_) continue;
      const int64_t steps = static_cast<int64_t>(
          (static_cast<uint64_t>(now_) - static_cast<uint64_t>(it->since)) /
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

void RankStream::StartOwn() {
  heap_.clear();
  auto it = x_.levels.find(static_cast<int32_t>(level_));
  if (it == x_.levels.end()) return;
  unaged_only_ = aging_ && level_ < ceiling_;
  const Index::Level& level = it->second;
  // Every job of the level aged (the last one queued did): all were drawn
  // at higher levels, and the level has no run. Late in a forecast this is
  // every level below the ceiling.
  if (unaged_only_ && !level.aged.empty() && std::prev(level.aged.end())->since < RiseBound(1))
    return;
  // Without odd jobs every job waits since its created_at, so a run's
  // order (created_at) is also its order of waiting since.
  monotone_ = level.odd == 0;
  for (const auto& [ws, set] : level.by_workspace) {
    const uint32_t w = x_.workspaces.rank(ws);
    Run r{0, w, 0, 0, w < turns_.size() ? turns_[w] : 0, 0, set.begin(), set.end()};
    r.set = &set;
    SkipAged(r);
    if (r.pos == r.end) continue;
    if (shares_ != nullptr) {
      r.end_slot = shares_->Run(static_cast<int32_t>(level_), ws).second;
      r.slot = shares_->fit().slot_of(r.pos->handle);
      if (r.slot == FitIndex::kNone || r.slot >= r.end_slot) exact_ = false;  // not indexed
    }
    heap_.push_back(r);
  }
  // The shares of the aged jobs passed over are read only from here on (a
  // level whose every job aged reads none): added now, before any other.
  if (heap_.empty()) return;
  ApplyPending();
  for (Run& r : heap_) Rekey(r);
  if (late_wanted_ && level_ == late_level_) SetLateStops();
  std::make_heap(heap_.begin(), heap_.end(), RunOrder());
}

// An own level's jobs that aged ranked at a higher level, earlier in this
// stream: skipping them costs no more than the jobs already drawn, or, when
// the run's order is also its order of waiting since, a lookup.
void RankStream::SkipAged(Run& r) const {
  if (!unaged_only_) return;
  const int64_t bound = RiseBound(1);
  if (r.pos == r.end || r.pos->since >= bound) return;
  if (monotone_) {
    r.pos = r.set->lower_bound(RankKey{bound, &kEmptyId, 0, bound});
    return;
  }
  while (r.pos != r.end && r.pos->since < bound) ++r.pos;
}

void RankStream::Rekey(Run& r) const {
  r.share = internal::DrfShareBits(std::max(mem_[r.ws], cpu_[r.ws]));
  r.since = r.pos->since;
  r.created = r.pos->created;
  r.salt = internal::DrfTieSalt(r.created, r.ws);
}

void RankStream::AddShare(uint32_t h) {
  if (rejected_ != nullptr && (*rejected_)[h] != 0) return;
  const Index::Entry& e = x_.EntryAt(h);
  const uint32_t w = x_.workspaces.rank(e.workspace);
  mem_[w] += ShareWeight(e.memory, inv_mem_);
  cpu_[w] += ShareWeight(e.cpu, inv_cpu_);
}

void RankStream::Count(uint32_t h) {
  AddShare(h);
  ++drawn_;
}

bool RankStream::NextOwn(uint32_t& h) {
  if (heap_.empty()) return false;
  Run& r = heap_.front();
  h = r.pos->handle;
  Count(h);
  if (h == r.late) {
    r.late = kNoLate;
    holder_due_ = --late_left_ == 0;
  }
  ++r.pos;
  SkipAged(r);
  if (shares_ != nullptr) {
    r.slot = r.pos == r.end ? r.end_slot : shares_->fit().slot_of(r.pos->handle);
    if (r.slot == FitIndex::kNone) exact_ = false;  // not indexed
  }
  if (r.pos == r.end) {
    PopTop(heap_, RunOrder());
  } else {
    Rekey(r);
    SiftTop(heap_, RunOrder());
  }
  // The other workspaces' shares are unchanged; their keys stay valid.
  return true;
}

void RankStream::StartBand() {
  bands_.clear();
  if (!aging_ || level_ > ceiling_) return;
  for (const auto& [p, level] : x_.levels) {
    if (p >= level_) continue;
    const int64_t rise = level_ - p;
    auto end = LowerBoundSince(level.aged, RiseBound(rise));
    auto pos = level_ == ceiling_ ? level.aged.begin()
                                  : LowerBoundSince(level.aged, RiseBound(rise + 1));
    if (pos == end) continue;
    bands_.push_back(Band{BandKey(pos->since, Risen(rise)), Risen(rise), pos, end, p, &level.aged});
  }
  std::make_heap(bands_.begin(), bands_.end(), BandOrder());
}

bool RankStream::NextAged(uint32_t& h) {
  if (bands_.empty()) return false;
  Band& b = bands_.front();
  h = b.pos->handle;
  Count(h);
  if (++b.pos == b.end) {
    PopTop(bands_, BandOrder());
  } else {
    // A band's jobs are in the order they were queued, not their handles':
    // the next one's entry is a cache miss that its draw (AddShare, then
    // the walk's decision) would wait for.
    __builtin_prefetch(&x_.EntryAt(b.pos->handle));
    b.key = BandKey(b.pos->since, b.risen);
    SiftTop(bands_, BandOrder());
  }
  return true;
}

}  // namespace berth::planner
