// Reconciler: turns the store's desired state and the planner's decisions into
// containers, and containers' fates back into job states.
//
// One pass (RunPass), DESIGN.md "Reconciler":
//   1. observe   one bulk Runtime::List(), and one usage sweep of the
//                running containers (Runtime::SampleUsage) when tracked;
//   2. finalise  ADMITTED/RUNNING jobs whose container finished or vanished,
//                or died by the engine's "die" event (OnRuntimeEvent) though
//                the list still says it runs (exit_hints.h):
//                Inspect (only those), logs tail, ClassifyExit with the
//                persisted StopIntent, Transition to the terminal state (or
//                back to QUEUED for a requeue), then Remove the container;
//   3. adopt     ADMITTED jobs whose container runs -> RUNNING (a crash
//                between start and persisting RUNNING);
//   4. clean     containers of unknown or finished jobs: stopped (orphans,
//                reported) and removed; on a just-restored store orphans
//                are held until the first newer sync
//                (Options::hold_orphans_until_sync);
//   5. plan      from the store (PlanSnapshot); dependency failures ->
//                FAILED/DEPENDENCY_FAILED;
//   6. admit     RecordDecisions(ADMIT...) -- durable (WAL fsync) before any
//                container is created;
//   7. start     every ADMITTED job without a running container (new and
//                recovered), with bounded parallelism (starter.h), in the
//                background when Options::background_starts (the pass
//                does not wait; the job is left alone by passes while its
//                start is in flight, and a pass follows each start);
//                -> RUNNING, or FAILED
//                START_FAILED at once for permanent errors (with the engine's
//                reason); transient errors leave the job ADMITTED and retry
//                it with backoff, at most StartRetryOptions::max_attempts
//                times unless the engine is unreachable (start_retries.h);
//   8. stop      jobs with a stop intent (cancel, requeue) and jobs past
//                max_duration (a TIMEOUT decision is recorded first).
// A runtime outage (List fails) ends the pass early with runtime_ok = false:
// no job is failed, nothing is admitted. A container that the engine itself
// killed during an outage (exit 137/143, no OOM, no stop intent, finished
// between the last good pass and the recovery — a dockerd restart without
// live-restore) is requeued, not failed. Any other job whose container ended
// in that window keeps its outcome, and its message says that output written
// during the outage may be missing from its log (Docker drops the last output
// of containers that exit while its daemon is down). Recovery after a
// restart is simply
// the first pass: containers are matched to jobs by name/label, so no job is
// started twice (a container name is unique: a second create is refused and
// adopted).
//
// Thread-safety: RunPass must not run concurrently with itself (the
// ReconcileLoop serialises passes); other methods are thread-safe. The
// destructor waits for starts in flight.
#ifndef BERTH_EXECUTOR_RECONCILE_RECONCILER_H_
#define BERTH_EXECUTOR_RECONCILE_RECONCILER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "berth/v1/budgets.pb.h"
#include "executor/reconcile/exit_hints.h"
#include "executor/reconcile/plan_snapshot.h"
#include "executor/reconcile/start_retries.h"
#include "executor/reconcile/starter.h"
#include "executor/logs/live_log_capture.h"
#include "executor/logs/log_archive.h"
#include "executor/logs/run_metadata.h"
#include "executor/logs/run_metadata_evidence.h"
#include "executor/runtime/runtime.h"
#include "executor/store/store.h"
#include "executor/reconcile/held_jobs.h"
#include "executor/usage/usage_tracker.h"
#include "planner/base/clock.h"
#include "planner/ranking/policy.h"

namespace berth {

struct ReconcilerOptions {
  // Containers created/started at once. Docker serialises much of create
  // internally; 4 gave the best wall time on a 2-core host (docs/BENCHMARKS.md).
  int start_parallelism = 4;
  // Starts run on the reconciler's own threads and a pass does not wait for
  // them (berthd: true), so exits and snapshots arriving meanwhile are
  // planned at once. false: a pass returns when its starts are done (its
  // PassStats count them), for tests that step passes by hand.
  bool background_starts = false;
  // The executor's latencies, for metrics and berth-plan's simulation
  // (--start-latency / --finish-latency): called with each job's start
  // latency (its admission to RUNNING recorded: Docker creating and
  // starting the container) and finish latency (its container's end, by the
  // engine's clock, to its outcome recorded: Berth noticing the exit). May
  // be empty. Called from the pass's or a start's thread. `starts` is how
  // many starts were in flight together with this one (itself included, at
  // most start_parallelism): its pass's starts and those still in flight
  // when the pass submitted them (starts slow each other: berth-plan
  // --start-contention).
  std::function<void(absl::Duration, int starts)> on_start_latency;
  std::function<void(absl::Duration)> on_finish_latency;
  // Called once per outcome the reconciler records: SUCCEEDED, FAILED (with
  // its cause) or CANCELLED (a requeue is not an outcome). May be empty.
  // Called from the pass's or a start's thread.
  std::function<void(v1::JobState, v1::FailureCause)> on_job_finished;
  // SIGTERM-to-SIGKILL grace when stopping a job.
  absl::Duration stop_grace = absl::Seconds(10);
  // Bytes of output kept with a finished job (Job.logs_tail).
  size_t logs_tail_bytes = 16 * 1024;
  // Mount <workspaces root>/<workspace> at /workspace (the Runtime knows the
  // root; false for tests without one).
  bool mount_workspaces = false;
  // Pool -> Docker network its jobs join; pools not listed get no network.
  std::map<std::string, std::string> pool_networks;
  // Transient start errors: backoff, and how many attempts before the job
  // fails START_FAILED (executor/start_retries.h).
  StartRetryOptions start_retries;
  // Multi-node runtimes: refreshed from Runtime::ListNodes() every pass
  // (the PlanCache should plan with the same one), and told every pass's
  // bulk list (NodeBudgets::ObserveTasks). Null on a single host.
  NodeBudgets* node_budgets = nullptr;
  // Observed usage: every pass samples the running containers
  // once (Runtime::SampleUsage, no engine call) into it, and a finished run's
  // figures go with its final transition (Job.observed). Null: only run
  // times are recorded.
  UsageTracker* usage = nullptr;
  // Every pass that lists the runtime replaces it with the jobs the runtime
  // holds (ContainerSummary::held), for ExplainJob. Null: not kept.
  HeldJobs* held = nullptr;
  // The requeue-OOM policy (executor/usage/oom_requeue.h): an OOM-killed job
  // of these pools ("default" for jobs naming none) is requeued once with a
  // raised memory reservation instead of failing. The last applied
  // snapshot's requeue_oom_once switches it on for every pool. Empty (the
  // default): only snapshots switch it on.
  std::set<std::string> requeue_oom_pools;
  // Complete logs: when set, a finished container's whole log is
  // captured into it as attempt requeue_count + 1, durably, before the
  // outcome is recorded and the container removed; an attempt already
  // captured (a crash after the capture) is not captured again. Engine
  // trouble or a full disk leaves the job unfinalised until the capture
  // succeeds (a later pass retries); a container already gone or a runtime
  // that cannot read whole logs is finalised without one. Null: only
  // Job.logs_tail is kept.
  LogArchive* log_archive = nullptr;
  // Live capture (berthd with Docker): every pass has it follow
  // each container it sees running (Follow, off the pass: a thread per
  // running job) and forget the jobs no longer running (Retain); finalising
  // commits the followed attempt (Finish) and falls back to the whole read
  // above only if that did not complete. REQUIRES log_archive (the same one
  // it writes). Null: logs are read when the container ends.
  LiveLogCapture* live_logs = nullptr;
  // Keeping a finished container's log (the live capture's Finish or the
  // whole read, seconds for a log of tens of MB) runs on the reconciler's
  // own log threads and a pass does not wait for it (berthd: true): the
  // pass leaves the job as it is (its container and capacity stay), and the
  // pass after the capture (a pass follows each one) records the outcome.
  // The order of the durable steps is unchanged -- log kept, outcome
  // recorded, container removed -- so a berthd killed meanwhile keeps the
  // log once at its next start. The same holds for a run's log imported
  // from its run metadata (an outcome taken from the workspace after a
  // restore, ImportRunLog): imported on those threads, the outcome recorded
  // by the pass after it. false: the pass captures and imports inline.
  bool background_log_capture = false;
  // Logs kept at once in the background (>= 1).
  int log_capture_parallelism = 2;
  // berthd --write_run_metadata (executor/logs/run_metadata.h): when a job
  // with a workspace ends (SUCCEEDED, FAILED or CANCELLED; not a requeue),
  // after its outcome is recorded, its final attempt's log (from
  // log_archive) and its record are written to
  // <workspace>/metadata/<job>.{log,json}. A failure is logged, not retried;
  // a berthd killed between the outcome and the write leaves none for that
  // job. Unset: nothing is written.
  std::optional<RunMetadataOptions> run_metadata;
  // A store just restored from a backup (StoreEpoch::began_at_open): the
  // containers of jobs it does not know (submitted after the backup) are
  // held -- neither stopped nor removed -- until a sync newer than the one
  // the store had at construction is applied; that sync names the job (the
  // pass then adopts its container, as for any QUEUED job) or not (stopped
  // as an orphan then). While any is held, passes admit nothing: the
  // store does not know what the held containers reserve, so no capacity
  // can be proven free. false: orphans are stopped at once.
  bool hold_orphans_until_sync = false;
};

// What one pass did (for logs, metrics and tests).
struct PassStats {
  bool runtime_ok = false;
  int finalised = 0;
  int adopted = 0;
  int orphans_stopped = 0;
  // Containers of unknown jobs left running (hold_orphans_until_sync).
  int orphans_held = 0;
  int admitted = 0;
  int started = 0;
  int start_failed = 0;
  int stop_requests = 0;
  int dependency_failed = 0;
  // Whether this pass planned (a pass after which no event was written
  // skips it) and how long reading the store and planning took.
  bool planned = false;
  absl::Duration plan_latency;
  // Another pass could make progress at once (e.g. stops were sent).
  bool more_work = false;
  // The pass's wall time by the reconciler's clock (0 on a simulated one).
  absl::Duration duration;
};

// Appended to the message of a job that ended during a runtime outage.
extern const char kEndedInOutageNote[];

struct ToStart;  // pass_work.h

class Reconciler {
 public:
  // store, runtime, clock and plans must outlive the reconciler.
  Reconciler(Store& store, Runtime& runtime, Clock& clock, PlanCache& plans,
             ReconcilerOptions options);

  // Runs one pass. Errors: the store failing (the pass stops where it was;
  // everything already recorded stays consistent and the next pass resumes).
  [[nodiscard]] absl::StatusOr<PassStats> RunPass();

  // Whether the last pass could reach the runtime.
  bool runtime_healthy() const;

  // Called (on a start's or a log thread) after each background start and
  // each background log capture, e.g. to trigger a pass. Set before the
  // first pass.
  void set_on_start_done(std::function<void()> on_done);

  // Blocks until no start (and no background log capture) is in flight.
  void AwaitStarts() const;

  // Shutdown: drops queued starts (their jobs stay ADMITTED: the next
  // process starts them) and queued log captures, abandons the captures
  // running now (nothing of them is kept: their jobs are still RUNNING,
  // and the next process keeps their logs), detaches the on_start_done
  // callback, and waits for both. Passes after this start nothing.
  void StopStarts();

  // Feeds one of the runtime's events (from its subscription thread; cheap,
  // never calls the engine). Returns true when a pass run now can finalise
  // a job the bulk list may not show as finished yet (a "die"); the caller
  // triggers passes for every event anyway.
  bool OnRuntimeEvent(const RuntimeEvent& event);

  // Held from planning until the admissions are recorded. Whoever replaces
  // job specs (a snapshot) or budgets holds it too, so a decision is never
  // recorded for a spec that changed after it was planned.
  absl::Mutex& admission_mutex() { return admission_mu_; }

 private:
  struct Work;

  absl::Status Observe(Work& work);
  absl::Status Finalise(Work& work, const StoredJob& job,
                        const ContainerSummary* container,
                        const std::optional<ExitHint>& hint = std::nullopt);
  // reconciler_adopt.cc (DESIGN.md "Recovery"). A container of this
  // instance running (or having run) the attempt the store would start next
  // for a QUEUED job is adopted as that attempt: an ADMIT decision recorded
  // with the engine's start, then RUNNING (or finalised from the engine's
  // record); *adopted says whether it was.
  absl::Status AdoptQueued(Work& work, const StoredJob& job, const ContainerSummary& c,
                           bool* adopted);
  // The run metadata of `job`'s current attempt, if trustworthy and of this
  // attempt (run_metadata_evidence.h); else nullopt and *why (may be null).
  std::optional<RunEvidence> EvidenceFor(const v1::Job& job, std::string* why) const;
  // A job whose container is gone with no engine record (outcome LOST):
  // its outcome from the run metadata when there is some, else a message
  // that says what was looked at.
  void ApplyEvidence(const StoredJob& job, TransitionRequest& t, ExitOutcome& outcome) const;
  // Records the outcome `e` shows for a QUEUED or ADMITTED job whose run the
  // store did not know (admitting it first when QUEUED). REQUIRES:
  // RunLogSettled(spec, e) (its log is kept first).
  absl::Status FinishFromEvidence(Work& work, const StoredJob& job, const RunEvidence& e);
  // The log written beside the run metadata `e` of job `spec` is kept in
  // options_.log_archive (imported, ImportRunLog), or cannot be (no file,
  // not trusted: the outcome is recorded without it, as the warning says):
  // true, the outcome may be recorded. false: its import runs on the log
  // threads (background_log_capture) and the pass after it records it.
  bool RunLogSettled(const v1::JobSpec& spec, const RunEvidence& e);
  // Whether the requeue-OOM policy covers a job of `spec`'s pool (options_
  // or the last applied snapshot).
  bool RequeuesOom(const v1::JobSpec& spec) const;
  // Captures the finished container's log into options_.log_archive (see
  // there). True when finalising may go on; false: try again next pass.
  // *info: the kept attempt's sizes (nullopt when no log was kept).
  bool CaptureLogs(const StoredJob& job, std::optional<AttemptLogInfo>* info);
  // Keeps attempt `attempt` of `id`'s log (the live capture's, else a whole
  // read). OK: kept; NOT_FOUND / UNIMPLEMENTED: no log can be kept (the
  // job is finalised without one); other errors: try again later.
  absl::Status KeepLog(const std::string& id, int attempt);
  // Background captures (background_log_capture): whether `id`'s is queued
  // or running, and the result of the last one that ended.
  bool KeepingLog(const std::string& id) const;
  // --write_run_metadata (reconciler_logs.cc): notes `id`'s metadata as owed
  // (before its outcome is recorded), writes it (after; clears the note),
  // and, once at the first pass, writes what a killed berthd still owed.
  void NoteMetadataOwed(const std::string& id, const std::string& image_id);
  void WriteMetadata(const v1::Job& job, const std::string& image_id);
  void WriteOwedMetadata();
  absl::Status Plan(Work& work);
  // One STRAY_TASK event for each stray task (NodeInfo::strays) not yet
  // reported by this process.
  void ReportStrays(const std::vector<NodeInfo>& nodes, absl::Time now);
  void StartAdmitted(Work& work);
  // Starts one ADMITTED job and records the outcome (a start's thread).
  // `starts`: see ReconcilerOptions::on_start_latency.
  void StartOne(const ToStart& start, int starts);
  absl::Status StopRequested(Work& work);
  ContainerSpec SpecFor(const ToStart& start) const;

  Store& store_;
  Runtime& runtime_;
  Clock& clock_;
  PlanCache& plans_;
  const ReconcilerOptions options_;

  absl::Mutex admission_mu_;
  mutable absl::Mutex mu_;
  bool runtime_healthy_ ABSL_GUARDED_BY(mu_) = false;

  // Runtime outages, for telling a daemon's kill from a job's own failure.
  // Only RunPass touches these (never concurrently with itself).
  // The last time List() succeeded; InfinitePast before the first.
  absl::Time last_ok_ = absl::InfinitePast();
  // Set while List() fails: the last success before the outage began.
  std::optional<absl::Time> outage_since_;
  // The last finished outage: containers that finished inside it with a
  // signal exit and no stop intent were killed by the engine (a dockerd
  // restart without live-restore), not by their job.
  absl::Time outage_from_ = absl::InfiniteFuture();
  absl::Time outage_to_ = absl::InfinitePast();
  // Jobs whose start failed transiently (thread-safe: StartAdmitted's
  // threads record into it).
  StartRetries start_retries_;
  // "die"/"oom" events not acted on yet (thread-safe).
  ExitHints exit_hints_;
  // Store revision of the last plan this reconciler acted on.
  bool metadata_recovered_ = false;  // WriteOwedMetadata ran
  uint64_t last_planned_revision_ = UINT64_MAX;
  uint64_t last_nodes_version_ = 0;  // NodeBudgets::version() last planned with
  // hold_orphans_until_sync: the sync generation the restored store had;
  // unset once a newer one was applied (or never set). Pass thread only.
  std::optional<uint64_t> orphan_hold_generation_;
  bool hold_reported_ = false;  // the hold's warning was logged. Pass thread only.
  // Stray tasks (NodeInfo::strays) already reported by an event. Pass thread only.
  std::set<std::string> reported_strays_;
  // Outcomes of starts since the last pass reported them.
  std::atomic<int> started_{0};
  std::atomic<int> start_failed_{0};
  // Background log captures (and run-log imports) that ended without
  // keeping a log: the job, its attempt, the error and when (a failed
  // capture is retried after kLogRetryAfter, not at once by the pass its end
  // triggers; a failed import is final).
  struct LogResult {
    int attempt = 0;
    absl::Status status;
    absl::Time at;
  };
  mutable absl::Mutex logs_mu_;
  std::map<std::string, LogResult> log_results_ ABSL_GUARDED_BY(logs_mu_);
  // Set by StopStarts: running captures stop reading and keep nothing.
  std::atomic<bool> stopping_logs_{false};
  // Last: destroyed first, so that no start or log capture outlives what it
  // uses.
  Starter starter_;
  Starter log_keeper_;
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_RECONCILE_RECONCILER_H_
