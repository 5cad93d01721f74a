#include "tools/ctl/format_attempts.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "planner/base/units.h"
#include "tools/ctl/format.h"

namespace berth::ctl {

std::string RequeueCauseName(v1::RequeueCause cause) {
  switch (cause) {
    case v1::REQUEUE_CAUSE_DRAIN: return "drain";
    case v1::REQUEUE_CAUSE_POOL_MAINTENANCE: return "pool maintenance";
    case v1::REQUEUE_CAUSE_NODE_DRAINED: return "node drained";
    case v1::REQUEUE_CAUSE_NODE_LOST: return "node lost";
    case v1::REQUEUE_CAUSE_OOM_RETRY: return "OOM retry";
    case v1::REQUEUE_CAUSE_ENGINE_STOPPED: return "engine stopped";
    default: return "unknown";
  }
}

std::string FormatAttempt(const v1::Attempt& a) {
  std::vector<std::string> parts;
  if (a.outcome() == v1::JOB_STATE_QUEUED) {
    parts.push_back(absl::StrCat("requeued (", RequeueCauseName(a.requeue_cause()), ")"));
  } else if (a.outcome() == v1::JOB_STATE_FAILED) {
    parts.push_back(absl::StrCat("FAILED (", FailureCauseName(a.failure_cause()), ")"));
  } else {
    parts.push_back(StateName(a.outcome()));
  }
  if (a.has_exit_code()) parts.push_back(absl::StrCat("exit ", a.exit_code()));
  if (a.has_started_at()) {
    parts.push_back(absl::StrCat("started ", FormatTimestamp(a.started_at())));
    if (a.has_finished_at()) {
      const absl::Duration ran =
          absl::Seconds(a.finished_at().seconds() - a.started_at().seconds());
      parts.push_back(absl::StrCat("ran ", FormatHumanDuration(ran)));
    }
  } else if (a.has_finished_at()) {
    parts.push_back(absl::StrCat("ended ", FormatTimestamp(a.finished_at()),
                                 " before its container started"));
  }
  if (!a.node().empty()) parts.push_back(absl::StrCat("node ", a.node()));
  if (a.log_kept()) {
    parts.push_back(absl::StrCat("log ", FormatBytes(a.stdout_log_bytes()), " stdout / ",
                                 FormatBytes(a.stderr_log_bytes()), " stderr"));
    if (a.stdout_cut().dropped_bytes() > 0) {
      parts.push_back(absl::StrCat("stdout cut: ", FormatLogCut(a.stdout_cut())));
    }
    if (a.stderr_cut().dropped_bytes() > 0) {
      parts.push_back(absl::StrCat("stderr cut: ", FormatLogCut(a.stderr_cut())));
    }
  }
  std::string line = absl::StrJoin(parts, ", ");
  if (!a.message().empty()) absl::StrAppend(&line, ": ", a.message());
  return line;
}

std::string FormatLogCut(const v1::LogCut& cut) {
  if (cut.dropped_bytes() <= 0) return "";
  return absl::StrCat(FormatBytes(cut.dropped_bytes()), " dropped of ",
                      FormatBytes(cut.total_bytes()), ", first ", FormatBytes(cut.head_bytes()),
                      " and last ", FormatBytes(cut.tail_bytes()), " kept");
}

}  // namespace berth::ctl
