#include "tools/base/json_time.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"

namespace berth {
namespace {

constexpr int64_t kMinTimestampSeconds = -62135596800;  // 0001-01-01T00:00:00Z
constexpr int64_t kMaxTimestampSeconds = 253402300799;  // 9999-12-31T23:59:59Z
constexpr int64_t kMaxDurationSeconds = 315576000000;

}  // namespace

bool IsDecimalDigits(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isdigit(c); });
}

bool ParseJsonDuration(absl::string_view s, int64_t* seconds, int32_t* nanos) {
  if (s.size() < 2 || s.back() != 's') return false;
  s.remove_suffix(1);
  const bool negative = !s.empty() && s.front() == '-';
  if (negative) s.remove_prefix(1);
  absl::string_view whole = s, fraction;
  if (const size_t dot = s.find('.'); dot != absl::string_view::npos) {
    whole = s.substr(0, dot);
    fraction = s.substr(dot + 1);
    if (fraction.empty() || fraction.size() > 9 || !IsDecimalDigits(fraction)) return false;
  }
  uint64_t secs = 0;
  if (!IsDecimalDigits(whole) || whole.size() > 12 || !absl::SimpleAtoi(whole, &secs) ||
      secs > static_cast<uint64_t>(kMaxDurationSeconds)) {
    return false;
  }
  int32_t n = 0;
  if (!fraction.empty()) {
    if (!absl::SimpleAtoi(fraction, &n)) return false;
    for (size_t i = fraction.size(); i < 9; ++i) n *= 10;
  }
  *seconds = negative ? -static_cast<int64_t>(secs) : static_cast<int64_t>(secs);
  *nanos = negative ? -n : n;
  return true;
}

bool ParseJsonTimestamp(absl::string_view s, int64_t* seconds, int32_t* nanos) {
  if (s.size() < 20 || s.back() != 'Z' || s[4] != '-' || s[7] != '-' || s[10] != 'T' ||
      s[13] != ':' || s[16] != ':') {
    return false;
  }
  int64_t y = 0;
  int m = 0, d = 0, hh = 0, mm = 0, ss = 0;
  auto number = [&s](size_t at, size_t len, auto* out) {
    const absl::string_view part = s.substr(at, len);
    return IsDecimalDigits(part) && absl::SimpleAtoi(part, out);
  };
  if (!number(0, 4, &y) || !number(5, 2, &m) || !number(8, 2, &d) || !number(11, 2, &hh) ||
      !number(14, 2, &mm) || !number(17, 2, &ss)) {
    return false;
  }
  int32_t n = 0;
  const absl::string_view rest = s.substr(19, s.size() - 20);
  if (!rest.empty()) {
    if (rest.front() != '.' || rest.size() < 2 || rest.size() > 10 || !IsDecimalDigits(rest.substr(1)) ||
        !absl::SimpleAtoi(rest.substr(1), &n)) {
      return false;
    }
    for (size_t i = rest.size() - 1; i < 9; ++i) n *= 10;
  }
  const absl::CivilSecond civil(y, m, d, hh, mm, ss);
  if (civil.year() != y || civil.month() != m || civil.day() != d || civil.hour() != hh ||
      civil.minute() != mm || civil.second() != ss) {
    return false;  // 2026-02-30, 25:00:00, a leap second: not normalised here
  }
  *seconds = absl::ToUnixSeconds(absl::FromCivil(civil, absl::UTCTimeZone()));
  *nanos = n;
  return *seconds >= kMinTimestampSeconds && *seconds <= kMaxTimestampSeconds;
}


}  // namespace berth
