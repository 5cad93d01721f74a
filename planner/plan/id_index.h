// IdIndex: job id -> index into State::queued, built in one pass, flagging
// duplicate ids. An open-addressing table of 8-byte slots (index + 32 bits of
// hash) with linear probing, sized for load <= 1/2: about 16 bytes per job,
// in memory the caller provides (Prepare() borrows it from the Planner's
// scratch). Internal to planner/.
//
// Not thread-safe to build; lookups are const and thread-compatible. The
// indexed strings must outlive the index.
#ifndef BERTH_PLANNER_PLAN_ID_INDEX_H_
#define BERTH_PLANNER_PLAN_ID_INDEX_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "planner/plan/fast_hash.h"

namespace berth::planner::internal {

class IdIndex {
 public:
  static constexpr uint32_t kNotFound = UINT32_MAX;

  struct Slot {
    uint32_t index_plus_1;  // 0 = empty
    uint32_t hash_lo;
  };

  // Slots Build() needs for n ids (a power of two >= 2n).
  static size_t CapacityFor(size_t n) {
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    return cap;
  }

  // Indexes ids[i] -> i for every i, given hashes[i] == Hash(ids[i]), in
  // `memory` (CapacityFor(n) slots, owned by the caller, overwritten; must
  // outlive the lookups). Appends to `duplicates` every i whose id occurs
  // more than once (each once). REQUIRES: n < 2^32 - 1.
  template <typename GetId>
  void Build(size_t n, const uint64_t* hashes, GetId get_id,
             std::vector<uint32_t>& duplicates, Slot* memory);

  static uint64_t Hash(absl::string_view id) { return FastHash(id); }

  // An index i with ids[i] == id, or kNotFound.
  template <typename GetId>
  uint32_t Find(absl::string_view id, GetId get_id) const;

 private:
  Slot* slots_ = nullptr;  // not owned
  uint64_t mask_ = 0;
};

template <typename GetId>
void IdIndex::Build(size_t n, const uint64_t* hashes, GetId get_id,
                    std::vector<uint32_t>& duplicates, Slot* memory) {
  const size_t cap = CapacityFor(n);
  slots_ = memory;
  std::fill(slots_, slots_ + cap, Slot{0, 0});
  mask_ = cap - 1;
  // The table is larger than the cache and the probes are independent:
  // prefetch kAhead slots ahead.
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < std::min(n, kAhead); ++i)
    __builtin_prefetch(&slots_[(hashes[i] >> 32) & mask_], 1);
  std::vector<uint32_t> first_seen;  // copies found: the index they hit
  for (size_t i = 0; i < n; ++i) {
    if (i + kAhead < n)
      __builtin_prefetch(&slots_[(hashes[i + kAhead] >> 32) & mask_], 1);
    const uint64_t h = hashes[i];
    const uint32_t lo = static_cast<uint32_t>(h);
    for (uint64_t s = (h >> 32) & mask_;; s = (s + 1) & mask_) {
      Slot& slot = slots_[s];
      if (slot.index_plus_1 == 0) {
        slot = Slot{static_cast<uint32_t>(i + 1), lo};
        break;
      }
      if (slot.hash_lo == lo && get_id(slot.index_plus_1 - 1) == get_id(i)) {
        duplicates.push_back(static_cast<uint32_t>(i));
        first_seen.push_back(slot.index_plus_1 - 1);
        break;
      }
    }
  }
  // The first copy of each repeated id, once.
  std::sort(first_seen.begin(), first_seen.end());
  first_seen.erase(std::unique(first_seen.begin(), first_seen.end()),
                   first_seen.end());
  duplicates.insert(duplicates.end(), first_seen.begin(), first_seen.end());
}

template <typename GetId>
uint32_t IdIndex::Find(absl::string_view id, GetId get_id) const {
  if (slots_ == nullptr) return kNotFound;
  const uint64_t h = Hash(id);
  const uint32_t lo = static_cast<uint32_t>(h);
  for (uint64_t s = (h >> 32) & mask_;; s = (s + 1) & mask_) {
    const Slot& slot = slots_[s];
    if (slot.index_plus_1 == 0) return kNotFound;
    if (slot.hash_lo == lo && get_id(slot.index_plus_1 - 1) == id)
      return slot.index_plus_1 - 1;
  }
}

}  // namespace berth::planner::internal

#endif  // BERTH_PLANNER_PLAN_ID_INDEX_H_
