// LogArchive: the complete logs of every attempt of every job, as files
// under one directory (berthd: <data_dir>/logs), out of the store's hot path.
//
// Layout: <root>/<job dir>/<attempt>/{stdout,stderr}, where <job dir> is the
// job id with every byte outside [A-Za-z0-9_.-] (and a leading '.') written
// as %XX, and <attempt> is 1 for the first run, 2 after one requeue, ...
// Each file holds one stream, capped by CappedLogWriter (head + marker line +
// tail) at options.cap_bytes.
//
// Durability: Capture writes <root>/<job dir>/.<attempt>.tmp/, fsyncs both
// files, renames the directory to <attempt> and fsyncs the job directory, so
// an attempt's directory exists only when complete; a crash leaves at most a
// temp directory, which the next Capture of that attempt replaces. Callers
// capture before they remove the container and skip attempts that Has().
//
// Retention: Sweep removes the logs of jobs the caller no longer keeps.
//
// Thread-safe (no shared mutable state; the caller must not capture the same
// (job, attempt) from two threads at once: the reconciler finalises one job
// on one thread).
#ifndef BERTH_EXECUTOR_LOGS_LOG_ARCHIVE_H_
#define BERTH_EXECUTOR_LOGS_LOG_ARCHIVE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "executor/logs/capped_log_writer.h"
#include "executor/runtime/runtime.h"

namespace berth {

struct LogArchiveOptions {
  // Directory of the archive; created (0750) if missing.
  std::string root;
  // Most bytes kept per stream of one attempt (head half + tail half and a
  // marker line between). Default 64 MiB.
  int64_t cap_bytes = int64_t{64} << 20;
  // Bytes each stream's writer gathers before it writes them
  // (CappedLogWriter); 0 writes every piece through. Default 64 KiB.
  int64_t write_buffer_bytes = CappedLogWriter::kDefaultBufferBytes;
};

// What the archive holds for one attempt.
struct AttemptLogInfo {
  int attempt = 0;
  int64_t stdout_bytes = 0;  // file sizes (marker included if cut)
  int64_t stderr_bytes = 0;
  // What each stream holds of what the job wrote (CappedLogWriter::ReadCut).
  StreamCut stdout_cut;
  StreamCut stderr_cut;
};

class CappedLogWriter;

// One attempt's log being written (LogArchive::Begin): into the attempt's
// temp directory, visible only once Commit renames it into place. Destroyed
// without a successful Commit, it removes its temp directory. Not
// thread-safe; the LogArchive must outlive it.
class AttemptLogWriter {
 public:
  ~AttemptLogWriter();
  AttemptLogWriter(const AttemptLogWriter&) = delete;
  AttemptLogWriter& operator=(const AttemptLogWriter&) = delete;

  // Appends to one stream (capped). RESOURCE_EXHAUSTED / INTERNAL for file
  // errors (the writer is then unusable: destroy it).
  [[nodiscard]] absl::Status Append(LogStream stream, absl::string_view data);

  // Finishes both streams, fsyncs, renames the temp directory to the
  // attempt's and fsyncs the job directory. Call once. ALREADY_EXISTS if the
  // attempt was kept meanwhile (nothing is kept twice); file errors as above.
  [[nodiscard]] absl::Status Commit();

  // Bytes appended so far, both streams.
  int64_t appended_bytes() const { return appended_; }

 private:
  friend class LogArchive;
  AttemptLogWriter(std::string job_dir, std::string tmp, std::string final_dir,
                   std::unique_ptr<CappedLogWriter> out,
                   std::unique_ptr<CappedLogWriter> err);

  const std::string job_dir_;
  const std::string tmp_;
  const std::string final_dir_;
  std::unique_ptr<CappedLogWriter> out_;
  std::unique_ptr<CappedLogWriter> err_;
  int64_t appended_ = 0;
  bool committed_ = false;
};

class LogArchive {
 public:
  // INVALID_ARGUMENT (empty root, cap < 2); INTERNAL if root cannot be made.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<LogArchive>> Open(
      LogArchiveOptions options);

  // True if attempt `attempt` of `job_id` was captured completely.
  bool Has(absl::string_view job_id, int attempt) const;

  // Captures one attempt: `read(sink)` must hand every byte of the
  // attempt's log to `sink` (Runtime::ReadLogs does). ALREADY_EXISTS if
  // Has(job_id, attempt) (nothing is written twice); INVALID_ARGUMENT for an
  // attempt < 1; read's own error (the temp directory is removed, nothing is
  // kept); RESOURCE_EXHAUSTED / INTERNAL for file errors.
  [[nodiscard]] absl::Status Capture(
      absl::string_view job_id, int attempt,
      const std::function<absl::Status(const LogSink&)>& read);

  // Starts writing one attempt incrementally (live capture): replaces any
  // leftover temp directory of that attempt (a crashed or abandoned capture:
  // nothing of it is kept). Errors as Capture's, before any byte is read.
  // REQUIRES: no other writer or Capture of this (job, attempt) is alive.
  [[nodiscard]] absl::StatusOr<std::unique_ptr<AttemptLogWriter>> Begin(
      absl::string_view job_id, int attempt);

  // What the archive holds of one attempt (sizes, and what was cut: a read
  // of each file's marker); nullopt if it was not captured.
  std::optional<AttemptLogInfo> Info(absl::string_view job_id, int attempt) const;

  // The captured attempts of `job_id`, oldest first (empty if none).
  std::vector<AttemptLogInfo> Attempts(absl::string_view job_id) const;

  // Up to max_bytes of one stream of one attempt from `offset`. *eof is set
  // when the answer reaches the file's end. NOT_FOUND if the attempt was not
  // captured; OUT_OF_RANGE for an offset past the end.
  [[nodiscard]] absl::StatusOr<std::string> Read(absl::string_view job_id, int attempt,
                                                 LogStream stream, int64_t offset,
                                                 int64_t max_bytes, bool* eof) const;

  // Removes the logs (and leftover temp directories) of every job for which
  // keep(job id) is false. Returns how many jobs' logs were removed.
  [[nodiscard]] absl::StatusOr<int> Sweep(
      const std::function<bool(const std::string& job_id)>& keep);

  // Copies every completely captured attempt (and the run metadata still
  // owed, <root>/.metadata-pending) into `to_root`, a directory that must not
  // exist yet (its parent must): hard links where the file system allows
  // (captured attempts are never rewritten), byte copies otherwise. Temp
  // directories of captures in progress are left out; a job swept meanwhile
  // is skipped. Returns the files copied. INTERNAL / RESOURCE_EXHAUSTED
  // naming the path for file errors.
  [[nodiscard]] absl::StatusOr<int64_t> CopyTo(const std::string& to_root) const;

  const LogArchiveOptions& options() const { return options_; }

  // The directory name of a job id and back (exposed for tests).
  static std::string JobDirName(absl::string_view job_id);
  static bool ParseJobDirName(absl::string_view name, std::string* job_id);

 private:
  explicit LogArchive(LogArchiveOptions options) : options_(std::move(options)) {}
  std::string AttemptDir(absl::string_view job_id, int attempt) const;

  const LogArchiveOptions options_;
};

// The file name of a stream inside an attempt's directory.
const char* LogStreamFileName(LogStream stream);

}  // namespace berth

#endif  // BERTH_EXECUTOR_LOGS_LOG_ARCHIVE_H_
