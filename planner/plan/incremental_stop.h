// UndrawnFit: for an admission walk that draws every job it decides (the
// "drf" ranking without its share index, or a walk that must decide each
// job), whether any job it has not drawn yet could still be admitted. The
// walk may stop once none can: every later job then waits and changes
// nothing of the walk's state. Internal to planner/plan (the
// IncrementalPlanner's kPrefixFree plans, incremental_plan.cc).
//
// It looks rank-free, in the fit index's order: a job the walk could still
// admit is within what is free and ends before the reservation or fits its
// spare (FitIndex::Limits, which only shrink once the reservation is
// placed) and has not been drawn; a job within the limits that the walk
// drew was admitted or waits for a slot of its pool or workspace. As the
// limits only shrink and the drawn jobs only grow, a slot once passed
// stays passed, so one walk's probes cost O(log n) per slot passed, at most
// kProbes a check.
//
// Not thread-safe; one per walk.
#ifndef BERTH_PLANNER_PLAN_INCREMENTAL_STOP_H_
#define BERTH_PLANNER_PLAN_INCREMENTAL_STOP_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "planner/plan/incremental_fit.h"

namespace berth::planner {

class UndrawnFit {
 public:
  // Slots probed in one check before it gives up (answers "maybe").
  static constexpr int kProbes = 8;

  // `fit`: fresh, over every queued job. `drawn[h] == mark`: job handle h
  // was drawn by this walk (the vector may be shorter than the handles:
  // then not drawn). Keeps references to all three.
  UndrawnFit(const FitIndex& fit, const std::vector<uint32_t>& drawn, const uint32_t& mark)
      : fit_(fit), drawn_(drawn), mark_(mark) {}

  // True if no job that is not drawn is within `a` or `b` (nullptr: none)
  // — REQUIRES: the limits of this walk's checks only shrink — false if one
  // is or if kProbes slots did not settle it. `within(h, a)`: job h is
  // within `a`, as FitIndex::Find decides it.
  template <typename Within>
  bool NoneLeft(const FitIndex::Limits* a, const FitIndex::Limits* b, Within within) {
    if (candidate_ != FitIndex::kNone) {
      const uint32_t h = fit_.handle(candidate_);
      if (!Drawn(h) && (within(h, a) || within(h, b))) return false;
      from_ = candidate_ + 1;
      candidate_ = FitIndex::kNone;
    }
    for (int probe = 0; probe < kProbes; ++probe) {
      size_t passed = 0;
      const size_t s = fit_.Find(from_, fit_.size(), a, b, passed);
      if (s == FitIndex::kNone) {
        from_ = fit_.size();
        return true;
      }
      if (!Drawn(fit_.handle(s))) {
        candidate_ = s;
        return false;
      }
      from_ = s + 1;
    }
    return false;
  }

  // True if the last check found an undrawn job within its limits
  // (answering false) and it is still not drawn: with the same limits the
  // answer stays false.
  bool HoldsCandidate() const {
    return candidate_ != FitIndex::kNone && !Drawn(fit_.handle(candidate_));
  }

 private:
  bool Drawn(uint32_t h) const { return h < drawn_.size() && drawn_[h] == mark_; }

  const FitIndex& fit_;
  const std::vector<uint32_t>& drawn_;
  const uint32_t& mark_;
  size_t from_ = 0;                      // every slot before it is settled
  size_t candidate_ = FitIndex::kNone;   // an undrawn slot within the limits
};

}  // namespace berth::planner

#endif  // BERTH_PLANNER_PLAN_INCREMENTAL_STOP_H_
