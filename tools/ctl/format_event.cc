#include "tools/ctl/format_event.h"

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "planner/base/units.h"
#include "tools/ctl/format.h"
#include "tools/ctl/format_usage.h"

namespace berth::ctl {

std::string EventLine(const v1::Event& e) {
  std::string line = absl::StrCat(
      e.revision(), "  ",
      e.has_time() ? absl::FormatTime("%H:%M:%S", absl::FromUnixSeconds(e.time().seconds()) + absl::Nanoseconds(e.time().nanos()), absl::UTCTimeZone()) : "-",
      "  ", EventTypeName(e.type()));
  switch (e.type()) {
    case v1::EVENT_TYPE_JOB_STATE_CHANGED:
      absl::StrAppend(&line, "  ", e.job_id(), " (", e.workspace(), ")  ",
                      e.previous_state() == v1::JOB_STATE_UNSPECIFIED
                          ? std::string("new")
                          : StateName(e.previous_state()),
                      " -> ", StateName(e.state()));
      if (e.state() == v1::JOB_STATE_FAILED) {
        absl::StrAppend(&line, " ", FailureCauseName(e.failure_cause()));
      }
      if (e.state() == v1::JOB_STATE_REJECTED) {
        absl::StrAppend(&line, " ", RejectReasonName(e.reject_reason()));
      }
      if (e.has_exit_code()) absl::StrAppend(&line, " exit=", e.exit_code());
      if (e.has_observed()) absl::StrAppend(&line, "  ", FormatUsage(e.observed(), 0));
      break;
    case v1::EVENT_TYPE_JOB_SPEC_UPDATED:
      absl::StrAppend(&line, "  ", e.job_id(), " (", e.workspace(), ")");
      break;
    case v1::EVENT_TYPE_SNAPSHOT_APPLIED:
      absl::StrAppend(&line, "  generation ", e.generation());
      break;
    case v1::EVENT_TYPE_BUDGETS_CHANGED:
      absl::StrAppend(&line, "  memory ", FormatBytes(e.budgets().memory_bytes()), ", cpu ",
                      FormatCpu(e.budgets().cpu_millis()), ", workers ", e.budgets().max_workers());
      break;
    case v1::EVENT_TYPE_POOL_MAINTENANCE_CHANGED:
      absl::StrAppend(&line, "  ", e.pool(), " ", e.in_maintenance() ? "on" : "off");
      break;
    case v1::EVENT_TYPE_ORPHAN_STOPPED:
    case v1::EVENT_TYPE_STRAY_TASK:
      absl::StrAppend(&line, "  ", e.container());
      break;
    default:
      break;
  }
  if (!e.message().empty()) absl::StrAppend(&line, "  ", e.message());
  return line;
}

}  // namespace berth::ctl
