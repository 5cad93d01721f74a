// Structured logging: one JSON object per line on stderr, e.g.
//   {"ts":"2026-11-22T14:03:07.123Z","level":"info","msg":"job finished",
//    "job":"ws1.a","state":"SUCCEEDED"}
//
//   Log(LogLevel::kInfo, "job finished", {{"job", id}, {"state", "SUCCEEDED"}});
//
// Lines are written whole with one write(2), so concurrent threads never
// interleave within a line. Messages below the minimum level are dropped.
// Thread-safe. (Logging is output, not time-keeping: the timestamp is the
// only use of the wall clock here.)
#ifndef BERTH_PLANNER_BASE_LOG_H_
#define BERTH_PLANNER_BASE_LOG_H_

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace berth {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// A field's value: text (written as a JSON string) or a number or boolean
// (written bare, so log processors see numbers as numbers):
//   {{"job", id}, {"jobs", 1200}, {"seconds", 0.25}, {"dry_run", false}}
class LogValue {
 public:
  LogValue(std::string text) : text_(std::move(text)) {}  // NOLINT
  LogValue(const char* text) : text_(text) {}             // NOLINT
  LogValue(absl::string_view text) : text_(text) {}       // NOLINT
  template <typename T,
            typename = std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                                        !std::is_same_v<T, char>>>
  LogValue(T number) : text_(std::to_string(number)), bare_(true) {}  // NOLINT
  LogValue(double number);                                             // NOLINT
  LogValue(bool b) : text_(b ? "true" : "false"), bare_(true) {}       // NOLINT

  const std::string& text() const { return text_; }
  // True for numbers and booleans (no quotes in the JSON line).
  bool bare() const { return bare_; }

 private:
  std::string text_;
  bool bare_ = false;
};

using LogFields = std::vector<std::pair<std::string, LogValue>>;

void Log(LogLevel level, absl::string_view message, const LogFields& fields = {});

// Messages below `level` are dropped. Default kInfo.
void SetMinLogLevel(LogLevel level);

// The line Log() would write, without the timestamp (for tests).
std::string FormatLogLine(LogLevel level, absl::string_view message,
                          const LogFields& fields, absl::string_view timestamp);

}  // namespace berth

#endif  // BERTH_PLANNER_BASE_LOG_H_
