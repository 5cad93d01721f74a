// Run metadata as evidence of how a run ended: the .json that berthd
// --write_run_metadata wrote into <workspace>/metadata (run_metadata.h)
// when the job ended, read back by a berthd whose store does not know that
// outcome (a store restored from a backup taken before it, or a write that
// never reached the store): the workspace outlives both the container and
// the store's copy.
//
// Trust: the workspace is the job's to write, so a file is evidence only
// when it cannot have been written by the job: reached without following a
// link (<root>/<workspace>/metadata/<job>.json, each step O_NOFOLLOW), a
// regular file owned by berthd's own user and writable by no one else (the
// writer makes it mode 0640), and recording the same job (id, workspace,
// action, image, argv) in a final state.
//
// Thread-safe (no state); does I/O.
#ifndef BERTH_EXECUTOR_LOGS_RUN_METADATA_EVIDENCE_H_
#define BERTH_EXECUTOR_LOGS_RUN_METADATA_EVIDENCE_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "berth/v1/job.pb.h"
#include "executor/logs/run_metadata.h"

namespace berth {

// What a run's metadata says about its end.
struct RunEvidence {
  std::string path;  // the file read
  v1::JobState state = v1::JOB_STATE_UNSPECIFIED;  // SUCCEEDED, FAILED or CANCELLED
  int attempt = 0;                                  // 1 for the first run
  std::optional<int> exit_code;
  v1::FailureCause failure_cause = v1::FAILURE_CAUSE_UNSPECIFIED;
  std::string message;
  std::optional<absl::Time> started_at;
  std::optional<absl::Time> finished_at;
  // The sizes of the log written beside it (logBytes); nullopt if absent.
  std::optional<int64_t> stdout_log_bytes;
  std::optional<int64_t> stderr_log_bytes;
};

// The evidence for `spec`'s run in its workspace. Errors (each message names
// the path and why, for a LOST job's message):
//   NOT_FOUND            no workspace, no options.workspaces_root, or no file
//   FAILED_PRECONDITION  the file is not trustworthy (a link, not berthd's,
//                        writable by others) or records another job or a
//                        state that is not final
//   DATA_LOSS            the file is not the writer's JSON
[[nodiscard]] absl::StatusOr<RunEvidence> ReadRunEvidence(const RunMetadataOptions& options,
                                                          const v1::JobSpec& spec);

// Keeps the run's log written beside its metadata (<job>.log: stdout, then
// kStderrMarker and stderr when there is any, the sizes from `evidence`) in
// `archive` as attempt evidence.attempt, so that a restored store reads the
// log of a run it never recorded. The same trust checks as ReadRunEvidence.
// Errors: NOT_FOUND (no file), FAILED_PRECONDITION (not trusted, or its size
// is not what the metadata says: nothing is kept), ALREADY_EXISTS (the
// archive holds that attempt), Capture's own.
[[nodiscard]] absl::Status ImportRunLog(const RunMetadataOptions& options,
                                        const v1::JobSpec& spec, const RunEvidence& evidence,
                                        LogArchive& archive);

}  // namespace berth

#endif  // BERTH_EXECUTOR_LOGS_RUN_METADATA_EVIDENCE_H_
