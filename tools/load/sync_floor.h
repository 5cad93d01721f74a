// The floors berthd's sync figures are measured against (docs/BENCHMARKS.md
// "berthd sync"), computed in berth-load's own process from the same
// messages berthd is sent, so that each figure can be given as a ratio to
// what any implementation must pay on the same machine in the same run.
//
// Not thread-safe: one call at a time. Its CPU figures are the whole
// process's (RocksDB's background threads included, as berthd's are), so
// nothing else in the process may run meanwhile (berth-load calls it before
// starting a case's readers).
#ifndef BERTH_TOOLS_LOAD_SYNC_FLOOR_H_
#define BERTH_TOOLS_LOAD_SYNC_FLOOR_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "berth/v1/executor.pb.h"

namespace berth {

struct SyncFloor {
  // First sync: parse every message from its wire bytes, make each job's
  // stored record (one byte of stop intent + the serialized berth.v1.Job
  // with its spec, state QUEUED, queued_at and generation: the bytes berthd
  // writes) and write them, one rocksdb::WriteBatch per message, to a fresh
  // RocksDB (WAL on, the last batch synced).
  absl::Duration first_cpu;
  // Unchanged re-sync: parse every message again, make each job's record
  // again and compare it with the one written (kept in memory by id): the
  // least work that finds that nothing changed.
  absl::Duration unchanged_cpu;
  // Records written and found unchanged (both equal the jobs in the stream).
  int64_t written = 0;
  int64_t unchanged = 0;
};

// Measures both floors for `messages` (a header first, then batches, as
// SnapshotMessages builds them), with a fresh database under `dir` (created,
// and removed afterwards). Errors: INVALID_ARGUMENT if a message does not
// parse; RocksDB's errors as UNAVAILABLE / DATA_LOSS with what failed.
absl::StatusOr<SyncFloor> MeasureSyncFloor(const std::vector<v1::SyncSnapshotRequest>& messages,
                                           const std::string& dir);

}  // namespace berth

#endif  // BERTH_TOOLS_LOAD_SYNC_FLOOR_H_
