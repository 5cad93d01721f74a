// FitIndex: the queued jobs in one rank order (the "fifo" ranking's) as an
// array of slots under a segment tree of their smallest memory, cpu and
// expected duration and their count (of all its jobs, and of those not
// waiting for a dependency), so that an admission walk finds the
// next job that could be admitted (small enough for what is free, short
// enough to end before the reservation or small enough for its spare)
// without drawing the others, and knows how many it passed (their ranks).
// Internal to planner/plan (the IncrementalPlanner's index,
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

  // Upper bounds on a job's memory, cpu and expected duration (ns); a job
  // waiting for a dependency (SetWaiting) is within them only if
  // `waiting_too`.
  struct Limits {
    int64_t memory;
    int64_t cpu;
    int64_t duration;
    bool waiting_too = false;
  };

  // True until Reset(), and after any change the array cannot follow.
  bool stale() const { return stale_; }
  void Invalidate();
  // Empties the array and makes it fresh: Append() then rebuilds it.
  // `default_duration` (ns) stands for a job's unknown duration.
  void Reset(int64_t default_duration);
  int64_t default_duration() const { return default_duration_; }

  // A job ranked after every job in the array joins it (`duration` in ns, 0
  // if unknown). No-op while stale. REQUIRES: `handle` is not in the array.
  void Append(uint32_t handle, int64_t memory, int64_t cpu, int64_t duration);
  // The job `handle` leaves the array. No-op while stale or if absent.
  void Remove(uint32_t handle);
  // Whether the job waits for a dependency (it cannot be admitted whatever
  // is free). No-op while stale or if absent.
  void SetWaiting(uint32_t handle, bool waiting);

  size_t size() const { return slots_; }
  uint32_t handle(size_t slot) const { return handles_[slot]; }
  // The slot of job `handle`, or kNone.
  size_t slot_of(uint32_t handle) const {
    return handle < slot_of_.size() ? slot_of_[handle] : kNone;
  }

  // The first live slot in [from, to) whose job is within `a` or within `b`
  // (each: memory, cpu and duration at most the limit's; nullptr: none), or
  // kNone; `passed` gets the live slots before it from `from` (all of them
  // in [from, to) if kNone). REQUIRES: !stale().
  size_t Find(size_t from, size_t to, const Limits* a, const Limits* b, size_t& passed) const;

 private:
  struct Node {
    int64_t memory;  // the smallest of the live slots below (kMax if none)
    int64_t cpu;
    int64_t duration;
    uint32_t live;
    uint32_t open;  // live and not waiting
    // The same smallest values over the open slots only (kMax if none): a
    // limit without `waiting_too` takes none of the jobs waiting for a
    // dependency, whose values (a third of an overloaded queue's jobs wait
    // so) would otherwise leave most subtrees in doubt, so that a search
    // that finds nothing visited most of the tree (9.9% of a simulation's
    // instructions, BM_Simulate/10000/7; 0.6% with these).
    int64_t open_memory;
    int64_t open_cpu;
    int64_t open_duration;
  };
  // What a dead slot or an empty subtree holds.
  static constexpr Node kEmpty{INT64_MAX, INT64_MAX, INT64_MAX, 0, 0,
                               INT64_MAX, INT64_MAX, INT64_MAX};
  // A live slot's leaf.
  static Node Leaf(int64_t memory, int64_t cpu, int64_t duration, bool open);
  static Node Join(const Node& a, const Node& b);
  // Whether the job at a leaf is within `l` (nullptr: none).
  static bool LeafWithin(const Node& n, const Limits* l);
  // Whether some job below a node may be within `l`.
  static bool Within(const Node& n, const Limits* l);
  void Grow();
  void Set(size_t slot, const Node& leaf);
  size_t Descend(size_t node, size_t lo, size_t hi, size_t from, size_t to, const Limits* a,
                 const Limits* b) const;
  // Live slots in [0, slot).
  size_t LiveBefore(size_t slot) const;

  bool stale_ = true;
  int64_t default_duration_ = 0;
  size_t capacity_ = 0;  // a power of two; leaves at [capacity_, 2 capacity_)
  size_t slots_ = 0;
  size_t dead_ = 0;
  std::vector<Node> tree_;
  std::vector<uint32_t> handles_;  // by slot
  std::vector<Node> values_;       // by slot: the job's own, not waiting
  std::vector<size_t> slot_of_;    // by handle, kNone if not in the array
};

}  // namespace berth::planner

#endif  // BERTH_PLANNER_PLAN_INCREMENTAL_FIT_H_
