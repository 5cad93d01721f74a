// Documented maximums of the operator and read RPCs' strings (
// every string and duration the API takes has one). Job specs have theirs in
// server/ingest/job_validation.h and executor/runtime_limits.h; the snapshot
// stream's in server/ingest/snapshot_assembler.h.
//
//   Pause.reason, Drain.reason, SetPoolMaintenance.reason   <= 1024 bytes
//   SetPoolMaintenance.pool, ListJobs.workspace/.pool,
//   GetJob/ExplainJob/ReadJobLog.job_id                     <= 128 bytes
//   ListJobs.page_token                                     <= 1024 bytes
// Over the limit: INVALID_ARGUMENT naming the field, the size and the limit.
//
// Pure; thread-safe.
#ifndef BERTH_SERVER_CORE_REQUEST_LIMITS_H_
#define BERTH_SERVER_CORE_REQUEST_LIMITS_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "planner/base/units.h"

namespace berth {

inline constexpr size_t kMaxReasonBytes = 1024;
inline constexpr size_t kMaxNameBytes = 128;
inline constexpr size_t kMaxPageTokenBytes = 1024;

// OK if `value` is at most `max` bytes; else INVALID_ARGUMENT naming `field`.
inline absl::Status CheckLength(absl::string_view field, absl::string_view value,
                                size_t max) {
  if (value.size() <= max) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": longer than ", FormatBytes(static_cast<int64_t>(max))));
}

}  // namespace berth

#endif  // BERTH_SERVER_CORE_REQUEST_LIMITS_H_
