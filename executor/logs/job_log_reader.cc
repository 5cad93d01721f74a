#include "executor/logs/job_log_reader.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "planner/base/status_macros.h"

namespace berth {

JobLogReader::JobLogReader(const Store& store, const LogArchive& archive,
                           Runtime& runtime, JobLogReaderOptions options)
    : store_(store), archive_(archive), runtime_(runtime), options_(options) {}

absl::StatusOr<bool> JobLogReader::SendKept(
    const std::string& job_id, int attempt, std::optional<LogStream> only,
    int64_t out_offset, int64_t err_offset,
    const std::function<bool(const JobLogPiece&)>& sink) const {
  const std::optional<AttemptLogInfo> info = archive_.Info(job_id, attempt);
  for (LogStream stream : {LogStream::kStdout, LogStream::kStderr}) {
    if (only.has_value() && *only != stream) continue;
    int64_t offset = stream == LogStream::kStdout ? out_offset : err_offset;
    bool eof = false;
    while (!eof) {
      ASSIGN_OR_RETURN(std::string data, archive_.Read(job_id, attempt, stream, offset,
                                                       options_.chunk_bytes, &eof));
      if (data.empty()) break;
      JobLogPiece piece;
      piece.attempt = attempt;
      piece.stream = stream;
      piece.offset = offset;
      piece.data = data;
      if (!sink(piece)) return false;
      offset += static_cast<int64_t>(data.size());
    }
    if (info.has_value()) {
      JobLogPiece cut;
      cut.attempt = attempt;
      cut.stream = stream;
      cut.offset = offset;
      cut.cut = stream == LogStream::kStdout ? info->stdout_cut : info->stderr_cut;
      if (!sink(cut)) return false;
    }
  }
  JobLogPiece end;
  end.attempt = attempt;
  end.stream = only.value_or(LogStream::kStdout);
  end.attempt_end = true;
  return sink(end);
}

absl::Status JobLogReader::Read(const JobLogRequest& request,
                                const std::function<bool(const JobLogPiece&)>& sink,
                                const std::function<bool()>& should_stop) const {
  const std::string& id = request.job_id;
  if (id.empty()) return absl::InvalidArgumentError("job_id: required");
  if (request.attempt < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("attempt: must be >= 0 (0: the latest), got ", request.attempt));
  }
  if (request.stdout_offset < 0 || request.stderr_offset < 0) {
    return absl::InvalidArgumentError("stdout_offset, stderr_offset: must be >= 0");
  }
  const auto stopped = [&] { return should_stop && should_stop(); };
  ASSIGN_OR_RETURN(StoredJob job, store_.GetJob(id));
  int attempt = request.attempt;
  if (attempt == 0) {
    const int current = job.job.requeue_count() + 1;
    const bool runs = job.job.state() == v1::JOB_STATE_RUNNING ||
                      job.job.state() == v1::JOB_STATE_ADMITTED;
    std::vector<AttemptLogInfo> kept = archive_.Attempts(id);
    attempt = runs || kept.empty() ? current : kept.back().attempt;
    if (attempt > current) attempt = current;
  }
  int64_t out_offset = request.stdout_offset;
  int64_t err_offset = request.stderr_offset;
  while (!stopped()) {
    const uint64_t revision = store_.CurrentRevision();
    if (archive_.Has(id, attempt)) {
      ASSIGN_OR_RETURN(bool more,
                       SendKept(id, attempt, request.only, out_offset, err_offset, sink));
      if (!more || !request.follow) return absl::OkStatus();
      ++attempt;
      out_offset = err_offset = 0;
      continue;
    }
    ASSIGN_OR_RETURN(job, store_.GetJob(id));
    const int current = job.job.requeue_count() + 1;
    const v1::JobState state = job.job.state();
    const bool finished = IsTerminal(state);
    if (attempt < current || (attempt == current && finished)) {
      // Ended, and not kept (e.g. a runtime that cannot read whole logs).
      if (!request.follow) {
        if (attempt == current && !job.job.has_started_at()) {
          return absl::NotFoundError(absl::StrCat("job '", id, "': attempt ", attempt,
                                                  " never ran (job is ",
                                                  v1::JobState_Name(state), ")"));
        }
        return absl::NotFoundError(absl::StrCat("job '", id, "': the log of attempt ",
                                                attempt, " was not kept"));
      }
      if (finished && attempt == current) return absl::OkStatus();
      ++attempt;
      out_offset = err_offset = 0;
      continue;
    }
    if (attempt > current && finished) {
      if (request.follow) return absl::OkStatus();
      return absl::NotFoundError(absl::StrCat("job '", id, "': attempt ", attempt,
                                              " never ran (job is ",
                                              v1::JobState_Name(state), ")"));
    }
    if (attempt == current && state == v1::JOB_STATE_RUNNING) {
      // Live from the engine (without follow: what it holds now).
      int64_t seen_out = 0, seen_err = 0;
      bool more = true;
      // A follow also stops once the job has left this attempt: a Swarm
      // service's log stream stays open after its task ended.
      bool left = false;
      LogReadOptions ro;
      ro.follow = request.follow;
      ro.should_stop = [&] {
        if (stopped()) return true;
        absl::StatusOr<StoredJob> now = store_.GetJob(id);
        left = now.ok() && (now->job.requeue_count() + 1 != attempt ||
                            now->job.state() != v1::JOB_STATE_RUNNING);
        return left;
      };
      absl::Status s = runtime_.ReadLogs(id, ro, [&](LogStream stream, absl::string_view data) {
        int64_t& seen = stream == LogStream::kStdout ? seen_out : seen_err;
        const int64_t from = stream == LogStream::kStdout ? out_offset : err_offset;
        const int64_t start = seen;
        seen += static_cast<int64_t>(data.size());
        if (request.only.has_value() && *request.only != stream) return true;
        if (seen <= from) return true;
        if (start < from) data.remove_prefix(static_cast<size_t>(from - start));
        JobLogPiece piece;
        piece.attempt = attempt;
        piece.stream = stream;
        piece.offset = std::max(start, from);
        piece.data = data;
        more = sink(piece);
        return more;
      });
      if (!more) return absl::OkStatus();
      if (!s.ok() && s.code() != absl::StatusCode::kNotFound) return s;
      if (!request.follow) return absl::OkStatus();
      if (s.ok() && !left && !stopped()) {
        // The container ended: wait until the job leaves this attempt, then
        // go on with the next (what was sent live is not sent again).
        while (!stopped()) {
          ASSIGN_OR_RETURN(StoredJob now, store_.GetJob(id));
          if (now.job.requeue_count() + 1 != attempt ||
              now.job.state() != v1::JOB_STATE_RUNNING) {
            break;
          }
          store_.AwaitRevision(store_.CurrentRevision(), options_.poll);
        }
        if (stopped()) return absl::OkStatus();
        ASSIGN_OR_RETURN(StoredJob now, store_.GetJob(id));
        JobLogPiece end;
        end.attempt = attempt;
        end.stream = request.only.value_or(LogStream::kStdout);
        end.attempt_end = true;
        if (!sink(end) || IsTerminal(now.job.state())) return absl::OkStatus();
        ++attempt;
        out_offset = err_offset = 0;
        continue;
      }
      // NOT_FOUND: the container is not there yet or already gone; or the
      // job left the attempt while the engine's stream stayed open. Look
      // again, going on from what was sent (the kept log, once there).
      out_offset = std::max(out_offset, seen_out);
      err_offset = std::max(err_offset, seen_err);
    } else if (!request.follow) {
      return absl::NotFoundError(absl::StrCat("job '", id, "': attempt ", attempt,
                                              " has not started (job is ",
                                              v1::JobState_Name(state), ")"));
    }
    store_.AwaitRevision(revision, options_.poll);
  }
  return absl::OkStatus();
}

}  // namespace berth
