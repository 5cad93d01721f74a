// The IncrementalPlanner's ranking, drawn one job at a time from its index
// (incremental_index.h) in the order the "drf" and "fifo" policies rank the
// whole queue (planner/ranking/ranking.h), so that a plan pays only for the
// jobs it decides. Internal to planner/plan.
#ifndef BERTH_PLANNER_PLAN_INCREMENTAL_RANK_H_
#define BERTH_PLANNER_PLAN_INCREMENTAL_RANK_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "planner/model/model.h"
#include "planner/plan/incremental.h"
#include "planner/plan/incremental_index.h"
#include "planner/plan/incremental_share.h"

namespace berth::planner {

// "drf": effective priority desc; within a level the jobs at their own
// priority first, merged across workspaces by (dominant share, when the
// workspace's next job was queued, last turn, a hash, name) and within a
// workspace by created_at then id, then the jobs aged to the level by when
// they reached it (waiting since + levels x interval), then fewer levels
// risen, then created_at, then id. "fifo": created_at, then id.
class RankStream {
 public:
  using Index = IncrementalPlanner::Index;

  // `mem` and `cpu`: each workspace's running share (by name rank); `turns`
  // its last turn. `step` is the aging interval in ns (>= 1), `ceiling` the
  // aging ceiling, `top` the highest effective priority. `aging` false:
  // nobody ages. Keeps references to x, turns and state.
  RankStream(const Index& x, bool drf, bool aging, int64_t now_ns, int64_t step,
             int32_t ceiling, int32_t top, const std::vector<double>& mem,
             const std::vector<double>& cpu, const std::vector<uint64_t>& turns,
             const Budgets& b, const State& state);

  // The next job's handle; false when every job has been drawn.
  bool Next(uint32_t& h);

  // `h`, the reservation holder, was decided before the jobs not drawn yet
  // (KeepHolder put it there): the stream draws the ranking as if it were
  // in its place — its share counts where it ranks — but never returns it,
  // nor counts it among the jobs NextFitting() passes over.
  void SkipLater(uint32_t h) {
    skipping_ = true;
    skip_ = h;
  }

  // "drf" with UseShares: `h`, the reservation holder, aged to `level` (the
  // aging ceiling, whose jobs all wait since their created_at), goes right
  // after the last of the level's own jobs waiting since after `bound`
  // (KeepHolder). The stream finds that job without drawing the level to it
  // — among each workspace's last job that waits since after `bound`, the one
  // of the largest share before it (all of those tied) — and treats it as a
  // job within the limits (NextFitting stops at it, whether it is within them
  // or not); once it is drawn TakeHolderDue() gives `h`. Also SkipLater(h).
  void HolderAfterLate(uint32_t h, int32_t level, int64_t bound) {
    SkipLater(h);
    late_level_ = level;
    late_bound_ = bound;
    late_wanted_ = true;
  }
  // "drf" with UseShares: `h`, the reservation holder, of effective priority
  // `level`, goes first among the jobs of its level (KeepHolder): NextFitting
  // returns it there, whether it is within the limits or not, before drawing
  // any job of the level. Also SkipLater(h).
  void HolderLeads(uint32_t h, int32_t level) {
    SkipLater(h);
    lead_level_ = level;
    lead_wanted_ = true;
  }
  // True once, right after the job the holder follows (HolderAfterLate) was
  // drawn: `h` gets the holder, to be decided next.
  bool TakeHolderDue(uint32_t& h) {
    if (!holder_due_) return false;
    holder_due_ = false;
    h = skip_;
    return true;
  }

  // "fifo" only: draws the jobs from `fit` (x.fit, fresh, kept referenced)
  // instead of the index's tree, so that NextFitting can pass over jobs.
  void UseFit(const FitIndex& fit) {
    fit_ = &fit;
    segments_.assign(1, {0, fit.size()});
  }
  // With UseFit: draws slots [0, before), then `holder`, then the slots
  // between, then the rest: the reservation holder moved forward (as
  // KeepReservationHolder does) without drawing the jobs before it.
  // REQUIRES: before <= holder < fit.size(); nothing drawn yet.
  void Detour(size_t before, size_t holder) {
    segments_ = {{0, before}, {holder, holder + 1}, {before, holder}, {holder + 1, fit_->size()}};
  }
  // "drf": passes over jobs with the runs' slots and weights and the aged
  // orders in `shares` (x.share, fresh and exact(), kept referenced) —
  // unless a running share is not a whole number of its units or the
  // shares could pass its exact limit: then every job is drawn.
  void UseShares(const ShareIndex& shares);
  bool drf() const { return drf_; }
  bool CanSkip() const { return fit_ != nullptr || shares_ != nullptr; }
  // Whether Detour() may be used (the fifo order's fit index).
  bool CanDetour() const { return fit_ != nullptr; }
  // The next job within `a` or `b` (FitIndex::Find); `passed` gets how many
  // jobs ranked before it were passed over (drawn and not returned). False
  // when none is left (every job drawn). Under "drf" the job returned may
  // also be one the ranking draws next whatever the limits (when a share is
  // not exact in ShareIndex units): the walk decides it as any other.
  // REQUIRES: CanSkip().
  bool NextFitting(const FitIndex::Limits* a, const FitIndex::Limits* b, uint32_t& h,
                   size_t& passed);
  // "drf" with UseShares: NextFitting draws up to `per_run` jobs per run of
  // the level one by one before it passes over jobs in bulk (a jump looks
  // at every run, a few tree descents each; a draw at one heap of runs).
  static constexpr size_t kDrawsPerRun = 8;
  void DrawBeforeJumps(size_t per_run) { draws_per_run_ = per_run; }
  // Jobs the plan rejects for a dependency (`marks` by handle, non-zero:
  // Index::DependencyRejections; kept referenced): drawn in their place, as
  // the rankings rank rejected jobs, but adding nothing to their
  // workspace's share. Not with UseShares or UseFit (their bulk passes
  // would count them).
  void SetRejected(const std::vector<uint8_t>* marks) { rejected_ = marks; }
  // How many jobs were drawn (returned or passed over) so far.
  size_t drawn() const { return drawn_; }

 private:
  static constexpr uint32_t kNoLate = UINT32_MAX;
  struct Run {
    uint32_t share;
    uint32_t ws;  // rank
    int64_t since;
    int64_t created;
    uint64_t turn;
    uint64_t salt;
    RankSet::const_iterator pos, end;
    // The run's set; with shares_: the slot of its next job (pos), the end
    // of its slots, and (within one NextFitting) its first job within the
    // limits before `stop`, its first job that aged (or end_slot).
    const RankSet* set = nullptr;
    size_t slot = 0, end_slot = 0, fit = FitIndex::kNone, stop = 0;
    // HolderAfterLate: the handle of the run's job that the holder may
    // follow (a job within the limits for NextFitting), or kNoLate.
    uint32_t late = kNoLate;
    // Whether the run's shares were found exact (its share plus its jobs
    // left: that sum stays the same as it advances).
    bool exact_checked = false;
    // No job in [slot, no_fit_before) is within the limits of the last
    // NextFitting, nor of any later one of the plan: an admission walk's
    // limits only narrow as it admits (what is free and the reservation's
    // spare shrink).
    size_t no_fit_before = 0;
  };
  static bool After(const Run& a, const Run& b);
  // The jobs of one priority aged exactly `rise` levels (at the ceiling: at
  // least), in the order they reached the level.
  struct Band {
    int64_t key;    // when they reached the level: since + risen x step
    int64_t risen;  // JobRecord::aged_levels (rise, saturated)
    AgedSet::const_iterator pos, end;
    int32_t priority;  // the jobs' own
    const AgedSet* set;
  };
  static bool BandAfter(const Band& a, const Band& b);
  // The heaps' orders as function objects, so that the heap operations
  // inline them (a function pointer passed to them is called out of line).
  struct RunOrder {
    bool operator()(const Run& a, const Run& b) const { return After(a, b); }
  };
  struct BandOrder {
    bool operator()(const Band& a, const Band& b) const { return BandAfter(a, b); }
  };

  // The first waiting-since at which a job has risen fewer than `levels`
  // levels (jobs queued before it have risen at least that many).
  int64_t RiseBound(int64_t levels) const;
  int64_t BandKey(int64_t since, int64_t risen) const;
  bool NextLevel();
  void StartOwn();
  // HolderAfterLate, at the start of its level: the runs' jobs the holder
  // may follow (Run::late) and how many are left to draw.
  void SetLateStops();
  // Moves past the jobs of an own level that aged (drawn at a higher level),
  // from a job of r.set.
  void SkipAged(Run& r) const;
  void Rekey(Run& r) const;
  void Count(uint32_t h);
  bool NextOwn(uint32_t& h);
  void StartBand();
  bool NextAged(uint32_t& h);
  // "drf" with shares_ (incremental_rank_skip.cc).
  bool NextFittingDrf(const FitIndex::Limits* a, const FitIndex::Limits* b, uint32_t& h,
                      size_t& passed);
  // Passes over, in every run of the level, the jobs ranked before the first
  // job within `a` or `b` of any run (adding their shares in bulk), and
  // notes each run's first such job; false (nothing changed) when a share
  // is not exact in ShareIndex units.
  bool Jump(const FitIndex::Limits* a, const FitIndex::Limits* b, size_t& passed);
  // The same for the level's aged bands (merged by when their jobs reached
  // the level, no shares involved): passes over the jobs ranked before the
  // first job within the limits, their shares added when a level's own
  // jobs next read them (pending_); false (nothing changed) if the aged
  // orders cannot say.
  bool PassBands(const FitIndex::Limits* a, const FitIndex::Limits* b, size_t& passed);
  // The merge's key (internal::DrfShareBits) of a share of (`memory`, `cpu`)
  // units once `more` is added to it (exact: ShareIndex).
  static uint32_t ShareBits(int64_t memory, int64_t cpu, const ShareIndex::Sum& more);
  void AddShare(uint32_t h);
  void ApplyPending();
  bool Skipped(uint32_t h) const { return skipping_ && h == skip_; }
  // Whether the skipped holder is in slots [from, to) of `f` (passed over
  // with the jobs there, it is not counted among them).
  bool HolderIn(const FitIndex& f, size_t from, size_t to) const;

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
  const FitIndex* fit_ = nullptr;
  const ShareIndex* shares_ = nullptr;
  const std::vector<uint8_t>* rejected_ = nullptr;
  bool exact_ = true;  // with shares_: every share so far in whole units
  size_t draws_per_run_ = kDrawsPerRun;
  // Aged jobs passed over whose shares are not added yet (exact sums: the
  // order of addition does not matter).
  std::vector<std::pair<AgedSet::const_iterator, AgedSet::const_iterator>> pending_;
  size_t drawn_ = 0;
  // With fit_: the ranges of slots drawn in turn, the current one, and the
  // next slot in it.
  std::vector<std::pair<size_t, size_t>> segments_;
  size_t segment_ = 0;
  size_t slot_ = 0;
  int64_t level_;
  bool unaged_only_ = false;  // the own level is below the aging ceiling
  bool monotone_ = false;     // the own level's jobs all wait since created_at
  bool band_ = true;          // so that the first Next() moves to the top level
  std::vector<Run> heap_;
  std::vector<Band> bands_;
  bool skipping_ = false;  // SkipLater
  uint32_t skip_ = 0;
  // HolderAfterLate.
  bool late_wanted_ = false;  // until its level starts
  int64_t late_level_ = 0;
  int64_t late_bound_ = 0;
  size_t late_left_ = 0;  // Run::late jobs not drawn yet
  bool holder_due_ = false;
  // HolderLeads: until its level starts; the holder just returned there.
  bool lead_wanted_ = false;
  int64_t lead_level_ = 0;
  bool lead_ = false;
};

// The first job of `s` (an aged order) waiting since `since` or later.
AgedSet::const_iterator LowerBoundSince(const AgedSet& s, int64_t since);

// The reservation holder (handle `holder`, effective priority `prio`) keeps
// its place, as KeepReservationHolder in plan.cc moves it: ahead of the jobs
// ranked just before it whose own priority is not above `prio` (nor, if it
// aged, reached the ceiling after it: `reached_top`). Draws the ranking up to
// the holder into `buffer`, in the order to decide it, or, when `stream`
// draws from the fit index and the holder did not age, makes the stream
// detour to it without drawing the jobs before it; under "drf", a holder
// aged to the ceiling is drawn to only as far as the last job it must
// follow, and the stream then skips it (RankStream::SkipLater), or, when the
// stream passes over jobs with the share index and the ceiling's jobs all
// wait since their created_at, nothing is drawn: the stream gives the holder
// once that job is drawn (RankStream::HolderAfterLate; incremental_holder.cc).
void KeepHolder(const IncrementalPlanner::Index& x, const State& state, uint32_t holder,
                int32_t prio, int32_t ceiling, absl::Time reached_top, RankStream& stream,
                std::vector<uint32_t>& buffer);

}  // namespace berth::planner

#endif  // BERTH_PLANNER_PLAN_INCREMENTAL_RANK_H_
