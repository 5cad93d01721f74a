// The "drf" ranking's share key and tie-break, defined once: the whole-queue
// ranking (ranking_drf.cc) and the incremental planner's rank stream
// (planner/plan/incremental_rank.cc) must order jobs identically, bit for bit.
#ifndef BERTH_PLANNER_RANKING_DRF_KEYS_H_
#define BERTH_PLANNER_RANKING_DRF_KEYS_H_

#include <cstdint>
#include <cstring>

namespace berth::planner::internal {

// A dominant share (>= 0) as the ranking compares it: its float's bits, so
// that shares equal to float precision tie and go to the next key.
inline uint32_t DrfShareBits(double share) {
  const float f = static_cast<float>(share);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

// The last tie-break between workspaces: a hash of the job's created_at and
// its workspace, stable across passes and processes.
inline uint64_t DrfTieSalt(int64_t created_ns, uint32_t workspace) {
  uint64_t x = static_cast<uint64_t>(created_ns) * 0x9E3779B97F4A7C15ull ^
               (uint64_t{workspace} + 0x632BE59BD9B4E019ull);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return x;
}

}  // namespace berth::planner::internal

#endif  // BERTH_PLANNER_RANKING_DRF_KEYS_H_
