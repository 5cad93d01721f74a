// ShareIndex (incremental_share.h): the drf runs' slots under a FitIndex and
// a segment tree of their weights in whole units of 2^-kFractionBits.
#include "planner/plan/incremental_share.h"

#include <algorithm>
#include <limits>

#include "planner/ranking/drf_keys.h"

namespace berth::planner {
namespace {

uint64_t RunKey(int32_t priority, uint32_t workspace) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(priority)) << 32) | workspace;
}

}  // namespace

void ShareIndex::Reset(size_t jobs, int64_t default_duration, double inv_mem, double inv_cpu) {
  fit_.Reset(default_duration);
  inv_mem_ = inv_mem;
  inv_cpu_ = inv_cpu;
  capacity_ = 1;
  while (capacity_ < jobs) capacity_ *= 2;
  slots_ = 0;
  inexact_ = 0;
  tree_.assign(2 * capacity_, Sum{});
  since_.assign(2 * capacity_, std::numeric_limits<int64_t>::max());
  inexact_slot_.assign(capacity_, false);
  slot_ws_.assign(capacity_, 0);
  ws_total_.clear();
  runs_.clear();
  aged_.clear();
}

void ShareIndex::AppendAged(int32_t priority, uint32_t handle, int64_t memory, int64_t cpu,
                            int64_t duration) {
  auto [it, fresh] = aged_.try_emplace(priority);
  if (fresh) it->second.Reset(fit_.default_duration());
  it->second.Append(handle, memory, cpu, duration);
}

void ShareIndex::SetWaiting(uint32_t handle, int32_t priority, bool waiting) {
  fit_.SetWaiting(handle, waiting);
  if (auto it = aged_.find(priority); it != aged_.end()) it->second.SetWaiting(handle, waiting);
}

void ShareIndex::StartRun(int32_t priority, uint32_t workspace) {
  run_ = RunKey(priority, workspace);
  ws_ = workspace;
  if (ws_total_.size() <= workspace) ws_total_.resize(static_cast<size_t>(workspace) + 1);
  runs_[run_] = {slots_, slots_};
}

void ShareIndex::Append(uint32_t handle, int64_t memory, int64_t cpu, int64_t duration,
                        int64_t since) {
  const size_t slot = slots_++;
  since_[capacity_ + slot] = since;
  fit_.Append(handle, memory, cpu, duration);
  Sum& leaf = tree_[capacity_ + slot];
  leaf.live = 1;
  // The weights exactly as the ranking adds them (a float each).
  const bool exact = ToUnits(ShareWeight(memory, inv_mem_), leaf.memory) &&
                     ToUnits(ShareWeight(cpu, inv_cpu_), leaf.cpu) &&
                     leaf.memory < (int64_t{1} << (kFractionBits + 2)) &&
                     leaf.cpu < (int64_t{1} << (kFractionBits + 2));
  if (!exact) {
    leaf = Sum{0, 0, 1};
    inexact_slot_[slot] = true;
    ++inexact_;
  }
  runs_[run_].second = slots_;
  slot_ws_[slot] = ws_;
  ws_total_[ws_] = Join(ws_total_[ws_], leaf);
}

void ShareIndex::Finish() {
  for (size_t i = capacity_ - 1; i >= 1; --i) {
    tree_[i] = Join(tree_[2 * i], tree_[2 * i + 1]);
    since_[i] = std::min(since_[2 * i], since_[2 * i + 1]);
  }
}

void ShareIndex::Remove(uint32_t handle, int32_t priority) {
  const size_t slot = fit_.slot_of(handle);
  fit_.Remove(handle);
  if (auto it = aged_.find(priority); it != aged_.end()) it->second.Remove(handle);
  if (slot == FitIndex::kNone || slot >= slots_) return;
  if (inexact_slot_[slot]) {
    inexact_slot_[slot] = false;
    --inexact_;
  }
  size_t i = capacity_ + slot;
  Sum& total = ws_total_[slot_ws_[slot]];
  total.memory -= tree_[i].memory;
  total.cpu -= tree_[i].cpu;
  total.live -= tree_[i].live;
  tree_[i] = Sum{};
  since_[i] = std::numeric_limits<int64_t>::max();
  for (i /= 2; i >= 1; i /= 2) {
    tree_[i] = Join(tree_[2 * i], tree_[2 * i + 1]);
    since_[i] = std::min(since_[2 * i], since_[2 * i + 1]);
  }
}

size_t ShareIndex::FirstSince(size_t node, size_t lo, size_t hi, size_t from, size_t to,
                              int64_t bound) const {
  if (hi <= from || lo >= to || since_[node] >= bound) return FitIndex::kNone;
  if (hi - lo == 1) return lo;
  const size_t mid = lo + (hi - lo) / 2;
  const size_t left = FirstSince(2 * node, lo, mid, from, to, bound);
  if (left != FitIndex::kNone) return left;
  return FirstSince(2 * node + 1, mid, hi, from, to, bound);
}

size_t ShareIndex::FirstSince(size_t from, size_t to, int64_t bound) const {
  to = std::min(to, slots_);
  if (from >= to) return FitIndex::kNone;
  return FirstSince(1, 0, capacity_, from, to, bound);
}

std::pair<size_t, size_t> ShareIndex::Run(int32_t priority, uint32_t workspace) const {
  const auto it = runs_.find(RunKey(priority, workspace));
  return it == runs_.end() ? std::pair<size_t, size_t>{0, 0} : it->second;
}

ShareIndex::Sum ShareIndex::Total(size_t from, size_t to) const {
  Sum s;
  to = std::min(to, slots_);
  if (from >= to) return s;
  for (size_t l = capacity_ + from, r = capacity_ + to; l < r; l /= 2, r /= 2) {
    if (l & 1) s = Join(s, tree_[l++]);
    if (r & 1) s = Join(s, tree_[--r]);
  }
  return s;
}

size_t ShareIndex::Descend(size_t node, size_t lo, size_t hi, size_t from, size_t to,
                           int64_t memory, int64_t cpu, uint32_t bits, Sum& sum) const {
  const Sum& n = tree_[node];
  if (hi <= from || lo >= to || n.live == 0) return FitIndex::kNone;
  const auto reaches = [&](const Sum& s) {
    return internal::DrfShareBits(std::max(FromUnits(memory + s.memory),
                                           FromUnits(cpu + s.cpu))) >= bits;
  };
  const Sum with = Join(sum, n);
  if (from <= lo && hi <= to && !reaches(with)) {
    sum = with;
    return FitIndex::kNone;
  }
  if (hi - lo == 1) {  // live, and reaches it
    sum = with;
    return lo;
  }
  const size_t mid = lo + (hi - lo) / 2;
  const size_t left = Descend(2 * node, lo, mid, from, to, memory, cpu, bits, sum);
  if (left != FitIndex::kNone) return left;
  return Descend(2 * node + 1, mid, hi, from, to, memory, cpu, bits, sum);
}

size_t ShareIndex::Reach(size_t from, size_t to, int64_t memory, int64_t cpu, uint32_t bits,
                         Sum& sum) const {
  sum = Sum{};
  to = std::min(to, slots_);
  if (from >= to) return FitIndex::kNone;
  return Descend(1, 0, capacity_, from, to, memory, cpu, bits, sum);
}

}  // namespace berth::planner
