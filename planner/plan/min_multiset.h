// MinMultiset: a multiset of integers that answers only its smallest value,
// which is all the incremental planner asks of its queue's memory, cpu and
// expected durations (what the smallest queued job needs). A binary heap
// whose erased values are recorded and dropped when they reach its top: n
// values join at once in O(n) (a whole queue's setup, where sorting them
// into ordered multisets was a fifth of the cost), one in O(log n); an
// erase is O(1) amortized, O(log n) when the smallest leaves. The heap is
// rebuilt once the erased values it still holds outnumber the others.
// Internal to planner/plan.
#ifndef BERTH_PLANNER_PLAN_MIN_MULTISET_H_
#define BERTH_PLANNER_PLAN_MIN_MULTISET_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace berth::planner {

class MinMultiset {
 public:
  bool empty() const { return size() == 0; }
  size_t size() const { return heap_.size() - erased_; }
  // The smallest value. REQUIRES: !empty().
  int64_t min() const { return heap_.front(); }

  void Insert(int64_t v) {
    if (auto it = dead_.find(v); it != dead_.end()) {
      // An erased copy still in the heap stands for it again (it is not
      // smaller than the top, which is never an erased copy).
      if (--it->second == 0) dead_.erase(it);
      --erased_;
      return;
    }
    heap_.push_back(v);
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
  }

  // As Insert of each of [begin, end), in O(size() + (end - begin)).
  void InsertAll(const int64_t* begin, const int64_t* end) {
    heap_.insert(heap_.end(), begin, end);
    std::make_heap(heap_.begin(), heap_.end(), std::greater<>());
    Settle();
  }

  // One copy of `v` leaves. REQUIRES: v is in the multiset.
  void Erase(int64_t v) {
    if (v == heap_.front()) {
      std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
      heap_.pop_back();
      Settle();
      return;
    }
    ++dead_[v];
    ++erased_;
    if (erased_ > 64 && erased_ > heap_.size() / 2) Rebuild();
  }

 private:
  // Drops erased copies off the top, so that the top is a live value.
  void Settle() {
    while (!heap_.empty()) {
      const auto it = dead_.find(heap_.front());
      if (it == dead_.end()) return;
      if (--it->second == 0) dead_.erase(it);
      --erased_;
      std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
      heap_.pop_back();
    }
  }

  void Rebuild() {
    size_t kept = 0;
    for (const int64_t v : heap_) {
      if (auto it = dead_.find(v); it != dead_.end()) {
        if (--it->second == 0) dead_.erase(it);
        continue;
      }
      heap_[kept++] = v;
    }
    heap_.resize(kept);
    std::make_heap(heap_.begin(), heap_.end(), std::greater<>());
    erased_ = 0;
  }

  std::vector<int64_t> heap_;                      // a min-heap
  absl::flat_hash_map<int64_t, uint32_t> dead_;  // erased copies still in heap_
  size_t erased_ = 0;                              // their number
};

}  // namespace berth::planner

#endif  // BERTH_PLANNER_PLAN_MIN_MULTISET_H_
