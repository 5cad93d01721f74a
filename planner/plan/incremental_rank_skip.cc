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

#include "planner/model/saturating.h"
#include "planner/plan/incremental_rank.h"
#include "planner/ranking/drf_keys.h"

namespace berth::planner {
namespace {

constexpr FitIndex::Limits kAnyJob{internal::kInt64Max, internal::kInt64Max,
                                   internal::kInt64Max, /*waiting_too=*/true};

}  // namespace

bool RankStream::Jump(const FitIndex::Limits* a, const FitIndex::Limits* b, size_t& passed) {
  const ShareIndex& s = *shares_;
  const FitIndex& fit = s.fit();
  // Every share in whole units, every run's sums below the exact limit,
  // before anything changes.
  uint32_t least = 0;
  bool any = false;
  for (Run& r : heap_) {
    int64_t m, c;
    if (!ShareIndex::ToUnits(mem_[r.ws], m) || !ShareIndex::ToUnits(cpu_[r.ws], c)) return false;
    const ShareIndex::Sum all = s.Total(r.slot, r.end_slot);
    if (m + all.memory >= ShareIndex::kExactLimit || c + all.cpu >= ShareIndex::kExactLimit)
      return false;
    size_t ignored;
    r.fit = fit.Find(r.slot, r.end_slot, a, b, ignored);
    if (r.fit == FitIndex::kNone) continue;
    const ShareIndex::Sum before = s.Total(r.slot, r.fit);
    const uint32_t bits = internal::DrfShareBits(std::max(
        ShareIndex::FromUnits(m + before.memory), ShareIndex::FromUnits(c + before.cpu)));
    least = any ? std::min(least, bits) : bits;
    any = true;
  }
  size_t out = 0;
  for (size_t i = 0; i < heap_.size(); ++i) {
    Run r = heap_[i];
    int64_t m = 0, c = 0;
    ShareIndex::ToUnits(mem_[r.ws], m);
    ShareIndex::ToUnits(cpu_[r.ws], c);
    ShareIndex::Sum sum;
    size_t next = r.slot;
    if (!any) {  // no job of the level within the limits: all passed over
      sum = s.Total(r.slot, r.end_slot);
      next = r.end_slot;
    } else if (internal::DrfShareBits(std::max(mem_[r.ws], cpu_[r.ws])) < least) {
      const size_t t = s.Reach(r.slot, r.end_slot, m, c, least, sum);
      next = t == FitIndex::kNone ? r.end_slot : t + 1;
    }
    if (sum.live > 0) {
      mem_[r.ws] = ShareIndex::FromUnits(m + sum.memory);
      cpu_[r.ws] = ShareIndex::FromUnits(c + sum.cpu);
      passed += sum.live;
      drawn_ += sum.live;
      size_t ignored;
      const size_t n = fit.Find(next, r.end_slot, &kAnyJob, nullptr, ignored);
      if (n == FitIndex::kNone) continue;  // the run is done
      const uint32_t h = fit.handle(n);
      const Index::Entry& e = x_.entries[h];
      r.pos = r.set->find(RankKey{e.created, &e.id, h, e.since});
      r.slot = n;
      Rekey(r);
    }
    heap_[out++] = r;
  }
  heap_.resize(out);
  std::make_heap(heap_.begin(), heap_.end(), After);
  return true;
}

bool RankStream::NextFittingDrf(const FitIndex::Limits* a, const FitIndex::Limits* b,
                                uint32_t& h, size_t& passed) {
  passed = 0;
  bool jumped = false;
  while (true) {
    if (band_) {  // (no aging here: no aged band)
      if (NextAged(h)) return true;
      band_ = false;
      if (!NextLevel()) return false;
      jumped = false;
      continue;
    }
    if (heap_.empty()) {
      band_ = true;
      StartBand();
      continue;
    }
    if (!jumped) {
      if (!exact_ || !Jump(a, b, passed)) {
        exact_ = false;  // drawn one by one from here, the walk deciding each
        return NextOwn(h);
      }
      jumped = true;
      continue;
    }
    const size_t first = heap_.front().fit;
    NextOwn(h);
    if (shares_->fit().slot_of(h) == first) return true;
    ++passed;  // ranked before the next job within the limits
  }
}

}  // namespace berth::planner
