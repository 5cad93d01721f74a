// Human units for berth-plan's flags, files and reports: byte sizes
// ("256Gi", "512Mi", "1.5G"), CPU amounts ("32", "500m", "1.5") and
// durations ("2h", "90m", "45s", "1h30m", "2d").
//
// Parsers return INVALID_ARGUMENT whose message names `what` (the flag or
// field, e.g. "--memory") and the bad value, e.g.
//   --memory: "256Gx": unknown unit "Gx" (use B, K, M, G, T, Ki, Mi, Gi, Ti)
// Parsers accept zero and reject negatives; callers that need a positive
// value check for zero themselves (the message then says "must be > 0").
// All functions are pure and thread-safe.
#ifndef BERTH_TOOLS_PLAN_UNITS_H_
#define BERTH_TOOLS_PLAN_UNITS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace berth {
namespace plan {

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

// Splits a comma list ("8,16,24") into non-empty trimmed items;
// INVALID_ARGUMENT naming `what` if an item is empty.
[[nodiscard]] absl::StatusOr<std::vector<std::string>> SplitList(
    absl::string_view what, absl::string_view text);

// "256 GiB", "1.5 GiB", "512 MiB", "100 B": planner::FormatBytes (the same
// text berthd's explanations use).
std::string FormatBytes(int64_t bytes);

// Compact form that ParseBytes reads back exactly when possible ("256Gi",
// "1536Mi", "100"): the largest binary unit that divides the value.
std::string FormatBytesFlag(int64_t bytes);

// Cores with up to three decimals, trailing zeros dropped: 32000 -> "32",
// 1500 -> "1.5", 250 -> "0.25".
std::string FormatCpu(int64_t millis);

// Rounded to whole seconds (sub-second values to milliseconds): "0s",
// "45s", "1h30m", "2d3h", "1h0m5s" is written "1h5s"; "250ms".
std::string FormatHumanDuration(absl::Duration d);

}  // namespace plan
}  // namespace berth

#endif  // BERTH_TOOLS_PLAN_UNITS_H_
