// ShareIndex: the queued jobs in the "drf" ranking's runs — per priority,
// per workspace, by created_at then id — as slots of a FitIndex (the next
// job that could be admitted, incremental_fit.h) under a second tree of
// their DRF share weights, so that a walk can pass over a run's jobs that
// cannot be admitted and add their shares in one step. Internal to
// planner/plan (the IncrementalPlanner's index, incremental_index.h).
//
// Exactness: the ranking adds each job's weight (a float, ShareWeight in
// incremental_rank.h) to its workspace's share (a double), one at a time.
// Weights are held here as integers in units of 2^-kFractionBits. When a
// share and every weight added to it are such multiples and every partial
// sum stays below 2^53 units, each double addition is exact, so the share
// after k additions is the integer sum, whatever the grouping: a bulk sum
// equals the one-by-one sum bit for bit. A weight that is not such a
// multiple (a job below ~2^-17 of a budget) makes the index inexact
// (exact() false) and it is not used.
//
// Built whole (Reset, StartRun/Append per run in rank order, Finish); any
// job joining makes it stale (Invalidate) until rebuilt. Jobs leave by
// handle (a dead slot) and change their dependency status in place; an
// aged order compacted after many leave is rebuilt alone (aged_stale).
#ifndef BERTH_PLANNER_PLAN_INCREMENTAL_SHARE_H_
#define BERTH_PLANNER_PLAN_INCREMENTAL_SHARE_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "planner/plan/incremental_fit.h"

namespace berth::planner {

// A workspace's share of a budget, as "drf" weighs it (0 when unbounded).
inline float ShareWeight(int64_t v, double inv) {
  return v > 0 ? static_cast<float>(static_cast<double>(v) * inv) : 0.0f;
}

class ShareIndex {
 public:
  static constexpr int kFractionBits = 40;
  // Sums below this many units are exact doubles.
  static constexpr int64_t kExactLimit = int64_t{1} << 53;
  // 2^kFractionBits and its inverse, both exact.
  static constexpr double kUnit = static_cast<double>(int64_t{1} << kFractionBits);
  static constexpr double kPerUnit = 1.0 / kUnit;

  // A double as a whole number of units (false if it is not one, or is
  // negative or not below kExactLimit). Inline, and a product by a power of
  // two (exact, as ldexp: no double here is near an overflow) rather than
  // libm's ldexp: a plan converts every live workspace's share.
  static bool ToUnits(double v, int64_t& units) {
    const double u = v * kUnit;
    if (!(u >= 0) || u >= static_cast<double>(kExactLimit)) return false;
    units = static_cast<int64_t>(u);  // truncated: whole iff it converts back
    return static_cast<double>(units) == u;
  }
  static double FromUnits(int64_t units) { return static_cast<double>(units) * kPerUnit; }

  struct Sum {
    int64_t memory = 0;  // units
    int64_t cpu = 0;
    uint32_t live = 0;
  };

  bool stale() const { return fit_.stale(); }
  void Invalidate() { fit_.Invalidate(); }
  // Each priority's jobs also in the order its aged jobs rank (Level::aged:
  // by when they were queued), each under a FitIndex of its own, so that a
  // walk can pass over an aged band's jobs too. Appended after Reset, in
  // that order, per priority.
  void AppendAged(int32_t priority, uint32_t handle, int64_t memory, int64_t cpu,
                  int64_t duration);
  // REQUIRES: a priority appended since Reset.
  const FitIndex& aged(int32_t priority) const { return aged_.at(priority); }
  // True if removals left `priority`'s aged order stale (a FitIndex rebuilds
  // after as many removals as it holds jobs): its owner then rebuilds that
  // order alone, ResetAged then AppendAged of its jobs, before the index is
  // read again — the rest of the index stays fresh.
  bool aged_stale(int32_t priority) const {
    const auto it = aged_.find(priority);
    return it != aged_.end() && it->second.stale();
  }
  // Empties `priority`'s aged order (fresh).
  void ResetAged(int32_t priority) { aged_[priority].Reset(fit_.default_duration()); }
  // Empties the index for up to `jobs` jobs, weighed with `inv_mem` and
  // `inv_cpu` (1 / budget, 0 if unbounded, as the ranking weighs them).
  void Reset(size_t jobs, int64_t default_duration, double inv_mem, double inv_cpu);
  // Whether it was built with these (else it must be rebuilt).
  bool Matches(int64_t default_duration, double inv_mem, double inv_cpu) const {
    return fit_.default_duration() == default_duration && inv_mem_ == inv_mem &&
           inv_cpu_ == inv_cpu;
  }
  // The jobs appended next form the run of (priority, workspace id).
  void StartRun(int32_t priority, uint32_t workspace);
  // REQUIRES: after Reset, fewer than `jobs` appended, in rank order.
  // `since`: JobRecord::waiting_since_ns (whether it aged).
  void Append(uint32_t handle, int64_t memory, int64_t cpu, int64_t duration, int64_t since);
  // Builds the weights' tree; the index is then fresh.
  void Finish();
  // The job (of `priority`) leaves both orders.
  void Remove(uint32_t handle, int32_t priority);
  void SetWaiting(uint32_t handle, int32_t priority, bool waiting);

  // True if every live job's weights are whole units.
  bool exact() const { return inexact_ == 0; }
  // The weights of workspace id `workspace`'s live jobs, all priorities.
  Sum WorkspaceTotal(uint32_t workspace) const {
    return workspace < ws_total_.size() ? ws_total_[workspace] : Sum{};
  }
  // Workspace ids are below this (WorkspaceTotal of the others is empty).
  uint32_t workspace_ids() const { return static_cast<uint32_t>(ws_total_.size()); }
  const FitIndex& fit() const { return fit_; }
  // The slots [begin, end) of the run (begin == end if none).
  std::pair<size_t, size_t> Run(int32_t priority, uint32_t workspace) const;
  // The weights and count of the live jobs in slots [from, to).
  Sum Total(size_t from, size_t to) const;
  // The first live slot in [from, to) whose job waits since before
  // `bound`, or kNone.
  size_t FirstSince(size_t from, size_t to, int64_t bound) const;
  // With a share starting at (`memory`, `cpu`) units: the first live slot
  // t in [from, to) at which the dominant share after the jobs [from, t]
  // reaches `bits` (internal::DrfShareBits) or more, or kNone; `sum` gets the
  // jobs [from, t] (all of [from, to) if kNone).
  size_t Reach(size_t from, size_t to, int64_t memory, int64_t cpu, uint32_t bits,
               Sum& sum) const;

 private:
  static Sum Join(const Sum& a, const Sum& b) {
    return Sum{a.memory + b.memory, a.cpu + b.cpu, a.live + b.live};
  }
  size_t Descend(size_t node, size_t lo, size_t hi, size_t from, size_t to, int64_t memory,
                 int64_t cpu, uint32_t bits, Sum& sum) const;

  FitIndex fit_;
  double inv_mem_ = -1, inv_cpu_ = -1;
  size_t capacity_ = 0;  // a power of two; leaves at [capacity_, 2 capacity_)
  size_t slots_ = 0;
  int64_t inexact_ = 0;
  size_t FirstSince(size_t node, size_t lo, size_t hi, size_t from, size_t to,
                    int64_t bound) const;

  std::vector<Sum> tree_;
  std::vector<int64_t> since_;  // the tree's smallest since of the live slots
  std::vector<bool> inexact_slot_;
  std::vector<uint32_t> slot_ws_;  // by slot: the workspace id
  std::vector<Sum> ws_total_;      // by workspace id
  uint32_t ws_ = 0;                // the run being appended's
  absl::flat_hash_map<uint64_t, std::pair<size_t, size_t>> runs_;
  absl::flat_hash_map<int32_t, FitIndex> aged_;
  uint64_t run_ = 0;
};

}  // namespace berth::planner

#endif  // BERTH_PLANNER_PLAN_INCREMENTAL_SHARE_H_
