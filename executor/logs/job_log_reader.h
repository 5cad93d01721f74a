// JobLogReader: reads one job's logs for ReadJobLog: kept attempts from the
// LogArchive, the running attempt live from the Runtime, and (with follow)
// each next attempt as the job is requeued and runs again, until the job has
// finished.
//
// Attempt n of a job is its run after n-1 requeues (Job.requeue_count + 1
// while it runs). A kept attempt is sent stream by stream (stdout, then
// stderr) in chunks of options.chunk_bytes; a running one as the engine
// hands it over (from the engine's first byte; the request's offsets skip
// what the client has). A followed running attempt is read live until the
// engine ends its stream (Docker: the container stopped) or the store says
// the job left the attempt (checked about once a second; a Swarm service's
// stream stays open after its task ended); the rest then comes from the
// kept log, from the offsets already sent.
//
// Thread-safe (no mutable state); one Read blocks its caller's thread.
#ifndef BERTH_EXECUTOR_LOGS_JOB_LOG_READER_H_
#define BERTH_EXECUTOR_LOGS_JOB_LOG_READER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "executor/logs/log_archive.h"
#include "executor/runtime/runtime.h"
#include "executor/store/store.h"

namespace berth {

struct JobLogReaderOptions {
  // Largest piece handed to the sink from a kept log.
  int64_t chunk_bytes = 64 << 10;
  // While following, how long one wait for the job to change lasts before
  // should_stop is polled again.
  absl::Duration poll = absl::Seconds(1);
};

struct JobLogRequest {
  std::string job_id;
  int attempt = 0;                 // 0: the latest
  std::optional<LogStream> only;   // unset: both streams
  int64_t stdout_offset = 0;       // of the first attempt read
  int64_t stderr_offset = 0;
  bool follow = false;
};

struct JobLogPiece {
  int attempt = 0;
  LogStream stream = LogStream::kStdout;
  int64_t offset = 0;
  absl::string_view data;
  bool attempt_end = false;  // the attempt's log is complete (data may be empty)
  // Set on the last piece of each stream of a kept attempt (data may be
  // empty): what the stream holds of what the job wrote.
  std::optional<StreamCut> cut;
};

// The API's form of a stream's cut (Attempt.stdout_cut, JobLogChunk.cut).
inline v1::LogCut LogCutProto(const StreamCut& c) {
  v1::LogCut p;
  p.set_total_bytes(c.total_bytes);
  p.set_dropped_bytes(c.dropped_bytes);
  p.set_head_bytes(c.head_bytes);
  p.set_tail_bytes(c.tail_bytes);
  return p;
}

class JobLogReader {
 public:
  // All references must outlive the reader.
  JobLogReader(const Store& store, const LogArchive& archive, Runtime& runtime,
               JobLogReaderOptions options = {});

  // Hands the requested log to `sink` (returning false ends the read, OK)
  // until done; `should_stop` (may be null) is polled while waiting.
  // INVALID_ARGUMENT (empty job id, attempt < 0, negative offsets);
  // NOT_FOUND (unknown job; without follow: the attempt has not run or its
  // log was not kept); OUT_OF_RANGE (an offset past a kept log's end);
  // UNAVAILABLE (the engine, for a running attempt).
  [[nodiscard]] absl::Status Read(const JobLogRequest& request,
                                  const std::function<bool(const JobLogPiece&)>& sink,
                                  const std::function<bool()>& should_stop) const;

 private:
  // Sends a kept attempt; false if the sink stopped.
  absl::StatusOr<bool> SendKept(const std::string& job_id, int attempt,
                                std::optional<LogStream> only, int64_t out_offset,
                                int64_t err_offset,
                                const std::function<bool(const JobLogPiece&)>& sink) const;

  const Store& store_;
  const LogArchive& archive_;
  Runtime& runtime_;
  const JobLogReaderOptions options_;
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_LOGS_JOB_LOG_READER_H_
