// The values Store's calls take and return: snapshot requests and results,
// decisions, transitions, read filters and pages, backups and the store's
// epoch. The calls themselves, and their contracts, are in store.h.
#ifndef BERTH_EXECUTOR_STORE_STORE_TYPES_H_
#define BERTH_EXECUTOR_STORE_STORE_TYPES_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "berth/v1/budgets.pb.h"
#include "berth/v1/event.pb.h"
#include "berth/v1/executor.pb.h"
#include "berth/v1/job.pb.h"
#include "executor/runtime/stop_intent.h"
#include "executor/store/job_record.h"

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

}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_STORE_TYPES_H_
