// Reconciler::CaptureLogs: a finished container's whole log into the log
// archive, before its outcome is recorded and the container removed; and the
// run metadata written after it (--write_run_metadata), including what a
// killed berthd still owed.
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
    // still holds (unless it holds all of it: then read whole, below).
    absl::Status live = options_.live_logs->Finish(id, attempt);
    if (live.ok()) {
      *info = archive->Info(id, attempt);
      CrashPoint("reconcile.after_log_capture");  // captured, outcome not recorded
      return true;
    }
    if (live.code() != absl::StatusCode::kNotFound &&
        live.code() != absl::StatusCode::kFailedPrecondition) {
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

void Reconciler::NoteMetadataOwed(const std::string& id, const std::string& image_id) {
  absl::Status noted = MarkRunMetadataPending(*options_.run_metadata, id, image_id);
  if (!noted.ok()) {
    Log(LogLevel::kWarning, "run metadata not noted as owed",
        {{"job", id}, {"error", std::string(noted.message())}});
  }
}

void Reconciler::WriteMetadata(const v1::Job& job, const std::string& image_id) {
  const std::string& id = job.spec().id();
  absl::Status written =
      WriteRunMetadata(*options_.run_metadata, job, options_.log_archive, image_id);
  if (!written.ok()) {
    Log(LogLevel::kWarning, "run metadata not written",
        {{"job", id}, {"error", std::string(written.message())}});
  }
  ClearRunMetadataPending(*options_.run_metadata, id);  // written or logged: not retried
}

void Reconciler::WriteOwedMetadata() {
  if (metadata_recovered_ || !options_.run_metadata.has_value()) return;
  metadata_recovered_ = true;
  for (const auto& [id, image_id] : PendingRunMetadata(*options_.run_metadata)) {
    absl::StatusOr<StoredJob> job = store_.GetJob(id);
    if (job.ok() && (job->job.state() == v1::JOB_STATE_SUCCEEDED ||
                     job->job.state() == v1::JOB_STATE_FAILED ||
                     job->job.state() == v1::JOB_STATE_CANCELLED)) {
      Log(LogLevel::kInfo, "writing run metadata owed before a restart", {{"job", id}});
      WriteMetadata(job->job, image_id);
    } else {
      // Not recorded before the crash (finalised again, noted again), or gone.
      ClearRunMetadataPending(*options_.run_metadata, id);
    }
  }
}

}  // namespace berth
