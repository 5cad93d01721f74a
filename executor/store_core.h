// StoreCore: the semantics of Store (snapshot diff, decisions, transitions,
// meta, retention) over an in-memory index of all jobs, shared by RocksStore
// and MemoryStore. A backend only persists change sets atomically and reads
// back events and decisions; it never decides anything.
//
// Internal to executor/: use Store, RocksStore or MemoryStore.
//
// Write path: under the writer lock, compute a ChangeSet against the in-memory
// state; Persist() it (one atomic write); only if that succeeds, apply it to
// the in-memory state. A failed Persist() leaves both unchanged.
//
// Thread-safe: one reader/writer mutex (mu_) guards the state; Persist and the
// Load* hooks are called with mu_ held.
#ifndef BERTH_EXECUTOR_STORE_CORE_H_
#define BERTH_EXECUTOR_STORE_CORE_H_

#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "executor/store.h"

namespace berth {

// Store-wide scalar state, persisted with every write.
struct StoreMeta {
  uint64_t last_generation = 0;
  uint64_t revision = 0;         // last event; 0 = none yet
  uint64_t oldest_revision = 1;  // lowest retained; revision + 1 if none
  uint64_t last_decision_sequence = 0;
  std::optional<berth::v1::Budgets> budgets;
  bool paused = false;
  std::string pause_reason;
  std::set<std::string> pools_in_maintenance;
};

// Everything one atomic write changes.
struct ChangeSet {
  std::vector<StoredJob> put_jobs;       // full records, replace by id
  std::vector<std::string> delete_jobs;  // with their decisions
  std::vector<berth::v1::Event> events;  // contiguous new revisions
  std::vector<Decision> decisions;       // new audit records
  // Events with revision < this are deleted; 0 = none. Equals meta's new
  // oldest_revision when set.
  uint64_t delete_events_before = 0;
  StoreMeta meta;    // the new meta (always written)
  bool sync = true;  // fsync the WAL before returning
};

class StoreCore : public Store {
 public:
  ~StoreCore() override = default;

  absl::StatusOr<SnapshotResult> ApplySnapshot(const SnapshotRequest& request,
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
  absl::StatusOr<berth::v1::Budgets> GetBudgets() const override;
  berth::v1::ControlState GetControlState() const override;
  uint64_t LastAppliedGeneration() const override;
  absl::StatusOr<StoredJob> GetJob(const std::string& job_id) const override;
  std::vector<StoredJob> JobsInState(berth::v1::JobState state) const override;
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

 protected:
  // `sync_writes`: fsync every write (decisions are synced regardless).
  StoreCore(RetentionOptions retention, bool sync_writes);

  // Installs loaded state (RocksStore::Open), before any other call.
  void InitState(StoreMeta meta, std::vector<StoredJob> jobs);

  // Atomically persists `changes`. On error nothing may have been persisted.
  virtual absl::Status Persist(const ChangeSet& changes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) = 0;
  // Events with revision >= first, at most max, ascending.
  virtual absl::StatusOr<std::vector<berth::v1::Event>> LoadEvents(
      uint64_t first, int max) const ABSL_SHARED_LOCKS_REQUIRED(mu_) = 0;
  virtual absl::StatusOr<std::vector<Decision>> LoadDecisions(
      const std::string& job_id) const ABSL_SHARED_LOCKS_REQUIRED(mu_) = 0;

  mutable absl::Mutex mu_;

 private:
  // Persists `changes` and then applies them to the in-memory state.
  absl::Status Commit(ChangeSet changes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  berth::v1::ControlState ControlStateLocked() const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const RetentionOptions retention_;
  const bool sync_writes_;

  struct Entry {
    StoredJob stored;
    uint64_t fingerprint = 0;  // SpecFingerprint(stored.job.spec())
    uint64_t seen = 0;         // last ApplySnapshot pass that named the job
  };

  // Guarded by mu_.
  absl::flat_hash_map<std::string, Entry> jobs_ ABSL_GUARDED_BY(mu_);
  uint64_t apply_pass_ ABSL_GUARDED_BY(mu_) = 0;
  // Job ids by state (index = berth.v1.JobState value).
  std::array<std::set<std::string>, 8> by_state_ ABSL_GUARDED_BY(mu_);
  StoreMeta meta_ ABSL_GUARDED_BY(mu_);
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_CORE_H_
