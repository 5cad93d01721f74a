// Saturating int64 arithmetic for budget accounting: bad input (huge
// resources, budgets near INT64_MAX) must never overflow. Internal to the
// planner.
#ifndef BERTH_PLANNER_MODEL_SATURATING_H_
#define BERTH_PLANNER_MODEL_SATURATING_H_

#include <cstdint>
#include <limits>

namespace berth::planner::internal {

inline constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// a + b clamped to [INT64_MIN, INT64_MAX].
inline int64_t SatAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? kInt64Max : kInt64Min;
  return r;
}

// a - b clamped to [INT64_MIN, INT64_MAX].
inline int64_t SatSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? kInt64Max : kInt64Min;
  return r;
}

// a * b for a, b >= 0, saturated at INT64_MAX.
inline int64_t SatMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? kInt64Max : r;
}

}  // namespace berth::planner::internal

#endif  // BERTH_PLANNER_MODEL_SATURATING_H_
