// Units, in one place for every layer: byte sizes, CPU amounts, durations
// and times, formatted for people ("6 GiB", "1.5 cores", "1h30m",
// "2026-11-22 14:20 UTC") and parsed from flags and files ("256Gi", "500m",
// "90m").
//
// Parsers return INVALID_ARGUMENT whose message names `what` (the flag or
// field, e.g. "--memory") and the bad value, e.g.
//   --memory: "256Gx": unknown unit "Gx" (use B, K, M, G, T, Ki, Mi, Gi, Ti)
// Parsers accept zero and reject negatives; callers that need a positive
// value check for zero themselves (the message then says "must be > 0").
// Thread-safe: pure functions.
#ifndef BERTH_PLANNER_BASE_UNITS_H_
#define BERTH_PLANNER_BASE_UNITS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace berth {

// ---- Formatting for people (explanations, events, reports) ----

enum class Rounding {
  kNearest,  // for amounts reported ("needs 16 GiB")
  kDown,     // for upper bounds ("fits if <= 6 GiB" must stay true)
};

// Bytes in binary units with at most two decimals, trailing zeros dropped:
// "512 B", "1.5 KiB", "1.75 GiB", "6 GiB", "2 TiB"; negative values get a
// leading "-". Every byte figure berthd, berthctl and berth-plan print goes
// through it, so a column and its sum agree.
[[nodiscard]] std::string FormatBytes(int64_t bytes, Rounding rounding = Rounding::kNearest);

// FormatBytes(bytes), or the exact count ("6291455 B") when that would read
// the same as FormatBytes(other) for a different amount: a message comparing
// a value with a limit ("is 6 MiB; the minimum is 6 MiB") must not contradict
// itself.
[[nodiscard]] std::string FormatBytesBeside(int64_t bytes, int64_t other);

// Millicores as cores with at most three decimals: "1 core", "1.5 cores",
// "0.25 cores".
[[nodiscard]] std::string FormatCpu(int64_t millis, Rounding rounding = Rounding::kNearest);

// "2026-11-22 14:20:31 UTC", to the second like every ETA berthctl shows;
// "unknown" for infinite times.
[[nodiscard]] std::string FormatTimeUtc(absl::Time t);

// ---- Compact forms that the parsers read back ----

// Compact form that ParseBytes reads back exactly when possible ("256Gi",
// "1536Mi", "100"): the largest binary unit that divides the value.
std::string FormatBytesFlag(int64_t bytes);

// Cores as a bare number with up to three decimals, trailing zeros dropped
// (the form ParseCpuMillis reads back): 32000 -> "32", 1500 -> "1.5",
// 250 -> "0.25".
std::string FormatCores(int64_t millis);

// Rounded to whole seconds (sub-second values to milliseconds): "0s",
// "45s", "1h30m", "2d3h", "1h0m5s" is written "1h5s"; "250ms".
std::string FormatHumanDuration(absl::Duration d);

// ---- Parsing (flags, budget files) ----

// Bytes. Suffixes (case-sensitive, optional trailing "B"/"iB"): none or "B"
// = bytes; K, M, G, T, P = powers of 1000; Ki, Mi, Gi, Ti, Pi = powers of
// 1024. A fractional number is rounded to the nearest byte ("1.5Gi").
[[nodiscard]] absl::StatusOr<int64_t> ParseBytes(absl::string_view what,
                                                 absl::string_view text);

// Millicores. "32" or "1.5" = cores; "500m" = millicores (integer).
[[nodiscard]] absl::StatusOr<int64_t> ParseCpuMillis(absl::string_view what,
                                                     absl::string_view text);

// A duration with units: combinations of d, h, m, s, ms ("1h30m", "1.5h",
// "2d", "45s"). A bare number is an error except "0".
[[nodiscard]] absl::StatusOr<absl::Duration> ParseHumanDuration(
    absl::string_view what, absl::string_view text);

}  // namespace berth

#endif  // BERTH_PLANNER_BASE_UNITS_H_
