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

namespace {
// A background capture that failed (engine trouble, a full disk) is tried
// again by the first pass after this long, not by the pass its end triggers.
constexpr absl::Duration kLogRetryAfter = absl::Seconds(2);

bool NoLogCanBeKept(const absl::Status& s) {
  return s.code() == absl::StatusCode::kNotFound ||
         s.code() == absl::StatusCode::kUnimplemented;
}
}  // namespace

bool Reconciler::CaptureLogs(const StoredJob& job, std::optional<AttemptLogInfo>* info) {
  LogArchive* archive = options_.log_archive;
  if (archive == nullptr) return true;
  const std::string& id = job.job.spec().id();
  const int attempt = job.job.requeue_count() + 1;
  *info = archive->Info(id, attempt);
  if (info->has_value()) return true;  // captured (before a crash, or in the background)
  if (!options_.background_log_capture) {
    absl::Status s = KeepLog(id, attempt);
    *info = archive->Info(id, attempt);
    return s.ok() || NoLogCanBeKept(s);
  }
  {
    absl::MutexLock lock(&logs_mu_);
    auto it = log_results_.find(id);
    if (it != log_results_.end() && it->second.attempt == attempt) {
      if (NoLogCanBeKept(it->second.status)) {
        log_results_.erase(it);
        return true;  // finalised without a log
      }
      if (clock_.Now() - it->second.at < kLogRetryAfter) return false;
      log_results_.erase(it);
    }
  }
  // Read off the pass; the pass after it (its end triggers one) finds the
  // attempt kept and records the outcome. A capture already queued or
  // running is not submitted twice.
  (void)log_keeper_.Submit(id, [this, id, attempt] {
    absl::Status s = KeepLog(id, attempt);
    if (s.ok()) return;
    absl::MutexLock lock(&logs_mu_);
    log_results_[id] = LogResult{attempt, std::move(s), clock_.Now()};
  });
  return false;
}

bool Reconciler::KeepingLog(const std::string& id) const {
  return options_.background_log_capture && log_keeper_.Busy(id, log_keeper_.Mark());
}

absl::Status Reconciler::KeepLog(const std::string& id, int attempt) {
  LogArchive* archive = options_.log_archive;
  const absl::Time began = clock_.Now();
  if (options_.live_logs != nullptr) {
    // Followed while it ran: what the job printed, not what the engine
    // still holds (unless it holds all of it: then read whole, below).
    absl::Status live = options_.live_logs->Finish(id, attempt);
    if (live.ok()) {
      CrashPoint("reconcile.after_log_capture");  // captured, outcome not recorded
      return absl::OkStatus();
    }
    if (live.code() != absl::StatusCode::kNotFound &&
        live.code() != absl::StatusCode::kFailedPrecondition) {
      Log(LogLevel::kWarning, "live log capture incomplete; reading the whole log",
          {{"job", id}, {"attempt", absl::StrCat(attempt)},
           {"error", std::string(live.message())}});
    }
  }
  absl::Status s = archive->Capture(id, attempt, [&](const LogSink& sink) {
    absl::Status read = runtime_.ReadLogs(
        id, LogReadOptions{},
        [&](LogStream st, absl::string_view d) { return !stopping_logs_.load() && sink(st, d); });
    // Abandoned at shutdown: the read ended early, so nothing is kept.
    if (stopping_logs_.load()) return absl::CancelledError("berthd is stopping");
    return read;
  });
  if (s.code() == absl::StatusCode::kAlreadyExists) s = absl::OkStatus();  // kept meanwhile
  if (s.ok()) {
    CrashPoint("reconcile.after_log_capture");  // captured, outcome not recorded
    Log(LogLevel::kInfo, "job log kept",
        {{"job", id}, {"attempt", attempt},
         {"ms", absl::ToInt64Milliseconds(clock_.Now() - began)}});
    return s;
  }
  if (NoLogCanBeKept(s)) {
    Log(LogLevel::kWarning, "job log not captured",
        {{"job", id}, {"attempt", absl::StrCat(attempt)},
         {"error", std::string(s.message())}});
    return s;
  }
  // Engine trouble or a full disk: the container stays, a later pass retries.
  Log(LogLevel::kWarning, "job log capture failed; will retry",
      {{"job", id}, {"attempt", absl::StrCat(attempt)},
       {"error", std::string(s.message())}});
  return s;
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
