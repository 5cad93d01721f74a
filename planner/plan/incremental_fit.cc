// FitIndex (incremental_fit.h): a segment tree over the slots, each node the
// smallest memory and cpu of the live slots below it and their count.
#include "planner/plan/incremental_fit.h"

#include <algorithm>
#include <limits>

namespace berth::planner {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

}  // namespace

void FitIndex::Invalidate() { stale_ = true; }

void FitIndex::Reset() {
  stale_ = false;
  slots_ = 0;
  dead_ = 0;
  std::fill(tree_.begin(), tree_.end(), Node{kMax, kMax, 0});
  std::fill(slot_of_.begin(), slot_of_.end(), kNone);
}

void FitIndex::Grow() {
  const size_t capacity = capacity_ == 0 ? 64 : 2 * capacity_;
  std::vector<Node> tree(2 * capacity, Node{kMax, kMax, 0});
  for (size_t s = 0; s < slots_; ++s) tree[capacity + s] = tree_[capacity_ + s];
  for (size_t i = capacity - 1; i >= 1; --i) {
    const Node& a = tree[2 * i];
    const Node& b = tree[2 * i + 1];
    tree[i] = Node{std::min(a.memory, b.memory), std::min(a.cpu, b.cpu), a.live + b.live};
  }
  tree_ = std::move(tree);
  capacity_ = capacity;
  handles_.resize(capacity);
}

void FitIndex::Set(size_t slot, const Node& leaf) {
  size_t i = capacity_ + slot;
  tree_[i] = leaf;
  for (i /= 2; i >= 1; i /= 2) {
    const Node& a = tree_[2 * i];
    const Node& b = tree_[2 * i + 1];
    tree_[i] = Node{std::min(a.memory, b.memory), std::min(a.cpu, b.cpu), a.live + b.live};
  }
}

void FitIndex::Append(uint32_t handle, int64_t memory, int64_t cpu) {
  if (stale_) return;
  if (slots_ == capacity_) Grow();
  const size_t slot = slots_++;
  handles_[slot] = handle;
  if (handle >= slot_of_.size()) slot_of_.resize(static_cast<size_t>(handle) + 1, kNone);
  slot_of_[handle] = slot;
  Set(slot, Node{memory, cpu, 1});
}

void FitIndex::Remove(uint32_t handle) {
  if (stale_ || handle >= slot_of_.size() || slot_of_[handle] == kNone) return;
  Set(slot_of_[handle], Node{kMax, kMax, 0});
  slot_of_[handle] = kNone;
  // Dead slots cost only the tree's depth, but keep the array at most twice
  // the queue: rebuilt (O(n)) after as many removals as it holds jobs.
  if (++dead_ > 64 && dead_ > slots_ - dead_) Invalidate();
}

size_t FitIndex::Descend(size_t node, size_t lo, size_t hi, size_t from, int64_t memory,
                         int64_t cpu) const {
  const Node& n = tree_[node];
  if (hi <= from || n.live == 0 || n.memory > memory || n.cpu > cpu) return kNone;
  if (hi - lo == 1) return lo;  // live, and fits both
  const size_t mid = lo + (hi - lo) / 2;
  const size_t left = Descend(2 * node, lo, mid, from, memory, cpu);
  if (left != kNone) return left;
  return Descend(2 * node + 1, mid, hi, from, memory, cpu);
}

size_t FitIndex::LiveBefore(size_t slot) const {
  size_t count = 0;
  for (size_t l = capacity_, r = capacity_ + slot; l < r; l /= 2, r /= 2) {
    if (l & 1) count += tree_[l++].live;
    if (r & 1) count += tree_[--r].live;
  }
  return count;
}

size_t FitIndex::Find(size_t from, int64_t memory, int64_t cpu, size_t& passed) const {
  passed = 0;
  if (from >= slots_) return kNone;
  const size_t found = Descend(1, 0, capacity_, from, memory, cpu);
  passed = LiveBefore(found == kNone ? slots_ : found) - LiveBefore(from);
  return found;
}

}  // namespace berth::planner
