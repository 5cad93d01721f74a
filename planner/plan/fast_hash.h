// A fast, non-cryptographic hash for short strings (ids, workspace and pool
// names), used only for in-memory lookups — never for anything that reaches
// the output, so its values may change freely. Internal to planner/.
#ifndef BERTH_PLANNER_PLAN_FAST_HASH_H_
#define BERTH_PLANNER_PLAN_FAST_HASH_H_

#include <cstdint>
#include <cstring>

#include "absl/strings/string_view.h"

namespace berth::planner::internal {

inline uint64_t Mix64(uint64_t a, uint64_t b) {
  const unsigned __int128 m =
      static_cast<unsigned __int128>(a ^ 0x9e3779b97f4a7c15ull) *
      (b ^ 0xd6e8feb86659fd93ull);
  return static_cast<uint64_t>(m) ^ static_cast<uint64_t>(m >> 64);
}

inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

inline uint64_t Load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

inline uint64_t FastHash(absl::string_view s) {
  const char* p = s.data();
  size_t n = s.size();
  uint64_t h = 0x243f6a8885a308d3ull ^ n;
  while (n > 16) {
    h = Mix64(h ^ Load64(p), Load64(p + 8));
    p += 16;
    n -= 16;
  }
  // 0..16 bytes left, read as (possibly overlapping) words; the length is
  // mixed in above.
  uint64_t a = 0, b = 0;
  if (n >= 8) {
    a = Load64(p);
    b = Load64(p + n - 8);
  } else if (n >= 4) {
    a = Load32(p);
    b = Load32(p + n - 4);
  } else if (n > 0) {
    a = (uint64_t{static_cast<uint8_t>(p[0])} << 16) |
        (uint64_t{static_cast<uint8_t>(p[n / 2])} << 8) |
        static_cast<uint8_t>(p[n - 1]);
  }
  return Mix64(h ^ a, b ^ 0x13198a2e03707344ull);
}

// a == b, without a call to memcmp for strings of up to 16 bytes.
inline bool SameString(absl::string_view a, absl::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  const char* p = a.data();
  const char* q = b.data();
  if (n >= 8 && n <= 16) {
    return Load64(p) == Load64(q) && Load64(p + n - 8) == Load64(q + n - 8);
  }
  if (n >= 4 && n < 8) {
    return Load32(p) == Load32(q) && Load32(p + n - 4) == Load32(q + n - 4);
  }
  return a == b;
}

}  // namespace berth::planner::internal

#endif  // BERTH_PLANNER_PLAN_FAST_HASH_H_
