#include "planner/base/log.h"

#include <unistd.h>

#include <atomic>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace berth {
namespace {

std::atomic<int> min_level{static_cast<int>(LogLevel::kInfo)};

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kError: return "error";
  }
  return "info";
}

void AppendJsonString(std::string* out, absl::string_view s) {
  out->push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default:
        if (c < 0x20) {
          absl::StrAppendFormat(out, "\\u%04x", c);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

}  // namespace

LogValue::LogValue(double number)
    : text_(std::isfinite(number) ? absl::StrFormat("%.15g", number) : "null"), bare_(true) {}

void SetMinLogLevel(LogLevel level) { min_level = static_cast<int>(level); }

std::string FormatLogLine(LogLevel level, absl::string_view message,
                          const LogFields& fields, absl::string_view timestamp) {
  std::string line = "{";
  if (!timestamp.empty()) {
    line.append("\"ts\":");
    AppendJsonString(&line, timestamp);
    line.push_back(',');
  }
  absl::StrAppend(&line, "\"level\":\"", LevelName(level), "\",\"msg\":");
  AppendJsonString(&line, message);
  for (const auto& [key, value] : fields) {
    line.push_back(',');
    AppendJsonString(&line, key);
    line.push_back(':');
    if (value.bare()) {
      line.append(value.text());
    } else {
      AppendJsonString(&line, value.text());
    }
  }
  line.append("}\n");
  return line;
}

void Log(LogLevel level, absl::string_view message, const LogFields& fields) {
  if (static_cast<int>(level) < min_level.load(std::memory_order_relaxed)) return;
  std::string ts = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone());
  std::string line = FormatLogLine(level, message, fields, ts);
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = write(STDERR_FILENO, p, left);
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace berth
