#include "executor/runtime/docker/log_repeat_filter.h"

#include <string>

namespace berth {
namespace {

// "2026-11-27T11:21:48.123456789Z " -> seconds part and nanoseconds; false
// if `frame` does not start with such a prefix (then *rest is untouched).
bool ParseStamp(absl::string_view frame, absl::string_view* seconds, int64_t* nanos,
                absl::string_view* rest) {
  const size_t space = frame.find(' ');
  if (space == absl::string_view::npos || space < 20 || space > 40) return false;
  const absl::string_view stamp = frame.substr(0, space);
  if (stamp[4] != '-' || stamp[10] != 'T' || stamp[13] != ':' || stamp.back() != 'Z') {
    return false;
  }
  *seconds = stamp.substr(0, 19);
  int64_t n = 0;
  int digits = 0;
  if (stamp[19] == '.') {
    for (size_t i = 20; i + 1 < stamp.size(); ++i) {
      const char c = stamp[i];
      if (c < '0' || c > '9' || digits == 9) return false;
      n = n * 10 + (c - '0');
      ++digits;
    }
  } else if (stamp.size() != 20) {
    return false;
  }
  for (; digits < 9; ++digits) n *= 10;
  *nanos = n;
  *rest = frame.substr(space + 1);
  return true;
}

}  // namespace

bool ParseDockerLogStamp(absl::string_view frame, absl::Time* time, absl::string_view* text) {
  absl::string_view seconds;
  int64_t nanos = 0;
  absl::string_view rest;
  if (!ParseStamp(frame, &seconds, &nanos, &rest)) return false;
  absl::Time t;
  std::string error;
  if (!absl::ParseTime("%Y-%m-%dT%H:%M:%S", seconds, absl::UTCTimeZone(), &t, &error)) {
    return false;
  }
  *time = t + absl::Nanoseconds(nanos);
  *text = rest;
  return true;
}

bool LogRepeatFilter::Keep(int stream, absl::string_view frame, absl::string_view* text) {
  absl::string_view seconds;
  int64_t nanos = 0;
  absl::string_view rest;
  if (!ParseStamp(frame, &seconds, &nanos, &rest)) {
    *text = frame;
    return true;
  }
  StreamState& s = streams_[stream == 2 ? 1 : 0];
  int order = 1;  // this message against the last kept: -1 earlier, 0 same, 1 later
  if (s.any) {
    const int c = seconds.compare(s.seconds);
    order = c != 0 ? (c < 0 ? -1 : 1) : (nanos < s.nanos ? -1 : nanos > s.nanos ? 1 : 0);
  }
  bool keep = false;
  if (order > 0) {
    keep = true;
    s.any = true;
    s.seconds.assign(seconds.data(), seconds.size());
    s.nanos = nanos;
    s.kept_at_last = 0;
    s.repeating = false;
  } else if (order < 0) {
    s.repeating = true;  // a repeat began
    s.repeated_at_last = 0;
  } else if (s.repeating) {
    keep = ++s.repeated_at_last > s.kept_at_last;
    if (keep) s.repeating = false;
  } else if (!s.last_ended_line) {
    keep = true;  // the next piece of a split line
  } else {
    s.repeating = true;  // a repeat that began at the last timestamp
    s.repeated_at_last = 1;
  }
  if (!keep) return false;
  ++s.kept_at_last;
  s.last_ended_line = !rest.empty() && rest.back() == '\n';
  *text = rest;
  return true;
}

}  // namespace berth
