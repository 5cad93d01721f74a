// StoreCore: the semantics of Store (snapshot diff, decisions, transitions,
// meta, retention) over an in-memory index of all jobs, shared by RocksStore
// and MemoryStore. A backend only persists change sets atomically and reads
// back events and decisions; it never decides anything.
//
// Internal to executor/: use Store, RocksStore or MemoryStore.
//
// Write path (every mutating call): hold write_mu_ (writers are serialised);
// compute a ChangeSet against the in-memory state while holding mu_ shared
// (readers go on); Persist() it (one atomic write) holding neither lock
// mode of mu_; only if that succeeds, publish it to the in-memory state under
// mu_ exclusively, which is short: records are built and fingerprinted
// before, and replaced records are freed after. A failed Persist() leaves
// both unchanged. Readers therefore never see a state that is not durable,
// and wait at most for a publication.
//
// Thread-safe. Lock order: write_mu_ before mu_.
#ifndef BERTH_EXECUTOR_STORE_STORE_CORE_H_
#define BERTH_EXECUTOR_STORE_STORE_CORE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "executor/store/encoded_events.h"
#include "executor/store/store.h"

namespace berth {

// Store-wide scalar state, persisted with every write.
struct StoreMeta {
  uint64_t last_generation = 0;
  // SnapshotDigest of the last applied generation (0: unknown, e.g. applied
  // by an older berthd) and the kFingerprintVersion it was computed with.
  uint64_t snapshot_digest = 0;
  uint32_t snapshot_digest_version = 0;
  // The last applied snapshot's SnapshotRequest::requeue_oom_once.
  bool requeue_oom_once = false;
  uint64_t revision = 0;         // last event; 0 = none yet
  uint64_t oldest_revision = 1;  // lowest retained; revision + 1 if none
  uint64_t last_decision_sequence = 0;
  std::optional<berth::v1::Budgets> budgets;
  bool paused = false;
  std::string pause_reason;
  std::set<std::string> pools_in_maintenance;
  // The operator's reason for each pool in pools_in_maintenance; a pool
  // without an entry has none (not given, or a store written before reasons
  // were kept).
  std::map<std::string, std::string> maintenance_reasons;
  // The time of the last event written by this process (in memory only,
  // never persisted: a restarted process's events come later anyway).
  // EventWriter never stamps an event earlier, so that event times follow
  // revision order although writers take `now` before the write lock.
  absl::Time last_event_time = absl::InfinitePast();
};

// A job record to write, with its SpecFingerprint.
struct PutJob {
  JobRecord record;
  uint64_t fingerprint = 0;
};

// Everything one atomic write changes.
struct ChangeSet {
  // Adds the record of `job` (serialized and fingerprinted now, so that a
  // large change set holds compact records, not protobuf objects).
  void Put(const StoredJob& job);
  // The same, with `fingerprint` already known.
  // REQUIRES: fingerprint == SpecFingerprint(job.job.spec()).
  void Put(const StoredJob& job, uint64_t fingerprint);

  std::vector<PutJob> put_jobs;          // whole records, replace by id
  std::vector<std::string> delete_jobs;  // with their decisions
  EncodedEvents events;                  // contiguous new revisions
  std::vector<Decision> decisions;       // new audit records
  // Events with revision < this are deleted; 0 = none. Equals meta's new
  // oldest_revision when set.
  uint64_t delete_events_before = 0;
  StoreMeta meta;    // the new meta (always written)
  bool sync = true;  // fsync the WAL before returning
  // Usage histories to write whole (by UsageKey) and keys to drop.
  std::vector<UsageHistory> put_usage;
  std::vector<std::string> delete_usage;
};

class StoreCore : public Store {
 public:
  ~StoreCore() override = default;

  absl::StatusOr<SnapshotResult> ApplySnapshot(const SnapshotRequest& request,
                                               absl::Time now) override;
  absl::StatusOr<SnapshotResult> ApplySnapshot(SnapshotRequest&& request,
                                               absl::Time now) override;
  absl::StatusOr<std::vector<Decision>> RecordDecisions(
      const std::vector<DecisionRequest>& decisions, absl::Time now) override;
  absl::StatusOr<StoredJob> Transition(const TransitionRequest& request,
                                       absl::Time now) override;
  absl::StatusOr<uint64_t> SetBudgets(const berth::v1::Budgets& budgets,
                                      absl::Time now) override;
  absl::StatusOr<berth::v1::ControlState> SetPaused(bool paused,
                                                    const std::string& reason,
                                                    absl::Time now) override;
  absl::StatusOr<berth::v1::ControlState> SetPoolMaintenance(
      const std::string& pool, bool in_maintenance, const std::string& reason,
      absl::Time now) override;
  absl::StatusOr<uint64_t> RecordOrphanStopped(const std::string& job_id,
                                               const std::string& container,
                                               const std::string& message,
                                               absl::Time now) override;
  absl::StatusOr<uint64_t> RecordStrayTask(const std::string& job_id,
                                           const std::string& container,
                                           const std::string& message,
                                           absl::Time now) override;
  absl::StatusOr<berth::v1::Budgets> GetBudgets() const override;
  berth::v1::ControlState GetControlState() const override;
  uint64_t LastAppliedGeneration() const override;
  SnapshotPolicy LastSnapshotPolicy() const override;
  absl::StatusOr<StoredJob> GetJob(const std::string& job_id) const override;
  bool HasJob(const std::string& job_id) const override;
  void LookupSpecs(const std::vector<absl::string_view>& ids,
                   std::vector<SpecLookup>* out) const override;
  std::vector<JobRecord> JobsInState(berth::v1::JobState state) const override;
  void VisitJobsInState(berth::v1::JobState state,
                        const std::function<void(const JobRecord&)>& visit) const override;
  size_t CountJobsInState(berth::v1::JobState state) const override;
  absl::StatusOr<JobPage> ListJobs(const JobFilter& filter) const override;
  absl::StatusOr<EventPage> ReadEvents(uint64_t after_revision,
                                       int max_events) const override;
  uint64_t CurrentRevision() const override;
  uint64_t OldestRevision() const override;
  bool AwaitRevision(uint64_t after_revision,
                     absl::Duration timeout) const override;
  absl::StatusOr<std::vector<Decision>> DecisionsForJob(
      const std::string& job_id) const override;
  absl::StatusOr<CompactionStats> Compact(absl::Time now) override;
  std::vector<UsageHistory> UsageHistories() const override;
  // UNIMPLEMENTED here; RocksStore overrides it.
  using Store::Backup;
  absl::StatusOr<BackupInfo> Backup(const std::string& dir) override;
  StoreEpoch Epoch() const override { return epoch_; }
  // Jobs held, in every state.
  size_t JobCount() const ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<UsageHistory> UsageHistoryOf(const std::string& workspace,
                                              const std::string& action) const override;

  // Whether every job is in memory: false only while a store opened with a
  // background load (RocksStoreOptions::background_load) is still loading
  // them, or after that load failed.
  bool jobs_loaded() const;
  // Blocks until the jobs are in memory: OK, or the background load's error
  // (DATA_LOSS for a corrupt record, ...). OK at once without a load.
  [[nodiscard]] absl::Status AwaitJobsLoaded() const;

 protected:
  // `sync_writes`: fsync every write (decisions are synced regardless).
  StoreCore(RetentionOptions retention, bool sync_writes);

  // Installs the loaded meta (RocksStore::Open), before any other call.
  void InitMeta(StoreMeta meta);
  // Installs the store's epoch (RocksStore::Open), before any other call;
  // until then the store has a random one of its own (a MemoryStore keeps it).
  void InitEpoch(StoreEpoch epoch) { epoch_ = std::move(epoch); }
  // Installs the loaded jobs: before any other call, or, during a background
  // load, before FinishLoading(). Builds the indexes without holding mu_ and
  // swaps them in, so that readers of the meta never wait for it.
  void InitJobs(std::vector<PutJob> jobs);
  // A background load: from StartLoading() until FinishLoading(), every call
  // that reads the jobs (or usage histories) and every write waits for it;
  // GetJob reads the job from the backend instead (ReadPersistedJob), and
  // the meta's reads (budgets, control state, generation, revisions,
  // events, decisions) answer at once. A failed load leaves the store
  // failed: those calls return its error (or nothing: HasJob false, empty
  // lists), and the owner is expected to stop.
  void StartLoading();
  void FinishLoading(absl::Status status);
  // During a background load: job `id` as persisted. NOT_FOUND if there is
  // none. Default: UNAVAILABLE (a backend without a background load).
  virtual absl::StatusOr<StoredJob> ReadPersistedJob(const std::string& id) const;
  // The record of a persisted job value (RocksStore::Open); false if it is
  // not one.
  static bool LoadRecord(absl::string_view value, PutJob* out);
  // Installs the loaded usage histories (RocksStore::Open), likewise.
  void InitUsage(std::vector<UsageHistory> histories);

  // Atomically persists `changes`. On error nothing may have been persisted.
  // Runs concurrently with LoadEvents / LoadDecisions (readers hold mu_
  // shared, the writer holds write_mu_ only), so a backend must allow that.
  virtual absl::Status Persist(const ChangeSet& changes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_) = 0;
  // Events with revision >= first, at most max, ascending. May return events
  // that are persisted but not yet published (beyond meta's revision) and,
  // while a compaction is being persisted, may start above `first`; the
  // callers in StoreCore handle both.
  virtual absl::StatusOr<std::vector<berth::v1::Event>> LoadEvents(
      uint64_t first, int max) const ABSL_SHARED_LOCKS_REQUIRED(mu_) = 0;
  virtual absl::StatusOr<std::vector<Decision>> LoadDecisions(
      const std::string& job_id) const ABSL_SHARED_LOCKS_REQUIRED(mu_) = 0;

  // Serialises writers; held for a whole mutating call.
  absl::Mutex write_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  // Guards the in-memory state: shared by readers and by the writer while it
  // computes a change set; exclusive only while a change is published.
  mutable absl::Mutex mu_;

 private:
  // RecordOrphanStopped and RecordStrayTask: one event of `type`.
  absl::StatusOr<uint64_t> RecordContainerEvent(v1::EventType type, const std::string& job_id,
                                                const std::string& container,
                                                const std::string& message, absl::Time now)
      ABSL_LOCKS_EXCLUDED(write_mu_, mu_);
  // OK once the jobs are loaded (at once when there was no background
  // load); waits for a load in progress; its error if it failed.
  absl::Status WaitLoaded() const;
  // True while a background load runs (not after it finished or failed).
  bool LoadPending() const;

  // Persists `changes` and then publishes them to the in-memory state.
  absl::Status Commit(ChangeSet changes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_) ABSL_LOCKS_EXCLUDED(mu_);
  // Both ApplySnapshot()s: `consumable` (null: copy) is `request` itself
  // when its specs may be moved into the change set.
  absl::StatusOr<SnapshotResult> Apply(const SnapshotRequest& request,
                                       SnapshotRequest* consumable, absl::Time now)
      ABSL_LOCKS_EXCLUDED(write_mu_, mu_);
  // ApplySnapshot without the write: fills `result` and `changes`. Sets
  // response.already_applied (and nothing else) for a repeated generation.
  // Specs of `consumable` (null: copied) are moved into `changes`.
  absl::Status DiffSnapshot(const SnapshotRequest& request, SnapshotRequest* consumable,
                            absl::Time now, SnapshotResult* result, ChangeSet* changes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_) ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // A copy of job `id` for a compare-and-set write: NOT_FOUND if unknown,
  // FAILED_PRECONDITION (stale) unless it is in `expected`.
  absl::StatusOr<StoredJob> JobInState(const std::string& id,
                                       berth::v1::JobState expected) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Writer's read of the state: a copy of meta_.
  StoreMeta MetaForWrite() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Adds a run of `job` (asked: its effective memory, the larger of its
  // estimate and raised_memory_bytes) that ended in `state` (with `cause`)
  // having used `used` to `c`'s usage changes, evicting the stalest key when
  // a new one goes beyond the bound (store_usage.cc).
  void AddUsageRun(const berth::v1::Job& job, berth::v1::JobState state,
                   berth::v1::FailureCause cause, const berth::v1::ResourceUsage& used,
                   absl::Time now, ChangeSet* c) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Publishes `c`'s usage changes.
  void PublishUsage(ChangeSet& c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const RetentionOptions retention_;
  const bool sync_writes_;
  // Set once by the constructor or InitEpoch, before any other call.
  StoreEpoch epoch_;

  // The hot part of a job for diffs and lookups, small enough that the key
  // and these fields share a cache line or two; the record itself is shared.
  struct Entry {
    uint64_t fingerprint = 0;  // SpecFingerprint of the record's spec
    // Last ApplySnapshot pass that named the job. Written only by the writer
    // (write_mu_ held, mu_ shared); no reader looks at it.
    mutable uint64_t seen = 0;
    berth::v1::JobState state = berth::v1::JOB_STATE_UNSPECIFIED;
    JobRecord stored;
  };
  // Ids (viewing the record's own id()) to records, in id order.
  using StateIndex = absl::btree_map<absl::string_view, JobRecord>;

  // Loops over many ids prefetch jobs_'s slots for the id this many ahead
  // (a million random lookups are bound by memory latency, not work).
  static constexpr size_t kLookupPrefetchDistance = 8;

  // Guarded by mu_.
  absl::flat_hash_map<std::string, Entry> jobs_ ABSL_GUARDED_BY(mu_);
  // Jobs by state (index = berth.v1.JobState value, all below kStates).
  static constexpr int kStates = 8;
  std::array<StateIndex, kStates> by_state_ ABSL_GUARDED_BY(mu_);
  StoreMeta meta_ ABSL_GUARDED_BY(mu_);
  // Usage histories by UsageKey.
  std::map<std::string, UsageHistory> usage_ ABSL_GUARDED_BY(mu_);

  // Guarded by write_mu_.
  uint64_t apply_pass_ ABSL_GUARDED_BY(write_mu_) = 0;

  // The background load. loading_ is set by StartLoading and cleared by a
  // successful FinishLoading: the fast path of WaitLoaded() reads only it.
  std::atomic<bool> loading_{false};
  mutable absl::Mutex load_mu_;
  bool load_done_ ABSL_GUARDED_BY(load_mu_) = true;
  absl::Status load_status_ ABSL_GUARDED_BY(load_mu_);
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_STORE_CORE_H_
