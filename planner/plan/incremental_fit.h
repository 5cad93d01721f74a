// FitIndex: the queued jobs in one rank order (the "fifo" ranking's) as an
// array of slots under a segment tree of their smallest memory and cpu and
// their count, so that an admission walk finds the next job that could fit
// what is free without drawing the larger ones, and knows how many it passed
// (their ranks). Internal to planner/plan (the IncrementalPlanner's index,
// incremental_index.h).
//
// Jobs join at the end (a job ranked after every job in the array) or the
// array goes stale and is rebuilt from the rank order before its next use;
// jobs leave by handle, leaving a dead slot, and the array is rebuilt once the
// dead slots outnumber the live ones. So every event costs O(log n)
// amortized, and nothing until a plan first asks for the array.
#ifndef BERTH_PLANNER_PLAN_INCREMENTAL_FIT_H_
#define BERTH_PLANNER_PLAN_INCREMENTAL_FIT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace berth::planner {

class FitIndex {
 public:
  static constexpr size_t kNone = static_cast<size_t>(-1);

  // True until Reset(), and after any change the array cannot follow.
  bool stale() const { return stale_; }
  void Invalidate();
  // Empties the array and makes it fresh: Append() then rebuilds it.
  void Reset();

  // A job ranked after every job in the array joins it. No-op while stale.
  // REQUIRES: `handle` is not in the array.
  void Append(uint32_t handle, int64_t memory, int64_t cpu);
  // The job `handle` leaves the array. No-op while stale or if absent.
  void Remove(uint32_t handle);

  size_t size() const { return slots_; }
  uint32_t handle(size_t slot) const { return handles_[slot]; }

  // The first live slot at or after `from` whose job's memory <= `memory`
  // and cpu <= `cpu`, or kNone; `passed` gets the live slots before it from
  // `from` (all of them from `from` on if kNone). REQUIRES: !stale().
  size_t Find(size_t from, int64_t memory, int64_t cpu, size_t& passed) const;

 private:
  struct Node {
    int64_t memory;  // the smallest of the live slots below (kMax if none)
    int64_t cpu;
    uint32_t live;
  };
  void Grow();
  void Set(size_t slot, const Node& leaf);
  size_t Descend(size_t node, size_t lo, size_t hi, size_t from, int64_t memory,
                 int64_t cpu) const;
  // Live slots in [0, slot).
  size_t LiveBefore(size_t slot) const;

  bool stale_ = true;
  size_t capacity_ = 0;  // a power of two; leaves at [capacity_, 2 capacity_)
  size_t slots_ = 0;
  size_t dead_ = 0;
  std::vector<Node> tree_;
  std::vector<uint32_t> handles_;  // by slot
  std::vector<size_t> slot_of_;    // by handle, kNone if not in the array
};

}  // namespace berth::planner

#endif  // BERTH_PLANNER_PLAN_INCREMENTAL_FIT_H_
