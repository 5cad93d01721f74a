// SnapshotAssembler: turns a SyncSnapshot / DryRun request stream into one
// snapshot, enforcing the stream's shape. It does not look at job contents
// beyond their ids (see job_validation.h for that).
//
// Stream shape: exactly one header first, then any number of batches, then
// exactly one end. Errors (all INVALID_ARGUMENT, nothing retained):
//   - a first message that is not a header; a second header;
//   - a batch or end after the end;
//   - generation 0;
//   - a repeated job id (names the id and both positions; empty ids and ids
//     over kMaxStoredIdBytes are not compared: validation rejects each such
//     job on its own);
//   - more jobs than header.expected_job_count;
//   - end.job_count != jobs received, or != expected_job_count;
//   - Finish() before the end message (a truncated stream).
// Not thread-safe: one assembler per stream.
#ifndef BERTH_SERVER_SNAPSHOT_ASSEMBLER_H_
#define BERTH_SERVER_SNAPSHOT_ASSEMBLER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "berth/v1/executor.pb.h"
#include "berth/v1/files.pb.h"
#include "berth/v1/job.pb.h"
#include "server/job_validation.h"

namespace berth {

// Ids longer than this are never stored, not even as REJECTED.
inline constexpr size_t kMaxStoredIdBytes = 128;

// A complete snapshot as received.
struct ReceivedSnapshot {
  uint64_t generation = 0;
  bool allow_mass_cancel = false;
  // The header's policy switches (SnapshotHeader.fill_memory_from_history,
  // .requeue_oom_once).
  bool fill_memory_from_history = false;
  bool requeue_oom_once = false;
  // In the order received; ids unique.
  std::vector<v1::JobSpec> jobs;
  // fingerprints[i] == SpecFingerprint(jobs[i]), computed as each batch
  // arrived (for SnapshotRequest::fingerprints).
  std::vector<uint64_t> fingerprints;
  // SnapshotDigest of every job received (rejected ones included).
  uint64_t digest = 0;
  // Every storable id (1..kMaxStoredIdBytes bytes) of `jobs` -> its position,
  // viewing the specs' own id strings (see JobIdIndex): valid while `jobs`'
  // specs live, wherever they are moved. For ValidateJobs.
  JobIdIndex index;
};

class SnapshotAssembler {
 public:
  // `max_jobs` bounds memory for one stream: a header announcing more, or a
  // stream carrying more, is refused with RESOURCE_EXHAUSTED.
  explicit SnapshotAssembler(uint64_t max_jobs = 2'000'000)
      : max_jobs_(max_jobs) {}

  // Consumes one message of the stream (moving its jobs out of `request`).
  // After an error, every later call returns the same error.
  [[nodiscard]] absl::Status Add(v1::SyncSnapshotRequest& request);

  // Ends the stream. REQUIRES: the end message was added; otherwise
  // INVALID_ARGUMENT ("stream ended before its end message").
  [[nodiscard]] absl::StatusOr<ReceivedSnapshot> Finish();

  // Convenience: a whole snapshot from a file-format message, as if streamed
  // with one header, one batch and one end.
  [[nodiscard]] static absl::StatusOr<ReceivedSnapshot> FromSnapshot(
      v1::Snapshot snapshot);

 private:
  enum class Phase { kHeader, kBatches, kEnded };

  absl::Status Fail(absl::Status status);

  const uint64_t max_jobs_;
  Phase phase_ = Phase::kHeader;
  absl::Status error_;
  uint64_t expected_ = 0;
  ReceivedSnapshot snapshot_;
};

}  // namespace berth

#endif  // BERTH_SERVER_SNAPSHOT_ASSEMBLER_H_
