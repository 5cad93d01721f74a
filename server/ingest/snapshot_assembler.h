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
#ifndef BERTH_SERVER_INGEST_SNAPSHOT_ASSEMBLER_H_
#define BERTH_SERVER_INGEST_SNAPSHOT_ASSEMBLER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "berth/v1/executor.pb.h"
#include "berth/v1/files.pb.h"
#include "berth/v1/job.pb.h"
#include "executor/store/spec_fingerprint.h"
#include "executor/store/store.h"
#include "server/ingest/job_validation.h"

namespace berth {

// Ids longer than this are never stored, not even as REJECTED.
inline constexpr size_t kMaxStoredIdBytes = 128;

// Decides, while a snapshot arrives, which specs need not be kept
// (server/ingest/stored_spec_filter.h: the ones the store holds unchanged). A spec
// it drops must be valid on its own (ValidateJob), have a storable id and
// no dependencies: the snapshot keeps only its id and fingerprint. The one
// exception: a snapshot whose generation the store has applied already is
// a re-send, answered by its digest alone (ExecutorCore::Sync, then the
// store's generation check), so its specs may all be dropped unchecked.
class SpecFilter {
 public:
  virtual ~SpecFilter() = default;
  // Called once, with the header's generation, before any batch.
  virtual void Begin(uint64_t generation) = 0;
  // For one batch: sets (*drop)[i] (resized to specs' size) if specs[i], of
  // fingerprint fingerprints[i], need not be kept.
  virtual void Filter(const google::protobuf::RepeatedPtrField<v1::JobSpec>& specs,
                      const std::vector<uint64_t>& fingerprints,
                      std::vector<bool>* drop) = 0;
};

// A complete snapshot as received.
struct ReceivedSnapshot {
  uint64_t generation = 0;
  bool allow_mass_cancel = false;
  // The header's policy switches (SnapshotHeader.fill_memory_from_history,
  // .requeue_oom_once).
  bool fill_memory_from_history = false;
  bool requeue_oom_once = false;
  // The specs kept, in the order received; ids unique (also across
  // `unchanged`).
  std::vector<v1::JobSpec> jobs;
  // fingerprints[i] == SpecFingerprint(jobs[i]), computed as each batch
  // arrived (for SnapshotRequest::fingerprints).
  std::vector<uint64_t> fingerprints;
  // The jobs a SpecFilter dropped, in the order received (for
  // SnapshotRequest::unchanged). Empty without a filter.
  std::vector<UnchangedJob> unchanged;
  // SnapshotDigest of every job received (rejected and dropped ones
  // included).
  uint64_t digest = 0;
  // Every storable id (1..kMaxStoredIdBytes bytes) -> its position in `jobs`,
  // or kUnkeptJob | its position in `unchanged`, viewing the specs' own id
  // strings and those of `unchanged` (see JobIdIndex): valid while they
  // live, wherever the specs or the vector are moved. For ValidateJobs.
  JobIdIndex index;

  // Jobs received: kept and dropped.
  size_t size() const { return jobs.size() + unchanged.size(); }

  ReceivedSnapshot() = default;
  ReceivedSnapshot(ReceivedSnapshot&&) = default;
  ReceivedSnapshot& operator=(ReceivedSnapshot&&) = default;
  // `index` views this snapshot's own strings: a copy would view the
  // original's, and dangle once it is gone.
  ReceivedSnapshot(const ReceivedSnapshot&) = delete;
  ReceivedSnapshot& operator=(const ReceivedSnapshot&) = delete;
};

class SnapshotAssembler {
 public:
  // `max_jobs` bounds memory for one stream: a header announcing more, or a
  // stream carrying more, is refused with RESOURCE_EXHAUSTED.
  // `filter` (may be null: every spec is kept) must outlive the assembler.
  explicit SnapshotAssembler(uint64_t max_jobs = 2'000'000, SpecFilter* filter = nullptr)
      : max_jobs_(max_jobs), filter_(filter) {}

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
  absl::Status AddBatch(google::protobuf::RepeatedPtrField<v1::JobSpec>& jobs);
  // The stream position of the job an index value names.
  uint32_t PositionOf(uint32_t index_value) const;

  const uint64_t max_jobs_;
  SpecFilter* const filter_;
  Phase phase_ = Phase::kHeader;
  absl::Status error_;
  uint64_t expected_ = 0;
  ReceivedSnapshot snapshot_;
  SnapshotDigest digest_;
  // Stream positions of snapshot_.jobs and of snapshot_.unchanged (for the
  // duplicate id message).
  std::vector<uint32_t> kept_positions_, dropped_positions_;
  // Per batch, reused.
  std::vector<uint64_t> batch_fingerprints_;
  std::vector<bool> drop_;
};

}  // namespace berth

#endif  // BERTH_SERVER_INGEST_SNAPSHOT_ASSEMBLER_H_
