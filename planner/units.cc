#include "planner/units.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace berth::planner {
namespace {

// value / unit with `decimals` decimals (trailing zeros dropped), rounded as
// asked, as an exact integer computation. REQUIRES: value >= 0.
std::string Scaled(uint64_t value, uint64_t unit, int decimals,
                   Rounding rounding) {
  uint64_t scale = 1;
  for (int i = 0; i < decimals; ++i) scale *= 10;
  const unsigned __int128 num = static_cast<unsigned __int128>(value) * scale;
  unsigned __int128 q = num / unit;
  if (rounding == Rounding::kNearest && (num % unit) * 2 >= unit) ++q;
  const uint64_t whole = static_cast<uint64_t>(q / scale);
  uint64_t frac = static_cast<uint64_t>(q % scale);
  if (frac == 0) return absl::StrCat(whole);
  int digits = decimals;
  while (frac % 10 == 0) {
    frac /= 10;
    --digits;
  }
  return absl::StrFormat("%d.%0*d", whole, digits, frac);
}

uint64_t Magnitude(int64_t v) {
  return v < 0 ? static_cast<uint64_t>(-(v + 1)) + 1 : static_cast<uint64_t>(v);
}

}  // namespace

std::string FormatBytes(int64_t bytes, Rounding rounding) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB",
                                           "PiB", "EiB"};
  const uint64_t v = Magnitude(bytes);
  // Rounding down a negative amount means rounding its magnitude up; only
  // the reported sign matters for such (invalid) inputs, so keep it simple.
  int u = 0;
  uint64_t unit = 1;
  while (u < 6 && v >= unit * 1024) {
    unit *= 1024;
    ++u;
  }
  return absl::StrCat(bytes < 0 ? "-" : "",
                      Scaled(v, unit, u == 0 ? 0 : 1, rounding), " ", kUnits[u]);
}

std::string FormatCpu(int64_t millis, Rounding rounding) {
  const uint64_t v = Magnitude(millis);
  const std::string n = Scaled(v, 1000, 3, rounding);
  return absl::StrCat(millis < 0 ? "-" : "", n, n == "1" ? " core" : " cores");
}

std::string FormatTimeUtc(absl::Time t) {
  if (t == absl::InfiniteFuture() || t == absl::InfinitePast()) return "unknown";
  return absl::FormatTime("%Y-%m-%d %H:%M UTC", t, absl::UTCTimeZone());
}

}  // namespace berth::planner
