// RankStream::NextFitting under "drf" (incremental_rank.h): the ranking's
// merge of the workspaces' runs, passing over the jobs that cannot be
// admitted with their shares added in bulk (ShareIndex,
// incremental_share.h), so that the jobs it returns and the shares after
// them are those the one-by-one merge gives.
//
// Why a level's prefix can be passed over at once: a workspace's share only
// grows with its own jobs, added in its run's order, so each run's shares
// before its successive jobs do not decrease, and the merge always draws
// from a run of the smallest share. If the first job within the limits of
// run r comes when r's share is s_r, let s = min_r s_r: while any run's
// share is below s, the merge draws from such a run, so every job whose
// share before it is below s is drawn before any other — and none of them
// is within the limits (each comes before its run's first one). Passing them
// over leaves each run at its first job whose share before it is at least s
// (its share the exact sum, ShareIndex's units); the merge goes on from
// there one job at a time, with its own tie-breaks, to the next job within
// the limits.
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "planner/model/saturating.h"
#include "planner/plan/incremental_rank.h"
#include "planner/ranking/drf_keys.h"

namespace berth::planner {
namespace {

constexpr FitIndex::Limits kAnyJob{internal::kInt64Max, internal::kInt64Max,
                                   internal::kInt64Max, /*waiting_too=*/true};


}  // namespace

void RankStream::UseShares(const ShareIndex& shares) {
  shares_ = &shares;
  // Every share stays a whole number of units below the exact limit if it
  // starts as one and its workspace's queued jobs' weights would not pass it.
  for (size_t w = 0; w < mem_.size(); ++w) {
    int64_t m, c;
    if (!ShareIndex::ToUnits(mem_[w], m) || !ShareIndex::ToUnits(cpu_[w], c)) exact_ = false;
  }
  // (The totals are per workspace, all priorities: each workspace with a
  // queued job once, not once per level.)
  for (uint32_t ws = 0; ws < shares.workspace_ids(); ++ws) {
    const ShareIndex::Sum all = shares.WorkspaceTotal(ws);
    if (all.live == 0) continue;  // nothing queued: its share is checked above
    const uint32_t w = x_.workspaces.rank(ws);
    int64_t m = 0, c = 0;
    if (w >= mem_.size() || !ShareIndex::ToUnits(mem_[w], m) ||
        !ShareIndex::ToUnits(cpu_[w], c) || m + all.memory >= ShareIndex::kExactLimit ||
        c + all.cpu >= ShareIndex::kExactLimit)
      exact_ = false;
  }
}

uint32_t RankStream::ShareBits(int64_t memory, int64_t cpu, const ShareIndex::Sum& more) {
  return internal::DrfShareBits(std::max(ShareIndex::FromUnits(memory + more.memory),
                                         ShareIndex::FromUnits(cpu + more.cpu)));
}

void RankStream::ApplyPending() {
  for (const auto& [from, to] : pending_) {
    for (auto it = from; it != to; ++it) AddShare(it->handle);
  }
  pending_.clear();
}

bool RankStream::PassBands(const FitIndex::Limits* a, const FitIndex::Limits* b,
                           size_t& passed) {
  // Each band's slots in its priority's aged order, and its first job
  // within the limits; the first of those in the merged order wins.
  struct Slots {
    size_t from, to;
  };
  std::vector<Slots> slots(bands_.size());
  bool any = false;
  Band winner{};
  uint32_t winner_handle = 0;
  for (size_t i = 0; i < bands_.size(); ++i) {
    const Band& band = bands_[i];
    const FitIndex& f = shares_->aged(band.priority);
    if (f.stale()) return false;
    const size_t from = f.slot_of(band.pos->handle);
    const size_t to = band.end == band.set->end() ? f.size() : f.slot_of(band.end->handle);
    if (from == FitIndex::kNone || to == FitIndex::kNone || from > to) return false;
    slots[i] = {from, to};
    size_t ignored;
    const size_t s = f.Find(from, to, a, b, ignored);
    if (s == FitIndex::kNone) continue;
    const uint32_t h = f.handle(s);
    const Index::Entry& e = x_.entries[h];
    Band c{BandKey(e.since, band.risen), band.risen,
           band.set->find(RankKey{e.created, &e.id, h, e.since}), band.end, band.priority,
           band.set};
    if (c.key == internal::kInt64Max || c.key == internal::kInt64Min) return false;
    if (!any || BandAfter(winner, c)) {
      winner = c;
      winner_handle = h;
    }
    any = true;
  }
  // Where each band's jobs ranked before the winner end.
  std::vector<AgedSet::const_iterator> bounds(bands_.size());
  for (size_t i = 0; i < bands_.size(); ++i) {
    const Band& band = bands_[i];
    if (!any) {
      bounds[i] = band.end;
      continue;
    }
    // A job of this band is before the winner iff (since + risen x step,
    // risen, created, id) is less than the winner's.
    int64_t rise_ns, since;
    if (__builtin_mul_overflow(band.risen, step_, &rise_ns) ||
        __builtin_sub_overflow(winner.key, rise_ns, &since))
      return false;
    const Index::Entry& we = x_.entries[winner_handle];
    AgedSet::const_iterator bound;
    if (band.risen < winner.risen) {
      if (since == internal::kInt64Max) return false;
      bound = LowerBoundSince(*band.set, since + 1);
    } else if (band.risen > winner.risen) {
      bound = LowerBoundSince(*band.set, since);
    } else {
      bound = band.set->lower_bound(RankKey{we.created, &we.id, winner_handle, since});
    }
    const FitIndex& f = shares_->aged(band.priority);
    const size_t at = bound == band.set->end() ? f.size() : f.slot_of(bound->handle);
    if (at == FitIndex::kNone) return false;
    if (at <= slots[i].from) {
      bounds[i] = band.pos;
    } else if (at >= slots[i].to) {
      bounds[i] = band.end;
    } else {
      bounds[i] = bound;
    }
  }
  size_t out = 0;
  for (size_t i = 0; i < bands_.size(); ++i) {
    Band band = bands_[i];
    if (bounds[i] != band.pos) {
      const FitIndex& f = shares_->aged(band.priority);
      const size_t at = bounds[i] == band.set->end() ? f.size() : f.slot_of(bounds[i]->handle);
      size_t count;
      f.Find(slots[i].from, at, nullptr, nullptr, count);
      count -= HolderIn(f, slots[i].from, at);
      passed += count;
      drawn_ += count;
      pending_.emplace_back(band.pos, bounds[i]);
      band.pos = bounds[i];
      if (band.pos == band.end) continue;
      band.key = BandKey(band.pos->since, band.risen);
    }
    bands_[out++] = band;
  }
  bands_.resize(out);
  std::make_heap(bands_.begin(), bands_.end(), BandOrder());
  return true;
}

bool RankStream::Jump(const FitIndex::Limits* a, const FitIndex::Limits* b, size_t& passed) {
  const ShareIndex& s = *shares_;
  const FitIndex& fit = s.fit();
  // Every share in whole units, every run's sums below the exact limit,
  // before anything changes.
  uint32_t least = 0;
  bool any = false;
  // Below the aging ceiling a run's jobs that aged were drawn at a higher
  // level: each run is looked at only up to its first such job (`stop`),
  // whose place bounds the jobs passed over as a job within the limits does.
  const int64_t aged_before = unaged_only_ ? RiseBound(1) : internal::kInt64Min;
  for (Run& r : heap_) {
    int64_t m, c;
    if (!ShareIndex::ToUnits(mem_[r.ws], m) || !ShareIndex::ToUnits(cpu_[r.ws], c)) return false;
    if (!r.exact_checked) {
      const ShareIndex::Sum all = s.Total(r.slot, r.end_slot);
      if (m + all.memory >= ShareIndex::kExactLimit || c + all.cpu >= ShareIndex::kExactLimit)
        return false;
      r.exact_checked = true;
    }
    r.stop = r.end_slot;
    if (unaged_only_) {
      if (const size_t aged = s.FirstSince(r.slot, r.end_slot, aged_before);
          aged != FitIndex::kNone)
        r.stop = aged;
    }
    // The first job within the limits found last time, if still within
    // them, is still the first (none before it was within wider limits).
    const size_t from = std::max(r.slot, r.no_fit_before);
    if (from < r.stop && fit.slot_of(fit.handle(from)) == from &&
        (x_.Within(fit.handle(from), a, fit.default_duration()) ||
         x_.Within(fit.handle(from), b, fit.default_duration()))) {
      r.fit = from;
    } else {
      size_t ignored;
      r.fit = fit.Find(from, r.stop, a, b, ignored);
    }
    r.no_fit_before = r.fit == FitIndex::kNone ? r.stop : r.fit;
    if (r.late != kNoLate) {  // the job the holder follows stops the pass as well
      const size_t late = fit.slot_of(r.late);
      if (late != FitIndex::kNone && late >= r.slot && late < r.stop && late < r.fit)
        r.fit = late;
    }
    const size_t point = r.fit != FitIndex::kNone ? r.fit
                         : r.stop < r.end_slot     ? r.stop
                                                   : FitIndex::kNone;
    if (point == FitIndex::kNone) continue;
    const uint32_t bits = ShareBits(m, c, s.Total(r.slot, point));
    least = any ? std::min(least, bits) : bits;
    any = true;
  }
  size_t out = 0;
  for (size_t i = 0; i < heap_.size(); ++i) {
    Run r = heap_[i];
    const size_t from = r.slot;
    int64_t m = 0, c = 0;
    ShareIndex::ToUnits(mem_[r.ws], m);
    ShareIndex::ToUnits(cpu_[r.ws], c);
    ShareIndex::Sum sum;
    size_t next = r.slot;
    if (!any) {  // no job of the level within the limits: all passed over
      sum = s.Total(r.slot, r.stop);
      next = r.stop;
    } else if (internal::DrfShareBits(std::max(mem_[r.ws], cpu_[r.ws])) < least) {
      const size_t t = s.Reach(r.slot, r.stop, m, c, least, sum);
      next = t == FitIndex::kNone ? r.stop : t + 1;
    }
    if (sum.live > 0) {
      mem_[r.ws] = ShareIndex::FromUnits(m + sum.memory);
      cpu_[r.ws] = ShareIndex::FromUnits(c + sum.cpu);
      const size_t live = sum.live - HolderIn(fit, from, next);
      passed += live;
      drawn_ += live;
      size_t ignored;
      const size_t n = fit.Find(next, r.end_slot, &kAnyJob, nullptr, ignored);
      if (n == FitIndex::kNone) continue;  // the run is done
      const uint32_t h = fit.handle(n);
      const Index::Entry& e = x_.entries[h];
      r.pos = r.set->find(RankKey{e.created, &e.id, h, e.since});
      SkipAged(r);
      if (r.pos == r.end) continue;
      r.slot = fit.slot_of(r.pos->handle);
      Rekey(r);
    }
    heap_[out++] = r;
  }
  heap_.resize(out);
  std::make_heap(heap_.begin(), heap_.end(), RunOrder());
  return true;
}

bool RankStream::NextFittingDrf(const FitIndex::Limits* a, const FitIndex::Limits* b,
                                uint32_t& h, size_t& passed) {
  passed = 0;
  bool jumped = false;
  while (true) {
    if (band_) {
      if (!bands_.empty() && exact_ && !PassBands(a, b, passed)) exact_ = false;
      if (NextAged(h)) return true;  // within the limits, unless !exact_
      band_ = false;
      if (!NextLevel()) return false;
      jumped = false;
      if (lead_wanted_ && level_ == lead_level_) {
        lead_wanted_ = false;
        lead_ = true;
        h = skip_;
        return true;
      }
      continue;
    }
    if (heap_.empty()) {
      band_ = true;
      StartBand();
      continue;
    }
    if (!jumped) {
      // Jobs drawn one by one first, about as many as a jump costs: the next
      // job within the limits is often among them (before the reservation
      // is placed, every job not waiting for a dependency is).
      const size_t draws = draws_per_run_ * heap_.size();
      const int64_t default_ns = shares_->fit().default_duration();
      for (size_t i = 0; i < draws && !heap_.empty(); ++i) {
        NextOwn(h);
        if (Skipped(h) || holder_due_ || x_.Within(h, a, default_ns) ||
            x_.Within(h, b, default_ns))
          return true;
        ++passed;
      }
      if (heap_.empty()) continue;
      if (!exact_ || !Jump(a, b, passed)) {
        exact_ = false;  // drawn one by one from here, the walk deciding each
        return NextOwn(h);
      }
      jumped = true;
      continue;
    }
    const size_t first = heap_.front().fit;
    const size_t stop = heap_.front().stop;
    NextOwn(h);
    if (Skipped(h)) return true;  // dropped by NextFitting, which looks again
    // Within the limits, or past where its run was looked at: the walk
    // decides it (and the next call looks again).
    if (const size_t at = shares_->fit().slot_of(h); at == first || at >= stop) return true;
    ++passed;  // ranked before the next job within the limits
  }
}

}  // namespace berth::planner
