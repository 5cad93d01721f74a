// The Timestamp and Duration strings of the proto3 JSON mapping, read
// strictly: the plain forms only, so that what is read here is read the same
// by protobuf's own parser (tools/base/json_message.h relies on it).
#ifndef BERTH_TOOLS_BASE_JSON_TIME_H_
#define BERTH_TOOLS_BASE_JSON_TIME_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace berth {

// True if `s` is one or more of 0-9.
bool IsDecimalDigits(absl::string_view s);

// "-?D+(.D{1,9})?s" within the mapping's range (±315,576,000,000 s).
[[nodiscard]] bool ParseJsonDuration(absl::string_view s, int64_t* seconds, int32_t* nanos);

// "YYYY-MM-DDTHH:MM:SS(.D{1,9})?Z" naming a real instant in years 1-9999; an
// offset other than Z, a leap second or 2026-02-30 is not read (false).
[[nodiscard]] bool ParseJsonTimestamp(absl::string_view s, int64_t* seconds, int32_t* nanos);

}  // namespace berth

#endif  // BERTH_TOOLS_BASE_JSON_TIME_H_
