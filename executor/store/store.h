// Store: Berth's durable state — jobs, the event log, the decision audit log
// and operator meta (budgets, pause, pool maintenance).
//
// The interface has no RocksDB types. Implementations: RocksStore
// (executor/rocks_store.h, the real one) and MemoryStore
// (executor/memory_store.h, a testonly fake with the same semantics).
//
// Guarantees of every implementation:
//   * Every mutating call is atomic: either all of its job records, events,
//     decisions and meta are stored, or none (one RocksDB WriteBatch).
//   * Every job state change appends exactly one berth.v1.Event in the same
//     write. Revisions start at 1 and increase by exactly 1.
//   * RecordDecisions() is durable (WAL fsync) before it returns OK, so a
//     caller may act on an acknowledged decision.
//   * A failed call changes nothing, in memory or on disk.
//
// Thread-safety: all methods may be called concurrently from any thread.
// Writes are serialised; reads see the state after some complete write.
// Reads do not wait for a write's diff or its disk write, only for the
// publication of its result in memory.
//
// Time: the store never reads a clock. Callers pass `now`.
//
// The values the calls take and return are in store_types.h.
#ifndef BERTH_EXECUTOR_STORE_STORE_H_
#define BERTH_EXECUTOR_STORE_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "berth/v1/budgets.pb.h"
#include "berth/v1/event.pb.h"
#include "berth/v1/executor.pb.h"
#include "berth/v1/job.pb.h"
#include "executor/runtime/stop_intent.h"
#include "executor/store/job_record.h"
#include "executor/store/store_types.h"
#include "executor/store/usage_history.h"

namespace berth {

class Store {
 public:
  virtual ~Store() = default;

  // Applies a complete snapshot (see DESIGN.md "SyncSnapshot"):
  //   new id -> QUEUED; queued id -> spec replaced if it differs;
  //   ADMITTED/RUNNING -> only priority taken, other differences reported in
  //   response.ignored; terminal ids -> untouched (terminal_unchanged);
  //   known non-terminal ids absent -> queued: CANCELLED, admitted/running:
  //   StopIntent::kCancel recorded with a kCancel decision (no event: the
  //   job's state changes, with its event, when the reconciler finalises it).
  // A stop once requested is not withdrawn by a later snapshot naming the job.
  // Unchanged jobs are not rewritten. One event per job change plus one
  // SNAPSHOT_APPLIED event — only if some job changed: a sync that changes
  // no job writes its generation (and digest and policies) but no event, so
  // the event log is about jobs; the generation is in the answer and in
  // LastAppliedGeneration().
  // Errors:
  //   INVALID_ARGUMENT    generation 0, empty or duplicate ids, fingerprints
  //                       of the wrong size.
  //   FAILED_PRECONDITION generation < last applied; the mass-cancel guard;
  //                       generation == last applied with another digest.
  //   ABORTED             an `unchanged` job is no longer stored as the
  //                       caller found it (SnapshotRequest::unchanged).
  //   others              storage errors (nothing changed).
  // generation == last applied with the same (or an unknown) digest: OK,
  // response.already_applied, nothing written.
  [[nodiscard]] virtual absl::StatusOr<SnapshotResult> ApplySnapshot(
      const SnapshotRequest& request, absl::Time now) = 0;
  // The same, for a caller that no longer needs the request: the specs of
  // added and updated jobs may be moved into the store's records
  // instead of copied (a first sync of a million jobs then holds one copy
  // of each spec, not two), and the specs are freed before the write.
  // `request` is left valid but unspecified. The default copies.
  [[nodiscard]] virtual absl::StatusOr<SnapshotResult> ApplySnapshot(
      SnapshotRequest&& request, absl::Time now) {
    return ApplySnapshot(static_cast<const SnapshotRequest&>(request), now);
  }

  // Records decisions and their state changes / stop intents atomically and
  // durably (WAL fsync). All or nothing. Returns the recorded decisions in
  // request order.
  // Errors:
  //   NOT_FOUND           unknown job id.
  //   FAILED_PRECONDITION a job is not in expected_state (stale decision), or
  //                       the kind does not apply to that state (e.g. admit a
  //                       RUNNING job).
  //   INVALID_ARGUMENT    the same job twice in one call, empty list.
  [[nodiscard]] virtual absl::StatusOr<std::vector<Decision>> RecordDecisions(
      const std::vector<DecisionRequest>& decisions, absl::Time now) = 0;

  // Compare-and-set state change of one job, with its event. Returns the job
  // as stored after the change.
  // Errors:
  //   NOT_FOUND           unknown job id.
  //   FAILED_PRECONDITION the job is not in expected_state (stale).
  //   INVALID_ARGUMENT    the edge expected_state -> new_state is not legal.
  [[nodiscard]] virtual absl::StatusOr<StoredJob> Transition(
      const TransitionRequest& request, absl::Time now) = 0;

  // Replaces the budgets; one BUDGETS_CHANGED event. Returns the revision.
  [[nodiscard]] virtual absl::StatusOr<uint64_t> SetBudgets(
      const berth::v1::Budgets& budgets, absl::Time now) = 0;
  // Pauses / resumes admission. Idempotent: no change, no event — except a
  // Pause with a different reason, which replaces the reason. Returns the
  // control state after the call.
  [[nodiscard]] virtual absl::StatusOr<berth::v1::ControlState> SetPaused(
      bool paused, const std::string& reason, absl::Time now) = 0;
  // Puts `pool` in or out of maintenance. Idempotent like SetPaused.
  // INVALID_ARGUMENT for an empty pool name.
  [[nodiscard]] virtual absl::StatusOr<berth::v1::ControlState>
  SetPoolMaintenance(const std::string& pool, bool in_maintenance,
                     const std::string& reason, absl::Time now) = 0;

  // Reports that the reconciler stopped and removed a container of a job
  // Berth does not know (an orphan, e.g. left by another Berth or created by
  // hand with our labels): one ORPHAN_STOPPED event naming `job_id` (the
  // container's berth.job label) and `container` (its name). Changes no job.
  // Returns the event's revision. INVALID_ARGUMENT if `container` is empty.
  [[nodiscard]] virtual absl::StatusOr<uint64_t> RecordOrphanStopped(
      const std::string& job_id, const std::string& container,
      const std::string& message, absl::Time now) = 0;
  // A stray task found running (a multi-node runtime's older attempt or
  // removed service's task): one STRAY_TASK event naming `job_id`,
  // `container` and `message`. Changes no job. INVALID_ARGUMENT if
  // `container` is empty.
  [[nodiscard]] virtual absl::StatusOr<uint64_t> RecordStrayTask(
      const std::string& job_id, const std::string& container,
      const std::string& message, absl::Time now) = 0;

  // NOT_FOUND if budgets were never set.
  [[nodiscard]] virtual absl::StatusOr<berth::v1::Budgets> GetBudgets()
      const = 0;
  virtual berth::v1::ControlState GetControlState() const = 0;
  // 0 if no snapshot was applied yet.
  virtual uint64_t LastAppliedGeneration() const = 0;
  // The policies of the last applied snapshot (all off before the first).
  virtual SnapshotPolicy LastSnapshotPolicy() const = 0;

  // NOT_FOUND if the id is unknown (or was compacted away).
  [[nodiscard]] virtual absl::StatusOr<StoredJob> GetJob(
      const std::string& job_id) const = 0;
  // True if the id is known (in any state). Copies nothing.
  virtual bool HasJob(const std::string& job_id) const = 0;
  // Looks up every id of `ids` at one state (one lock for the batch): sets
  // (*out)[i] for ids[i], resizing `out`. For a sync that keeps only the
  // specs the store does not hold unchanged (SnapshotRequest::unchanged).
  // The default (a store without an index) answers "unknown" for every id.
  virtual void LookupSpecs(const std::vector<absl::string_view>& ids,
                           std::vector<SpecLookup>* out) const {
    out->assign(ids.size(), SpecLookup{});
  }
  // All jobs in `state`, in id order, as shared records (see JobRecord): no
  // job is copied. Served from a per-state index: the cost is proportional to
  // the result, not to the number of jobs.
  virtual std::vector<JobRecord> JobsInState(
      berth::v1::JobState state) const = 0;
  // Calls visit(record) for every job in `state`, in id order, where the
  // index holds it: no record is copied and no reference count is touched
  // unless `visit` copies the JobRecord it is given (to keep it). A reader
  // pass over a large state costs the visits only. `visit` runs under the
  // store's read lock: it must be quick and must not call into the store
  // (writers wait for the pass). The default visits JobsInState's copy.
  virtual void VisitJobsInState(
      berth::v1::JobState state,
      const std::function<void(const JobRecord&)>& visit) const {
    for (const JobRecord& r : JobsInState(state)) visit(r);
  }
  // How many jobs are in `state`, without copying any.
  virtual size_t CountJobsInState(berth::v1::JobState state) const {
    return JobsInState(state).size();
  }
  // Filtered, paginated listing in id order.
  // INVALID_ARGUMENT: page_size < 0 or a malformed page_token.
  [[nodiscard]] virtual absl::StatusOr<JobPage> ListJobs(
      const JobFilter& filter) const = 0;

  // Events with revision > after_revision, at most max_events (>= 1; capped
  // at 10000), ascending.
  // Errors:
  //   OUT_OF_RANGE     after_revision + 1 < OldestRevision() (trimmed); the
  //                    message names the oldest and current revisions.
  //   INVALID_ARGUMENT after_revision > CurrentRevision(), max_events < 1.
  [[nodiscard]] virtual absl::StatusOr<EventPage> ReadEvents(
      uint64_t after_revision, int max_events) const = 0;
  // Revision of the last event; 0 for an empty store.
  virtual uint64_t CurrentRevision() const = 0;
  // Lowest retained revision; CurrentRevision() + 1 when none is retained.
  virtual uint64_t OldestRevision() const = 0;
  // Blocks until CurrentRevision() > after_revision or `timeout` passes.
  // Returns true in the first case. For WatchEvents streams.
  virtual bool AwaitRevision(uint64_t after_revision,
                             absl::Duration timeout) const = 0;

  // The audit log of one job, oldest first. Empty for unknown ids.
  [[nodiscard]] virtual absl::StatusOr<std::vector<Decision>> DecisionsForJob(
      const std::string& job_id) const = 0;

  // Retention: drops events beyond the configured count / age and terminal
  // jobs (with their decisions) finished longer ago than the configured
  // retention, then the oldest finished beyond max_terminal_jobs. Writes no
  // events. Call periodically.
  [[nodiscard]] virtual absl::StatusOr<CompactionStats> Compact(
      absl::Time now) = 0;

  // A consistent copy of the store in `dir` (which must not exist; its parents
  // are created), taken
  // while the store serves: reads go on, writes wait until the copy is cut.
  // The copy opens as a store of its own (RocksStore::Open). Errors:
  // UNIMPLEMENTED for a store without files (MemoryStore), ALREADY_EXISTS if
  // `dir` exists, the file system's otherwise.
  [[nodiscard]] virtual absl::StatusOr<BackupInfo> Backup(const std::string& dir) = 0;
  // The same, running `extra` (may be empty) while writes are held, after
  // the copy is cut: the files it copies (hard links of immutable files are
  // enough) then hold at least every file the copy's state refers to.
  // Default: UNIMPLEMENTED.
  [[nodiscard]] virtual absl::StatusOr<BackupInfo> Backup(const std::string& dir,
                                                          const BackupExtraCopy& extra);

  // The store's history epoch (see StoreEpoch). Constant after open.
  // Default: an empty id (a store without epochs).
  virtual StoreEpoch Epoch() const { return {}; }

  // Usage history (usage_history.h), bounded by RetentionOptions::usage;
  // never compacted by age. Every (workspace, action) with a run, in key
  // order.
  virtual std::vector<UsageHistory> UsageHistories() const = 0;
  // NOT_FOUND if the (workspace, action) has no run.
  [[nodiscard]] virtual absl::StatusOr<UsageHistory> UsageHistoryOf(
      const std::string& workspace, const std::string& action) const = 0;
};

// Retention settings shared by the implementations.
struct RetentionOptions {
  // Keep at most this many events (the newest). Default 1,000,000 (~150 MB).
  int64_t max_events = 1'000'000;
  // Drop events older than this. Default 7 days.
  absl::Duration max_event_age = absl::Hours(24 * 7);
  // Keep terminal jobs (for GetJob and audit) this long after finished_at.
  // Default 7 days.
  absl::Duration terminal_job_retention = absl::Hours(24 * 7);
  // Keep at most this many terminal jobs (the most recently finished): a
  // job-server that withdraws many queued jobs (each kept as CANCELLED)
  // cannot grow the store without bound within the retention. Default
  // 1,000,000 (~400 MB of memory and store).
  int64_t max_terminal_jobs = 1'000'000;
  // Bounds of the usage history (runs per (workspace, action), keys).
  UsageHistoryOptions usage;
};

const char* StopIntentName(StopIntent intent);
const char* DecisionKindName(DecisionKind kind);
bool IsTerminal(berth::v1::JobState state);

}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_STORE_H_
