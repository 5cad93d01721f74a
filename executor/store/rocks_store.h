// RocksStore: the Store on RocksDB.
//
// Layout (column families):
//   jobs       job id -> 1 byte StopIntent + serialized berth.v1.Job
//   events     8-byte big-endian revision -> berth.v1.Event
//   decisions  job id, 0x00, 8-byte big-endian sequence -> DecisionRecord
//   meta       "schema_version" -> decimal; "state" -> MetaRecord;
//              "written_by" -> RocksStoreOptions::writer of the last Open
//   usage      UsageKey(workspace, action) -> UsageHistoryRecord
// (schema version 2; Open upgrades version 1 in place, see
// rocks_store_migrate.h, and refuses newer versions.)
// Every Store call is one WriteBatch; decisions are written with
// WriteOptions.sync. All jobs are also held in memory (with a per-state
// index), loaded at Open; events and decisions are read from RocksDB.
//
// Thread-safe. At most one RocksStore per directory (RocksDB's LOCK file).
#ifndef BERTH_EXECUTOR_STORE_ROCKS_STORE_H_
#define BERTH_EXECUTOR_STORE_ROCKS_STORE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "executor/store/store.h"
#include "executor/store/store_core.h"

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
class Env;
}  // namespace rocksdb

namespace berth {

class WriteGate;

// The on-disk schema version this code writes and reads.
inline constexpr int kRocksStoreSchemaVersion = 2;

struct RocksStoreOptions {
  RetentionOptions retention;
  // fsync the WAL on every write (snapshots, transitions, meta). Decisions
  // are always synced. Default true: a status change acknowledged to a caller
  // survives power loss; false trades that for latency.
  bool sync_writes = true;
  // RocksDB's memory bounds: every family's memtables together are flushed
  // when they reach memtable_budget_bytes (a write larger than that, such
  // as a first sync of many jobs, is flushed after it, before the write
  // returns: its memtables are freed before the jobs it wrote are published
  // and planned, not held beside the plan's state); one LRU block cache
  // of block_cache_bytes serves every family.
  int64_t memtable_budget_bytes = int64_t{64} << 20;
  int64_t block_cache_bytes = int64_t{32} << 20;
  // RocksDB environment; nullptr = the default (real files). Tests inject
  // faults through it. Not owned; must outlive the store.
  rocksdb::Env* env = nullptr;
  // Load the jobs (and usage histories) into memory on a thread of the
  // store's own, after Open has returned, instead of within Open: a store
  // of a million jobs then opens in the time of its meta (tens of ms, not
  // seconds). Until the load finishes, the calls that need the jobs wait
  // for it and GetJob reads RocksDB (StoreCore::StartLoading); a failed
  // load (a corrupt record) is returned by AwaitJobsLoaded() and by every
  // such call. Default false: Open returns with everything loaded.
  bool background_load = false;
  // Called on the loading thread once a background load has finished, with
  // its outcome (CANCELLED when the store was closed first) and the number
  // of jobs loaded: after the waiting calls are released if it succeeded,
  // before they are released (with its error) if it failed, so that an
  // owner can stop first. Must not destroy the store. Empty = nothing.
  std::function<void(const absl::Status&, size_t jobs)> after_background_load;
  // Tests only: called on the loading thread before it reads the first job
  // (to hold the load open while a test reads). Empty = nothing.
  std::function<void()> before_background_load;
  // Writes after an I/O error (a full disk): every write is refused with
  // the cause's code (RESOURCE_EXHAUSTED for a full disk) until a probe,
  // every write_probe_interval, finds at least resume_min_free_bytes free
  // on the store's file system and RocksDB resumes (rocks_store_write_gate.h).
  // Reads go on meanwhile. on_write_health is called on the probe's thread
  // with the refusal when writes stop and with OK when they resume; empty =
  // nothing (the store logs both either way).
  absl::Duration write_probe_interval = absl::Seconds(5);
  int64_t resume_min_free_bytes = int64_t{16} << 20;
  std::function<void(const absl::Status&)> on_write_health;
  // Who opens the store ("berthd 0.10.0 (commit ...)"), recorded in it so
  // that an older Berth refusing it can say which version wrote it. Empty =
  // not recorded.
  std::string writer;
};

class RocksStore final : public StoreCore {
 public:
  // Opens the store in `dir`, creating `dir` (its last component only) and a
  // new store if `dir` is missing or empty. Never reinitialises an existing
  // store, and writes nothing outside `dir` (its parent may be read-only).
  // A new store is created inside `dir` under a marker file removed once it
  // is complete, so a creation that was interrupted is redone by the next
  // Open, never taken for a store.
  // A store of a newer layout is refused after a read-only look at its
  // schema version: nothing in `dir` is written.
  // A store in an older layout is upgraded first, in one atomic step
  // (migrated_from() says from which version).
  // Errors:
  //   FAILED_PRECONDITION `dir` is not a directory, is not empty and is not a
  //                       Berth store, has a newer schema version, or is
  //                       missing and so is its parent.
  //   DATA_LOSS           the store is corrupt.
  //   PERMISSION_DENIED, RESOURCE_EXHAUSTED (disk full), UNAVAILABLE (locked
  //                       by another process, I/O error), ...
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<RocksStore>> Open(
      const std::string& dir, const RocksStoreOptions& options = {});

  // Stops a background load still running (its waiting calls get
  // CANCELLED), flushes memtables (so the next Open replays no WAL) and
  // closes.
  ~RocksStore() override;

  RocksStore(const RocksStore&) = delete;
  RocksStore& operator=(const RocksStore&) = delete;

  // RocksDB's Checkpoint of the whole store (hard links to the immutable
  // files where `dir` is on the same file system, copies otherwise),
  // taken with writes held off, so the copy is one store state.
  // The copy holds a marker (rocks_store_handles.h) that makes its first
  // Open begin a new epoch.
  absl::StatusOr<BackupInfo> Backup(const std::string& dir) override;
  absl::StatusOr<BackupInfo> Backup(const std::string& dir,
                                    const BackupExtraCopy& extra) override;

  // OK while the store accepts writes; otherwise the error every write
  // gets (RocksStoreOptions::write_probe_interval).
  [[nodiscard]] absl::Status WriteHealth() const;

  // Total size of the store's files in bytes (SST + WAL + manifest).
  [[nodiscard]] absl::StatusOr<uint64_t> DiskUsageBytes() const;

  // The schema version Open upgraded the store from; 0 if it was current.
  int migrated_from() const { return migrated_from_; }

  // The RocksDB handles; defined in rocks_store_handles.h (private to
  // rocks_store*.cc).
  struct Handles;

 private:
  RocksStore(const RocksStoreOptions& options, std::string dir,
             std::unique_ptr<Handles> handles, std::shared_ptr<WriteGate> gate);

  absl::Status Persist(const ChangeSet& changes) override;
  // About the bytes of the WriteBatch that Persist builds for `changes`: it
  // is reserved up front, so that a first sync's batch (hundreds of MiB) is
  // not copied at every doubling.
  static size_t BatchBytes(const ChangeSet& changes);
  absl::StatusOr<std::vector<berth::v1::Event>> LoadEvents(
      uint64_t first, int max) const override;
  absl::StatusOr<std::vector<Decision>> LoadDecisions(
      const std::string& job_id) const override;
  absl::StatusOr<StoredJob> ReadPersistedJob(const std::string& id) const override;
  // Reads every job and usage history from RocksDB into memory
  // (InitJobs, InitUsage); CANCELLED if stop_loading_ is set meanwhile.
  absl::Status LoadJobs();

  // Constant after construction.
  const std::string dir_;
  const std::unique_ptr<Handles> h_;
  // Shared with RocksDB's listener; stopped before h_ closes the database.
  const std::shared_ptr<WriteGate> gate_;
  // RocksStoreOptions::memtable_budget_bytes.
  const size_t memtable_budget_bytes_;
  int migrated_from_ = 0;  // set by Open
  // The background load (RocksStoreOptions::background_load), if any.
  std::function<void()> before_load_;  // set by Open
  std::function<void(const absl::Status&, size_t)> after_load_;  // set by Open
  std::atomic<bool> stop_loading_{false};
  std::thread loader_;
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_ROCKS_STORE_H_
