#include "planner/base/units.h"

#include <cmath>
#include <cstdlib>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace berth {
namespace {

absl::Status Bad(absl::string_view what, absl::string_view text,
                 absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": \"", text, "\": ", why));
}

// A non-negative decimal number ("12", "1.5", ".5") at the start of `text`.
struct Number {
  bool ok = false;
  bool fractional = false;
  int64_t whole = 0;     // valid if !fractional
  double value = 0;      // always valid
  absl::string_view rest;  // what follows the number
};

Number ReadNumber(absl::string_view text) {
  Number n;
  size_t i = 0;
  bool digits = false;
  while (i < text.size() && absl::ascii_isdigit(text[i])) {
    ++i;
    digits = true;
  }
  if (i < text.size() && text[i] == '.') {
    n.fractional = true;
    ++i;
    while (i < text.size() && absl::ascii_isdigit(text[i])) {
      ++i;
      digits = true;
    }
  }
  if (!digits) return n;
  absl::string_view num = text.substr(0, i);
  n.rest = text.substr(i);
  if (!n.fractional) {
    if (!absl::SimpleAtoi(num, &n.whole)) return n;  // overflow
    n.value = static_cast<double>(n.whole);
  } else if (!absl::SimpleAtod(num, &n.value)) {
    return n;
  }
  n.ok = true;
  return n;
}

// number * scale, exactly for integers; rounded for fractions. False on
// overflow of int64.
bool Scale(const Number& n, int64_t scale, int64_t* out) {
  if (!n.fractional) {
    if (n.whole != 0 && scale > std::numeric_limits<int64_t>::max() / n.whole) {
      return false;
    }
    *out = n.whole * scale;
    return true;
  }
  double v = std::round(n.value * static_cast<double>(scale));
  if (!(v < 9.2e18)) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

absl::string_view Trimmed(absl::string_view text) {
  return absl::StripAsciiWhitespace(text);
}

}  // namespace

absl::StatusOr<int64_t> ParseBytes(absl::string_view what,
                                   absl::string_view text) {
  absl::string_view t = Trimmed(text);
  if (t.empty()) return Bad(what, text, "empty; expected a size like 256Gi");
  if (t[0] == '-') return Bad(what, text, "must not be negative");
  Number n = ReadNumber(t);
  if (!n.ok) {
    return Bad(what, text, "not a size; expected e.g. 256Gi, 512Mi, 1.5G");
  }
  std::string unit(Trimmed(n.rest));
  struct Unit {
    const char* name;
    int64_t scale;
  };
  static constexpr int64_t kKi = 1024;
  static const Unit kUnits[] = {
      {"", 1},
      {"B", 1},
      {"K", 1000},
      {"KB", 1000},
      {"k", 1000},
      {"kB", 1000},
      {"M", 1000 * 1000},
      {"MB", 1000 * 1000},
      {"G", 1000LL * 1000 * 1000},
      {"GB", 1000LL * 1000 * 1000},
      {"T", 1000LL * 1000 * 1000 * 1000},
      {"TB", 1000LL * 1000 * 1000 * 1000},
      {"P", 1000LL * 1000 * 1000 * 1000 * 1000},
      {"PB", 1000LL * 1000 * 1000 * 1000 * 1000},
      {"Ki", kKi},
      {"KiB", kKi},
      {"Mi", kKi * kKi},
      {"MiB", kKi * kKi},
      {"Gi", kKi * kKi * kKi},
      {"GiB", kKi * kKi * kKi},
      {"Ti", kKi * kKi * kKi * kKi},
      {"TiB", kKi * kKi * kKi * kKi},
      {"Pi", kKi * kKi * kKi * kKi * kKi},
      {"PiB", kKi * kKi * kKi * kKi * kKi},
  };
  for (const Unit& u : kUnits) {
    if (unit == u.name) {
      int64_t bytes = 0;
      if (!Scale(n, u.scale, &bytes)) return Bad(what, text, "too large");
      return bytes;
    }
  }
  return Bad(what, text,
             absl::StrCat("unknown unit \"", unit,
                          "\" (use B, K, M, G, T, Ki, Mi, Gi, Ti)"));
}

absl::StatusOr<int64_t> ParseCpuMillis(absl::string_view what,
                                       absl::string_view text) {
  absl::string_view t = Trimmed(text);
  if (t.empty()) return Bad(what, text, "empty; expected cores like 32 or 500m");
  if (t[0] == '-') return Bad(what, text, "must not be negative");
  Number n = ReadNumber(t);
  if (!n.ok) return Bad(what, text, "not a CPU amount; expected e.g. 32, 1.5, 500m");
  absl::string_view unit = Trimmed(n.rest);
  int64_t millis = 0;
  if (unit.empty()) {
    if (!Scale(n, 1000, &millis)) return Bad(what, text, "too large");
    return millis;
  }
  if (unit == "m") {
    if (n.fractional) {
      return Bad(what, text, "millicores must be a whole number");
    }
    return n.whole;
  }
  return Bad(what, text,
             absl::StrCat("unknown unit \"", unit,
                          "\" (use cores like 32 or 1.5, or millicores like "
                          "500m)"));
}

absl::StatusOr<absl::Duration> ParseHumanDuration(absl::string_view what,
                                             absl::string_view text) {
  absl::string_view t = Trimmed(text);
  if (t.empty()) return Bad(what, text, "empty; expected e.g. 2h, 90m, 45s");
  if (t[0] == '-') return Bad(what, text, "must not be negative");
  if (t == "0") return absl::ZeroDuration();
  absl::Duration total = absl::ZeroDuration();
  absl::string_view rest = t;
  while (!rest.empty()) {
    Number n = ReadNumber(rest);
    if (!n.ok) {
      return Bad(what, text, "not a duration; expected e.g. 2h, 90m, 1h30m, 45s");
    }
    n.rest = absl::StripLeadingAsciiWhitespace(n.rest);
    size_t u = 0;
    while (u < n.rest.size() && absl::ascii_isalpha(n.rest[u])) ++u;
    absl::string_view unit = n.rest.substr(0, u);
    absl::Duration scale;
    if (unit == "d") {
      scale = absl::Hours(24);
    } else if (unit == "h") {
      scale = absl::Hours(1);
    } else if (unit == "m") {
      scale = absl::Minutes(1);
    } else if (unit == "s") {
      scale = absl::Seconds(1);
    } else if (unit == "ms") {
      scale = absl::Milliseconds(1);
    } else if (unit.empty()) {
      return Bad(what, text, "missing unit (use d, h, m, s or ms, e.g. 90m)");
    } else {
      return Bad(what, text,
                 absl::StrCat("unknown unit \"", unit,
                              "\" (use d, h, m, s or ms)"));
    }
    total += n.fractional ? scale * n.value : scale * n.whole;
    rest = absl::StripLeadingAsciiWhitespace(n.rest.substr(u));
  }
  if (total >= absl::Hours(24 * 365 * 100)) return Bad(what, text, "too large");
  return total;
}

}  // namespace berth
