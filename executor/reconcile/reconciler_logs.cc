// Reconciler::CaptureLogs: a finished container's whole log into the log
// archive, before its outcome is recorded and the container removed.
#include <string>

#include "absl/strings/str_cat.h"
#include "executor/reconcile/reconciler.h"
#include "planner/base/crash_point.h"
#include "planner/base/log.h"

namespace berth {

bool Reconciler::CaptureLogs(const StoredJob& job, std::optional<AttemptLogInfo>* info) {
  LogArchive* archive = options_.log_archive;
  if (archive == nullptr) return true;
  const std::string& id = job.job.spec().id();
  const int attempt = job.job.requeue_count() + 1;
  *info = archive->Info(id, attempt);
  if (info->has_value()) return true;  // captured before a crash
  if (options_.live_logs != nullptr) {
    // Followed while it ran: what the job printed, not what the engine
    // still holds.
    absl::Status live = options_.live_logs->Finish(id, attempt);
    if (live.ok()) {
      *info = archive->Info(id, attempt);
      CrashPoint("reconcile.after_log_capture");  // captured, outcome not recorded
      return true;
    }
    if (live.code() != absl::StatusCode::kNotFound) {
      Log(LogLevel::kWarning, "live log capture incomplete; reading the whole log",
          {{"job", id}, {"attempt", absl::StrCat(attempt)},
           {"error", std::string(live.message())}});
    }
  }
  absl::Status s = archive->Capture(id, attempt, [&](const LogSink& sink) {
    return runtime_.ReadLogs(id, LogReadOptions{}, sink);
  });
  if (s.ok()) {
    *info = archive->Info(id, attempt);
    CrashPoint("reconcile.after_log_capture");  // captured, outcome not recorded
    return true;
  }
  if (s.code() == absl::StatusCode::kNotFound ||
      s.code() == absl::StatusCode::kUnimplemented) {
    Log(LogLevel::kWarning, "job log not captured",
        {{"job", id}, {"attempt", absl::StrCat(attempt)},
         {"error", std::string(s.message())}});
    return true;
  }
  // Engine trouble or a full disk: the container stays, a later pass retries.
  Log(LogLevel::kWarning, "job log capture failed; will retry",
      {{"job", id}, {"attempt", absl::StrCat(attempt)},
       {"error", std::string(s.message())}});
  return false;
}

}  // namespace berth
