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
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace berth {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

using LogFields = std::vector<std::pair<std::string, std::string>>;

void Log(LogLevel level, absl::string_view message, const LogFields& fields = {});

// Messages below `level` are dropped. Default kInfo.
void SetMinLogLevel(LogLevel level);

// The line Log() would write, without the timestamp (for tests).
std::string FormatLogLine(LogLevel level, absl::string_view message,
                          const LogFields& fields, absl::string_view timestamp);

}  // namespace berth

#endif  // BERTH_PLANNER_BASE_LOG_H_
