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
#include "executor/store/usage_history.h"

namespace berth {

// ---- ApplySnapshot ----

struct SnapshotOptions {
  // Allow cancelling more than max_cancel_fraction of running jobs.
  bool allow_mass_cancel = false;
  // A snapshot that would cancel more than this fraction of the jobs that are
  // ADMITTED or RUNNING is refused (FAILED_PRECONDITION) unless
  // allow_mass_cancel. Guards against a truncated job-server snapshot.
  double max_cancel_fraction = 0.5;
  // The guard's floor: a snapshot that cancels at most this many running
  // jobs is never refused (1 of 1 running is 100%, and job-server may mean
  // it). 0: the fraction alone decides.
  int mass_cancel_min_jobs = 1;
};

// A job of the snapshot that failed validation (done by the caller).
struct RejectedJob {
  berth::v1::JobSpec spec;  // as received; spec.id must be non-empty
  berth::v1::JobRejection rejection;
};

// A job of the snapshot whose spec the caller did not keep because the store
// held it unchanged (Store::LookupSpecs: known, and terminal or of the same
// fingerprint) and it was valid (server/ingest/stored_spec_filter.h).
struct UnchangedJob {
  std::string id;
  uint64_t fingerprint = 0;  // SpecFingerprint of the spec as received
};

struct SnapshotRequest {
  // REQUIRES: >= 1.
  uint64_t generation = 0;
  // Valid specs. REQUIRES: ids unique across jobs, unchanged and rejected.
  std::vector<berth::v1::JobSpec> jobs;
  // Valid jobs present without their spec: each counts as present with that
  // fingerprint, exactly like a job of `jobs` the store finds unchanged. If
  // at apply time one is unknown (compacted away), or not terminal and of
  // another fingerprint (a concurrent snapshot changed it after the
  // caller's lookup), nothing is applied: ABORTED.
  std::vector<UnchangedJob> unchanged;
  // Optional: fingerprints[i] == SpecFingerprint(jobs[i])
  // (executor/spec_fingerprint.h), computed by the caller while it received
  // the specs, when they were in cache. Empty: the store computes them.
  // INVALID_ARGUMENT if neither empty nor of jobs' size. A wrong fingerprint
  // can make a changed spec look unchanged: builds without NDEBUG check
  // every one (INTERNAL on a mismatch).
  std::vector<uint64_t> fingerprints;
  // SnapshotDigest of the whole snapshot as received (executor/
  // spec_fingerprint.h); 0 = unknown. Persisted with the generation: a
  // re-send of the last applied generation with another digest is refused
  // (FAILED_PRECONDITION). Unknown on either side: not compared.
  uint64_t digest = 0;
  // Invalid jobs: new ids are stored as REJECTED; known ids are left as they
  // are (and count as present, so they are not cancelled) but still listed.
  std::vector<RejectedJob> rejected;
  SnapshotOptions options;
  // SnapshotHeader.requeue_oom_once: persisted with the generation and
  // returned by LastSnapshotPolicy() until the next applied snapshot.
  bool requeue_oom_once = false;
  // Compute and return the result (counts, rejections, ignored changes,
  // cancellations) with every check of a real apply, but write nothing:
  // response.revision is the current revision. For the DryRun RPC.
  bool dry_run = false;
};

// The policies the last applied snapshot's header switched on for its jobs.
struct SnapshotPolicy {
  bool requeue_oom_once = false;
};

struct SnapshotResult {
  // Mirrors the API response: counts, rejections, ignored changes, revision.
  berth::v1::SyncSnapshotResponse response;
  // Queued jobs that were CANCELLED by absence.
  std::vector<std::string> cancelled_ids;
  // ADMITTED/RUNNING jobs absent from the snapshot: StopIntent::kCancel was
  // recorded; the reconciler stops them and then finalises them CANCELLED.
  std::vector<std::string> stop_requested_ids;
  // Job records written (added + updated + cancelled + rejected + stop
  // intents). 0 for an unchanged re-sync, whose only write is then the
  // generation (no event: revision_before == response.revision).
  int64_t job_writes = 0;
  // The store's revision just before this call (== response.revision when
  // nothing was written: a dry run or a re-send).
  uint64_t revision_before = 0;
};

// What the store holds of one job id (Store::LookupSpecs).
struct SpecLookup {
  bool known = false;
  bool terminal = false;     // in a terminal state (its spec is never diffed)
  uint64_t fingerprint = 0;  // SpecFingerprint of the stored spec, if known
};

// ---- Decisions ----

enum class DecisionKind {
  kAdmit = 1,    // QUEUED -> ADMITTED
  kCancel = 2,   // QUEUED -> CANCELLED; ADMITTED/RUNNING: StopIntent::kCancel
  kRequeue = 3,  // ADMITTED/RUNNING: StopIntent::kRequeue
  kReject = 4,   // QUEUED -> REJECTED (reject_reason)
  kTimeout = 5,  // RUNNING: StopIntent::kTimeout
};

struct DecisionRequest {
  std::string job_id;
  DecisionKind kind = DecisionKind::kAdmit;
  // Compare-and-set: the state the decider saw.
  berth::v1::JobState expected_state = berth::v1::JOB_STATE_UNSPECIFIED;
  // Human-readable reason ("fits: 4 GiB of 6 GiB free", "pool maintenance").
  std::string reason;
  // Generation of the plan (or snapshot) the decision came from.
  uint64_t plan_generation = 0;
  // For kReject.
  berth::v1::RejectReason reject_reason = berth::v1::REJECT_REASON_UNSPECIFIED;
  // For kAdmit on a multi-node runtime: the node the planner placed the job
  // on (stored as Job.node); "" on a single host.
  std::string node = {};
  // For kRequeue: what asked for it (kept with the decision; the reconciler
  // copies it, with the reason, into the ended attempt, Job.attempts).
  berth::v1::RequeueCause requeue_cause = berth::v1::REQUEUE_CAUSE_UNSPECIFIED;
  // For kAdmit of a job whose run the engine or its workspace shows already
  // began (adopted: the store never recorded its admission): when it did at
  // the latest, so that the recorded start can be the engine's. Unset (and
  // never later than `now`): now.
  std::optional<absl::Time> admitted_at = {};
};

// A decision as recorded in the audit log.
struct Decision {
  uint64_t sequence = 0;  // global, strictly increasing, from 1
  std::string job_id;
  DecisionKind kind = DecisionKind::kAdmit;
  std::string reason;
  uint64_t plan_generation = 0;
  absl::Time time;
  // Revision of the state-change event written with it; 0 if the decision
  // only recorded a stop intent.
  uint64_t revision = 0;
  // DecisionRequest::requeue_cause (UNSPECIFIED for other kinds, and for
  // requeues recorded before 0.12).
  berth::v1::RequeueCause requeue_cause = berth::v1::REQUEUE_CAUSE_UNSPECIFIED;
};

// ---- Transitions ----

// A state change observed or caused by the reconciler. Legal edges:
//   QUEUED   -> ADMITTED | CANCELLED | FAILED | REJECTED
//   ADMITTED -> RUNNING | QUEUED | SUCCEEDED | FAILED | CANCELLED
//   RUNNING  -> QUEUED | SUCCEEDED | FAILED | CANCELLED
// Timestamps are set from `now`: admitted_at (ADMITTED), started_at (RUNNING,
// or the request's started_at), finished_at (terminal, or the request's
// finished_at), queued_at (QUEUED; requeue_count + 1). Entering
// ADMITTED sets Job.attempt to requeue_count + 1. Leaving ADMITTED/RUNNING
// clears the stop intent and appends the ended attempt to Job.attempts (its
// times, node, container, exit, cause, message, usage and log sizes; the
// oldest is dropped beyond kMaxKeptAttempts).
struct TransitionRequest {
  std::string job_id;
  berth::v1::JobState expected_state = berth::v1::JOB_STATE_UNSPECIFIED;
  berth::v1::JobState new_state = berth::v1::JOB_STATE_UNSPECIFIED;
  // Optional fields; unset ones keep their stored value.
  std::optional<berth::v1::FailureCause> failure_cause;
  std::optional<berth::v1::RejectReason> reject_reason;
  std::optional<int32_t> exit_code;
  std::optional<std::string> message;
  std::optional<std::string> container_id;
  std::optional<std::string> logs_tail;
  // What the run used (Job.observed), for a transition out of RUNNING or
  // ADMITTED; also copied into the state-change event. A run that SUCCEEDED
  // or FAILED with sampled memory is added to its (workspace, action)'s
  // usage history in the same write (CountsAsRun, usage_history.h).
  std::optional<berth::v1::ResourceUsage> observed;
  // For a requeue after an OOM kill (the requeue-OOM policy; REQUIRES
  // new_state QUEUED and requeue_reason set, else INVALID_ARGUMENT): the
  // job's raised memory reservation (Job.raised_memory_bytes, > 0). The
  // run goes into the usage history as FAILED (OOM_KILLED) at the limit it
  // ran with.
  std::optional<int64_t> raised_memory_bytes;
  // Records a kRequeue decision with this reason in the same write (made
  // durable, as RecordDecisions is). REQUIRES new_state QUEUED, else
  // INVALID_ARGUMENT.
  std::optional<std::string> requeue_reason;
  // For a transition to RUNNING: when the job's process started, as the
  // engine records it (clamped to [admitted_at, now]); unset = now.
  std::optional<absl::Time> started_at;
  // For a transition out of ADMITTED/RUNNING: when the job's process ended,
  // as the engine records it (Docker's State.FinishedAt), clamped to
  // [started_at (else admitted_at), now]; unset = now. It is the record's
  // finished_at (terminal states, and so the state-change event's job) and
  // the ended attempt's finished_at: an exit recorded late (after an engine
  // outage) keeps its real time. The event's own time stays
  // the time of the write (events are in revision order).
  std::optional<absl::Time> finished_at;
  // For new_state QUEUED: what requeued it (Attempt.requeue_cause).
  std::optional<berth::v1::RequeueCause> requeue_cause;
  // The ended attempt's kept log sizes (Attempt.log_kept and sizes), when
  // the log was captured.
  std::optional<int64_t> stdout_log_bytes;
  std::optional<int64_t> stderr_log_bytes;
  // What each kept stream holds of what the run wrote (Attempt.stdout_cut,
  // stderr_cut).
  std::optional<berth::v1::LogCut> stdout_log_cut;
  std::optional<berth::v1::LogCut> stderr_log_cut;
};

// Most ended attempts a job record keeps (Job.attempts); older ones drop.
inline constexpr int kMaxKeptAttempts = 100;

// ---- Reads ----

struct JobFilter {
  // Only these states; empty = all.
  std::vector<berth::v1::JobState> states;
  // Only this workspace / pool ("" = any; pool "" and "default" are the same).
  std::string workspace;
  std::string pool;
  // 0 = 100; capped at 1000. REQUIRES: >= 0.
  int32_t page_size = 0;
  // From a previous JobPage::next_page_token; "" = first page.
  std::string page_token;
};

struct JobPage {
  std::vector<StoredJob> jobs;  // in job id order
  std::string next_page_token;  // "" when there are no more pages
};

struct EventPage {
  std::vector<berth::v1::Event> events;  // contiguous, ascending revisions
  uint64_t current_revision = 0;
};

struct CompactionStats {
  int64_t events_deleted = 0;
  int64_t jobs_deleted = 0;
};

// What a Backup holds.
struct BackupInfo {
  uint64_t revision = 0;         // the last event in the copy
  uint64_t last_generation = 0;  // the last applied snapshot generation
  int64_t jobs = 0;              // jobs in the copy (every state)
  int64_t size_bytes = 0;        // the copy's files (hard links count in full)
  int schema_version = 0;        // the store format of the copy
};

// The store's history epoch: which line of revisions this store's events
// belong to. A store opened from a backup copy continues the backup's
// revisions under a new epoch id (as etcd gives a restored member a new
// cluster id), because the revisions the original wrote after the backup
// were different events: a follower that read past `since` in another
// epoch has seen events this store never had.
struct StoreEpoch {
  // 16 lower-case hex digits, random when the epoch began; never empty for a
  // store that keeps files (a MemoryStore has one for its lifetime).
  std::string id;
  // The epoch this one was restored from ("" for a store created fresh, or
  // one that predates epochs).
  std::string parent;
  // The last revision shared with `parent`: this epoch's own events are
  // those above it (0 for a fresh store).
  uint64_t since = 0;
  // True when this process's open began the epoch (the store was opened
  // from a backup copy for the first time).
  bool began_at_open = false;
  // For an epoch begun from a backup copy: the sync generation the copy had.
  // Kept in the epoch record, so that a berthd restarted on the restored
  // store before any newer sync still knows that containers it does not know
  // may be jobs the job-server submitted after the backup.
  std::optional<uint64_t> restored_at_generation;

  // True while no sync newer than the backup's has been applied to a
  // restored store (`last_applied`: Store::LastAppliedGeneration()).
  bool AwaitsFirstSyncAfterRestore(uint64_t last_applied) const {
    return restored_at_generation.has_value() && last_applied == *restored_at_generation;
  }
};

// A new random epoch id (16 hex digits).
std::string NewEpochId();

// What Backup asks of files kept beside the store (job logs, run metadata
// owed): called with the copy's directory while writes are still held, so
// that what it copies is as of the copy's state. Its error fails the backup.
using BackupExtraCopy = std::function<absl::Status(const std::string& backup_dir)>;

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
