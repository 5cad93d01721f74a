// Timeline: answers "earliest time these resources are free" from the
// expected ends of the jobs holding them.
//
// A Timeline is a list of releases: a job holding memory, cpu, one worker
// slot, one slot of its pool and one of its workspace until its expected end.
// Queries take what is free *now* (before any listed release) and add back
// every release whose end is <= t. Free amounts only grow with t, so the
// earliest fit is found by one scan in time order: O(m) per query after an
// O(m log m) sort, m = number of releases (the running and admitted jobs).
//
// Not thread-safe: queries sort the releases lazily, even though the answer
// does not depend on the order in which releases were added.
#ifndef BERTH_PLANNER_TIMELINE_TIMELINE_H_
#define BERTH_PLANNER_TIMELINE_TIMELINE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/time/time.h"

namespace berth::planner {

// Amounts per budget dimension. Use kUnlimited for a dimension without a cap.
struct Amounts {
  static constexpr int64_t kUnlimited = INT64_MAX;
  int64_t memory_bytes = 0;
  int64_t cpu_millis = 0;
  int64_t worker_slots = 0;
  int64_t pool_slots = 0;       // of one pool, chosen per query
  int64_t workspace_slots = 0;  // of one workspace, chosen per query
};

// True if `free` covers `need` in every dimension.
bool Covers(const Amounts& free, const Amounts& need);

class Timeline {
 public:
  // Identifies pools and workspaces; any dense or sparse numbering works.
  using Key = uint32_t;

  // Records that `memory_bytes`, `cpu_millis`, one worker slot, one slot of
  // `pool` and one of `workspace` become free at `end`. Negative amounts are
  // counted as 0.
  void AddRelease(absl::Time end, int64_t memory_bytes, int64_t cpu_millis,
                  Key pool, Key workspace);

  // What is free at time `t`: `free_now` plus every release with end <= t
  // (pool and workspace slots only from releases of `pool` / `workspace`).
  // Saturates instead of overflowing.
  Amounts FreeAt(absl::Time t, const Amounts& free_now, Key pool,
                 Key workspace);

  // The earliest time >= `now` at which FreeAt() covers `need`: `now` if
  // `free_now` covers it already; absl::InfiniteFuture() if even after the
  // last release it does not.
  absl::Time EarliestFit(absl::Time now, const Amounts& free_now,
                         const Amounts& need, Key pool, Key workspace);

  // Calls f(end, memory_bytes, cpu_millis, pool, workspace) for every
  // release, in no particular order.
  template <typename F>
  void ForEachRelease(F f) const {
    for (const Release& r : releases_) {
      f(r.end, r.memory_bytes, r.cpu_millis, r.pool, r.workspace);
    }
  }

  size_t size() const { return releases_.size(); }
  void Clear() { releases_.clear(); sorted_ = true; }

 private:
  struct Release {
    absl::Time end;
    int64_t memory_bytes;
    int64_t cpu_millis;
    Key pool;
    Key workspace;
  };
  void SortIfNeeded();

  std::vector<Release> releases_;
  bool sorted_ = true;
};

}  // namespace berth::planner

#endif  // BERTH_PLANNER_TIMELINE_TIMELINE_H_
