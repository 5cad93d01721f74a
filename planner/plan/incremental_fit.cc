// FitIndex (incremental_fit.h): a segment tree over the slots, each node the
// smallest memory, cpu and duration of the live slots below it, the same of
// those not waiting for a dependency, and their counts.
#include "planner/plan/incremental_fit.h"

#include <algorithm>

namespace berth::planner {
namespace {

// Subtrees of at most this many slots are scanned, not descended.
constexpr size_t kScan = 16;

}  // namespace

FitIndex::Node FitIndex::Leaf(int64_t memory, int64_t cpu, int64_t duration, bool open) {
  if (!open) {
    Node n = kEmpty;
    n.memory = memory;
    n.cpu = cpu;
    n.duration = duration;
    n.live = 1;
    return n;
  }
  return Node{memory, cpu, duration, 1, 1, memory, cpu, duration};
}

FitIndex::Node FitIndex::Join(const Node& a, const Node& b) {
  return Node{std::min(a.memory, b.memory),
              std::min(a.cpu, b.cpu),
              std::min(a.duration, b.duration),
              a.live + b.live,
              a.open + b.open,
              std::min(a.open_memory, b.open_memory),
              std::min(a.open_cpu, b.open_cpu),
              std::min(a.open_duration, b.open_duration)};
}

bool FitIndex::LeafWithin(const Node& n, const Limits* l) {
  return l != nullptr && (l->waiting_too ? n.live : n.open) > 0 && n.memory <= l->memory &&
         n.cpu <= l->cpu && n.duration <= l->duration;
}

// Each smallest value of the jobs `l` may take (live, or open) is within it.
bool FitIndex::Within(const Node& n, const Limits* l) {
  if (l == nullptr) return false;
  if (l->waiting_too) return LeafWithin(n, l);
  return n.open > 0 && n.open_memory <= l->memory && n.open_cpu <= l->cpu &&
         n.open_duration <= l->duration;
}

void FitIndex::Invalidate() { stale_ = true; }

void FitIndex::Reset(int64_t default_duration) {
  stale_ = false;
  default_duration_ = default_duration;
  slots_ = 0;
  dead_ = 0;
  std::fill(tree_.begin(), tree_.end(), kEmpty);
  std::fill(slot_of_.begin(), slot_of_.end(), kNone);
}

void FitIndex::Grow() {
  const size_t capacity = capacity_ == 0 ? 64 : 2 * capacity_;
  std::vector<Node> tree(2 * capacity, kEmpty);
  for (size_t s = 0; s < slots_; ++s) tree[capacity + s] = tree_[capacity_ + s];
  for (size_t i = capacity - 1; i >= 1; --i) {
    tree[i] = Join(tree[2 * i], tree[2 * i + 1]);
  }
  tree_ = std::move(tree);
  capacity_ = capacity;
  handles_.resize(capacity);
  values_.resize(capacity);
}

void FitIndex::Set(size_t slot, const Node& leaf) {
  size_t i = capacity_ + slot;
  tree_[i] = leaf;
  for (i /= 2; i >= 1; i /= 2) {
    tree_[i] = Join(tree_[2 * i], tree_[2 * i + 1]);
  }
}

void FitIndex::Append(uint32_t handle, int64_t memory, int64_t cpu, int64_t duration) {
  if (stale_) return;
  if (slots_ == capacity_) Grow();
  const size_t slot = slots_++;
  handles_[slot] = handle;
  if (handle >= slot_of_.size()) slot_of_.resize(static_cast<size_t>(handle) + 1, kNone);
  slot_of_[handle] = slot;
  values_[slot] = Leaf(memory, cpu, duration > 0 ? duration : default_duration_, true);
  Set(slot, values_[slot]);
}

void FitIndex::SetWaiting(uint32_t handle, bool waiting) {
  if (stale_ || handle >= slot_of_.size() || slot_of_[handle] == kNone) return;
  const size_t slot = slot_of_[handle];
  const Node& v = values_[slot];
  if ((tree_[capacity_ + slot].open == 0) == waiting) return;
  Set(slot, waiting ? Leaf(v.memory, v.cpu, v.duration, false) : v);
}

void FitIndex::Remove(uint32_t handle) {
  if (stale_ || handle >= slot_of_.size() || slot_of_[handle] == kNone) return;
  Set(slot_of_[handle], kEmpty);
  slot_of_[handle] = kNone;
  // Dead slots cost only the tree's depth, but keep the array at most twice
  // the queue: rebuilt (O(n)) after as many removals as it holds jobs.
  if (++dead_ > 64 && dead_ > slots_ - dead_) Invalidate();
}

size_t FitIndex::Descend(size_t node, size_t lo, size_t hi, size_t from, size_t to,
                         const Limits* a, const Limits* b) const {
  const Node& n = tree_[node];
  if (hi <= from || lo >= to || n.live == 0 || (!Within(n, a) && !Within(n, b))) return kNone;
  if (hi - lo <= kScan) {
    // A few slots: their leaves (contiguous) read in order. Limits in three
    // dimensions leave many subtrees in doubt (each smallest value within,
    // no one job), and the descent below such a node visits twice as many
    // nodes as there are leaves.
    const size_t end = std::min(hi, to);
    for (size_t s = std::max(lo, from); s < end; ++s) {
      const Node& leaf = tree_[capacity_ + s];
      if (LeafWithin(leaf, a) || LeafWithin(leaf, b)) return s;
    }
    return kNone;
  }
  const size_t mid = lo + (hi - lo) / 2;
  const size_t left = Descend(2 * node, lo, mid, from, to, a, b);
  if (left != kNone) return left;
  return Descend(2 * node + 1, mid, hi, from, to, a, b);
}

size_t FitIndex::LiveBefore(size_t slot) const {
  size_t count = 0;
  for (size_t l = capacity_, r = capacity_ + slot; l < r; l /= 2, r /= 2) {
    if (l & 1) count += tree_[l++].live;
    if (r & 1) count += tree_[--r].live;
  }
  return count;
}

size_t FitIndex::Find(size_t from, size_t to, const Limits* a, const Limits* b,
                      size_t& passed) const {
  passed = 0;
  to = std::min(to, slots_);
  if (from >= to) return kNone;
  const size_t found = Descend(1, 0, capacity_, from, to, a, b);
  passed = LiveBefore(found == kNone ? to : found) - LiveBefore(from);
  return found;
}

}  // namespace berth::planner
