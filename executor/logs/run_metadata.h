// Run metadata in the workspace (berthd --write_run_metadata):
// when a job ends, <workspace dir>/metadata/<job>.log (its final attempt's
// complete log) and <workspace dir>/metadata/<job>.json (the record of the
// run), as the backend Berth replaces wrote them.
//
// <job> is LogArchive::JobDirName(job id) (ids are [A-Za-z0-9._-]; a leading
// '.' is written %2E). The .log holds the final attempt's stdout as the log
// archive kept it (head + marker + tail over the cap) and, when the attempt
// wrote to stderr, a line "[berth: stderr]" followed by its stderr. The
// .json is one object: id, workspace, action, image, imageId, argv,
// resources {cpuMillis, memoryBytes}, state, attempt, exitCode (absent when
// none), failureCause, message, queuedAt/admittedAt/startedAt/finishedAt
// (RFC 3339 in UTC, "...Z" as in GetJob's JSON; absent when unset), observed {peakMemoryBytes, cpuSeconds,
// runSeconds, samples, peakExact} (absent when never observed), logBytes
// {stdout, stderr}, and attempts: every run of the job, oldest first (the
// final one included; Job.attempts, the latest 100), each {number, outcome,
// failureCause, requeueCause, exitCode (absent when none), message,
// admittedAt/startedAt/finishedAt, node, observed {...} as above, logKept,
// logBytes {stdout, stderr}, logTruncated {stdout, stderr} (absent when the
// cap is not known)}.
//
// Safety: the workspace is the job's to write, so nothing there is trusted:
// every step works on descriptors opened with O_NOFOLLOW below the
// workspaces root (a symbolic link planted as "metadata" or as a file name
// is refused or replaced, never followed). Each file is written to a
// temporary name, fsynced, given its owner and mode, renamed into place
// and the directory fsynced: a reader sees the old file or the whole new
// one. Files are owned by berthd's user and options.gid, mode 0640 (the
// group reads, jobs of the workspace cannot change them); a metadata
// directory it creates is the same owner and group, mode 0750 (plus the
// setgid bit a setgid workspace passes on).
//
// Thread-safe (no state); does I/O.
#ifndef BERTH_EXECUTOR_LOGS_RUN_METADATA_H_
#define BERTH_EXECUTOR_LOGS_RUN_METADATA_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "berth/v1/job.pb.h"
#include "executor/logs/log_archive.h"

namespace berth {

// The line between a run's stdout and its stderr in <job>.log.
inline constexpr char kStderrMarker[] = "[berth: stderr]\n";

struct RunMetadataOptions {
  // berthd --workspaces_root. REQUIRED.
  std::string workspaces_root;
  // The files' group: the shared workspace group (--workspace_group) or else
  // the container user's gid. -1: berthd's own group.
  int64_t gid = -1;
  // Where the writes still owed are noted (berthd: <data_dir>/logs/
  // .metadata-pending, created 0750 if missing), so that a berthd killed
  // between a job's outcome and its metadata writes it at restart (see
  // MarkRunMetadataPending). Empty: not noted (a kill in that window leaves
  // none for the job).
  std::string pending_dir;
};

// Notes, durably (file fsynced, directory fsynced), that `job_id`'s
// metadata is owed, with the engine's `image_id` (which the restarted
// berthd could no longer ask for): the caller notes before it records the
// outcome and clears (ClearRunMetadataPending) after the write, done or
// failed. A no-op OK without options.pending_dir; INTERNAL for file errors.
[[nodiscard]] absl::Status MarkRunMetadataPending(const RunMetadataOptions& options,
                                                  absl::string_view job_id,
                                                  absl::string_view image_id);
void ClearRunMetadataPending(const RunMetadataOptions& options, absl::string_view job_id);

// The noted writes: (job id, image id), in no particular order.
std::vector<std::pair<std::string, std::string>> PendingRunMetadata(
    const RunMetadataOptions& options);

// Writes both files of `job` (its final state) with the final attempt's log
// from `archive` (may be null: an empty .log) and the engine's `image_id`
// (may be empty). FAILED_PRECONDITION naming the path if the workspace or
// metadata directory cannot be reached safely (missing, a symbolic link, not
// a directory); INTERNAL / RESOURCE_EXHAUSTED for file errors; the
// archive's own error if the log cannot be read.
[[nodiscard]] absl::Status WriteRunMetadata(const RunMetadataOptions& options,
                                            const v1::Job& job, const LogArchive* archive,
                                            absl::string_view image_id);

// The .json's text for `job` (exposed for tests). `log_cap_bytes` (> 0:
// the archive's cap per stream) tells each attempt's logTruncated: a kept
// stream longer than the cap holds the marker line, so it was cut.
std::string RunMetadataJson(const v1::Job& job, absl::string_view image_id,
                            int64_t stdout_bytes, int64_t stderr_bytes,
                            int64_t log_cap_bytes = 0);

}  // namespace berth

#endif  // BERTH_EXECUTOR_LOGS_RUN_METADATA_H_
