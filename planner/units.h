// Human units for explanations: "6 GiB", "1.5 cores", "14:20 UTC".
// Thread-safe: pure functions.
#ifndef BERTH_PLANNER_UNITS_H_
#define BERTH_PLANNER_UNITS_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"

namespace berth::planner {

enum class Rounding {
  kNearest,  // for amounts reported ("needs 16 GiB")
  kDown,     // for upper bounds ("fits if <= 6 GiB" must stay true)
};

// Bytes in binary units with at most one decimal: "512 B", "1.5 KiB",
// "6 GiB", "2 TiB"; negative values get a leading "-".
[[nodiscard]] std::string FormatBytes(int64_t bytes, Rounding rounding = Rounding::kNearest);

// Millicores as cores with at most three decimals: "1 core", "1.5 cores",
// "0.25 cores".
[[nodiscard]] std::string FormatCpu(int64_t millis, Rounding rounding = Rounding::kNearest);

// "2026-11-22 14:20 UTC"; "unknown" for infinite times.
[[nodiscard]] std::string FormatTimeUtc(absl::Time t);

}  // namespace berth::planner

#endif  // BERTH_PLANNER_UNITS_H_
