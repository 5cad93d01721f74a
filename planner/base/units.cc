#include "planner/base/units.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace berth {
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
                      Scaled(v, unit, u == 0 ? 0 : 2, rounding), " ", kUnits[u]);
}

std::string FormatBytesBeside(int64_t bytes, int64_t other) {
  std::string text = FormatBytes(bytes);
  if (bytes != other && text == FormatBytes(other)) return absl::StrCat(bytes, " B");
  return text;
}

std::string FormatCpu(int64_t millis, Rounding rounding) {
  const uint64_t v = Magnitude(millis);
  const std::string n = Scaled(v, 1000, 3, rounding);
  return absl::StrCat(millis < 0 ? "-" : "", n, n == "1" ? " core" : " cores");
}

std::string FormatTimeUtc(absl::Time t) {
  if (t == absl::InfiniteFuture() || t == absl::InfinitePast()) return "unknown";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", t, absl::UTCTimeZone());
}

std::string FormatBytesFlag(int64_t bytes) {
  static const char* kNames[] = {"Pi", "Ti", "Gi", "Mi", "Ki"};
  static const int64_t kScales[] = {1LL << 50, 1LL << 40, 1LL << 30, 1LL << 20,
                                    1LL << 10};
  if (bytes > 0) {
    for (int i = 0; i < 5; ++i) {
      if (bytes % kScales[i] == 0) {
        return absl::StrCat(bytes / kScales[i], kNames[i]);
      }
    }
  }
  return absl::StrCat(bytes);
}

std::string FormatCores(int64_t millis) {
  std::string sign = millis < 0 ? "-" : "";
  uint64_t m = millis < 0 ? -static_cast<uint64_t>(millis)
                          : static_cast<uint64_t>(millis);
  std::string out = absl::StrCat(sign, m / 1000);
  uint64_t frac = m % 1000;
  if (frac != 0) {
    std::string f = absl::StrFormat("%03d", static_cast<int>(frac));
    while (!f.empty() && f.back() == '0') f.pop_back();
    absl::StrAppend(&out, ".", f);
  }
  return out;
}

std::string FormatHumanDuration(absl::Duration d) {
  if (d < absl::ZeroDuration()) return absl::StrCat("-", FormatHumanDuration(-d));
  if (d == absl::InfiniteDuration()) return "inf";
  if (d < absl::Seconds(1)) {
    int64_t ms = absl::ToInt64Milliseconds(d);
    return ms == 0 ? "0s" : absl::StrCat(ms, "ms");
  }
  int64_t s = absl::ToInt64Seconds(d + absl::Milliseconds(500));
  int64_t days = s / 86400;
  s %= 86400;
  int64_t hours = s / 3600;
  s %= 3600;
  int64_t minutes = s / 60;
  s %= 60;
  std::string out;
  if (days) absl::StrAppend(&out, days, "d");
  if (hours) absl::StrAppend(&out, hours, "h");
  if (minutes) absl::StrAppend(&out, minutes, "m");
  if (s || out.empty()) absl::StrAppend(&out, s, "s");
  return out;
}

}  // namespace berth
