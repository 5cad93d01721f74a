// ExecutorCore: what every berth.v1.Executor RPC does, without gRPC.
//
// The gRPC adapter (executor_service.h) authenticates, reads streams,
// converts and maps statuses; everything else happens here, so it is tested
// directly. Errors follow DESIGN.md's API semantics:
//   Sync/DryRun  FAILED_PRECONDITION stale generation or mass-cancel guard;
//                per-job problems are rejections in the response, not errors.
//   reads        NOT_FOUND unknown job; INVALID_ARGUMENT bad page token/size.
//   operator     INVALID_ARGUMENT non-positive budgets; NOT_FOUND unknown pool.
//
// Thread-safe: every method may be called concurrently.
#ifndef BERTH_SERVER_CORE_EXECUTOR_CORE_H_
#define BERTH_SERVER_CORE_EXECUTOR_CORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "server/core/budget_checks.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "berth/v1/event.pb.h"
#include "berth/v1/executor.pb.h"
#include "berth/v1/plan.pb.h"
#include "planner/base/clock.h"
#include "executor/reconcile/held_jobs.h"
#include "executor/reconcile/plan_snapshot.h"
#include "executor/store/store.h"
#include "executor/usage/usage_tracker.h"
#include "server/ingest/job_validation.h"
#include "server/ingest/snapshot_assembler.h"

namespace berth {

struct ExecutorCoreOptions {
  // The runtime's image allow-list, checked for every job at sync time.
  // Required.
  std::function<bool(absl::string_view image)> image_allowed;
  // True only if the engine is known not to hold an image; a new job naming
  // one is REJECTED at sync (IMAGE_NOT_FOUND). False when unknown (engine
  // down): see ValidationConfig::image_missing. Empty: not checked.
  std::function<bool(absl::string_view image)> image_missing;
  // True if a workspace has its directory on the Docker host; a job naming
  // one that does not is REJECTED at sync (WORKSPACE_NOT_FOUND). Empty: not
  // checked (no workspaces root).
  std::function<bool(absl::string_view workspace)> workspace_exists;
  // A snapshot cancelling more than this fraction of running jobs is refused
  // unless it sets allow_mass_cancel.
  double max_cancel_fraction = 0.5;
  // ...and more than this many (SnapshotOptions::mass_cancel_min_jobs).
  int mass_cancel_min_jobs = 1;
  // Ids of jobs ahead listed by ExplainJob.
  int max_ahead_ids = 5;
  // Called after every change that may let the reconciler act (a sync, a
  // budget or flag change, a requeue). May be empty.
  std::function<void()> trigger;
  // Live usage of running jobs (the reconciler's), shown in GetJob and
  // ListJobs as Job.observed. Null: running jobs show none until they end.
  const UsageTracker* usage = nullptr;
  // Jobs the runtime holds because their node was lost (the reconciler's),
  // shown by ExplainJob (Explanation.held). Null: none shown.
  const HeldJobs* held = nullptr;
  // Pools ("default" for jobs naming none) whose jobs arriving without a
  // memory estimate (memory_bytes 0) get the estimate their (workspace,
  // action)'s usage history suggests, instead of being REJECTED
  // (INVALID_RESOURCES). A job without enough history is still rejected.
  // Empty (the default): off, except for snapshots whose header sets
  // fill_memory_from_history (every pool).
  std::set<std::string> fill_memory_pools;
  // Where Backup writes its copies (<backup_root>/<name>); empty: Backup is
  // refused (FAILED_PRECONDITION). On the store's file system a copy shares
  // the store's immutable files by hard link.
  std::string backup_root;
  // Copies the files kept beside the store (berthd: the job log archive,
  // LogArchive::CopyTo into <copy>/logs) while the store's copy holds
  // writes, and returns how many; empty: the backup is the store alone.
  std::function<absl::StatusOr<int64_t>(const std::string& backup_dir)> backup_files;
  // berthd's version line (BackupResponse.berth_version).
  std::string version;
  // berthd --workspaces_root: GetJob and ListJobs fill Job.workspace_path
  // with <workspaces_root>/<workspace>. Empty: left empty.
  std::string workspaces_root;
  // What the engine reports (docker info), for SetBudgets' warnings
  // (Budgets.warnings) about budgets above it, and for ingest: a job asking
  // more cores than the engine has is NEVER_FITS (ValidationConfig::
  // host_cpu_millis). Zero: unknown (a Swarm, whose budgets are its nodes'
  // sum, or an engine that did not answer).
  EngineSize engine;
};

class ExecutorCore {
 public:
  // store, plans and clock must outlive the core. `admission_mu` is the
  // reconciler's (Reconciler::admission_mutex()): held while a snapshot is
  // applied, so no plan is recorded from specs the snapshot just replaced.
  ExecutorCore(Store& store, PlanCache& plans, Clock& clock,
               absl::Mutex& admission_mu, ExecutorCoreOptions options);

  // What one sync is validated against, fixed once when it begins: the
  // current budgets (with the runtime's nodes) and the ValidationConfig made
  // from them. The filter that drops unchanged specs as the stream arrives
  // and the validation of the specs it keeps share this one setup, so the two
  // halves of a sync are never checked against different budgets.
  struct SyncSetup {
    v1::Budgets budgets;
    ValidationConfig validation;
  };
  // The setup for a sync (or a dry run) starting now; the store's status if
  // the budgets cannot be read.
  [[nodiscard]] absl::StatusOr<SyncSetup> BeginSync() const;

  // A SpecFilter for a SyncSnapshot stream (SnapshotAssembler): drops, as
  // they arrive, the valid specs the store holds unchanged
  // (server/ingest/stored_spec_filter.h), checked against `setup`, and every
  // spec of a re-send (a generation the store has applied, answered by its
  // digest). A snapshot assembled with it goes to Sync with the same setup.
  std::unique_ptr<SpecFilter> NewSyncFilter(const SyncSetup& setup) const;

  // `snapshot` may come from a stream read with NewSyncFilter(setup)'s
  // filter. The overload without a setup begins one (for unfiltered
  // snapshots).
  [[nodiscard]] absl::StatusOr<v1::SyncSnapshotResponse> Sync(
      ReceivedSnapshot snapshot, const SyncSetup& setup);
  [[nodiscard]] absl::StatusOr<v1::SyncSnapshotResponse> Sync(
      ReceivedSnapshot snapshot);
  // INVALID_ARGUMENT if `snapshot` was filtered (a dry run needs every spec).
  [[nodiscard]] absl::StatusOr<v1::DryRunResponse> DryRun(
      ReceivedSnapshot snapshot);

  // `limit` decisions at most (0 = all). With `include_state`, also
  // Plan.state: the state the plan was made from, as a berth-plan workload
  // (planner::WorkloadOfState of the same snapshot).
  [[nodiscard]] absl::StatusOr<v1::Plan> GetPlan(int32_t limit, bool include_state = false);
  [[nodiscard]] absl::StatusOr<v1::ListJobsResponse> ListJobs(
      const v1::ListJobsRequest& request);
  [[nodiscard]] absl::StatusOr<v1::Job> GetJob(const std::string& job_id);
  [[nodiscard]] absl::StatusOr<v1::Explanation> ExplainJob(
      const std::string& job_id);
  // ExplainJob with a queued job explained from `plan` (one the caller
  // chose: the dashboard's newest with a complete forecast,
  // server/web/ready_plans.h) instead of the latest. Explanation.revision is
  // `plan`'s; a job queued after it is "not planned yet".
  [[nodiscard]] absl::StatusOr<v1::Explanation> ExplainJob(
      const std::string& job_id, const PlanSnapshot& plan);

  [[nodiscard]] absl::StatusOr<v1::Budgets> GetBudgets();
  [[nodiscard]] absl::StatusOr<v1::Budgets> SetBudgets(
      const v1::SetBudgetsRequest& request);
  [[nodiscard]] absl::StatusOr<v1::ControlState> Pause(const std::string& reason);
  [[nodiscard]] absl::StatusOr<v1::ControlState> Resume();
  [[nodiscard]] absl::StatusOr<v1::SetPoolMaintenanceResponse>
  SetPoolMaintenance(const v1::SetPoolMaintenanceRequest& request);
  [[nodiscard]] absl::StatusOr<v1::DrainResponse> Drain(
      const v1::DrainRequest& request);
  // The actions wasting the most reserved memory (executor/usage/
  // right_sizing.h). INVALID_ARGUMENT: limit < 0, workspace too long.
  [[nodiscard]] absl::StatusOr<v1::RightSizeResponse> RightSize(
      const v1::RightSizeRequest& request);
  // The Backup RPC (proto/berth/v1/executor.proto): Store::Backup into
  // <backup_root>/<name> (with options.backup_files' copy, as of the same
  // state), then the manifest BERTH_BACKUP.json beside it.
  [[nodiscard]] absl::StatusOr<v1::BackupResponse> Backup(const v1::BackupRequest& request);

  // Streams events with revision > from_revision to `write` (false = the
  // client is gone), then waits for new ones, until `cancelled()` is true.
  // Returns OK when cancelled; OUT_OF_RANGE / INVALID_ARGUMENT from the
  // store for a revision below retention / above the current one.
  struct Revisions {
    uint64_t oldest = 0;   // lowest retained event revision
    uint64_t current = 0;  // last event revision
  };
  Revisions CurrentRevisions() const;
  // The generation of the last applied snapshot (0 = none yet).
  uint64_t LastAppliedGeneration() const;

  [[nodiscard]] absl::Status Watch(
      uint64_t from_revision,
      const std::function<bool(const v1::Event&)>& write,
      const std::function<bool()>& cancelled);

  // Whether a watch may start as `request` asks. FAILED_PRECONDITION when
  // its epoch is set and is not the store's (the store was restored from a
  // backup: revisions are never reused, so the follower's later revisions
  // name events this store never had) or its from_revision is beyond the
  // current revision; *resume (may be null) then says what the trailers
  // carry.
  struct WatchResume {
    std::string epoch;             // the store's epoch
    uint64_t resume_revision = 0;  // last revision shared; 0 = re-list from scratch
    uint64_t current_revision = 0;
  };
  [[nodiscard]] absl::Status CheckWatch(const v1::WatchEventsRequest& request,
                                        WatchResume* resume) const;
  // The store's epoch id (Event.epoch).
  std::string Epoch() const { return store_.Epoch().id; }

  // The pieces of Watch for a caller that does not block a thread per
  // stream (ExecutorService's WatchEvents reactors):
  // The revision a watch from `from_revision` reads after (0 = from the
  // oldest retained event).
  uint64_t WatchStart(uint64_t from_revision) const;
  // Store::ReadEvents, each event stamped with the epoch (OUT_OF_RANGE below retention, INVALID_ARGUMENT above
  // the current revision).
  [[nodiscard]] absl::StatusOr<EventPage> ReadEvents(uint64_t after_revision,
                                                     int max_events) const;
  // Store::AwaitRevision: true once the current revision > after_revision,
  // false when `timeout` passed first.
  bool AwaitRevision(uint64_t after_revision, absl::Duration timeout) const;

 private:
  // `plan` null: the latest (PlanCache::Get()).
  absl::StatusOr<v1::Explanation> ExplainJobIn(const std::string& job_id,
                                               const PlanSnapshot* plan);
  struct Prepared;
  absl::StatusOr<Prepared> Prepare(ReceivedSnapshot snapshot, const SyncSetup& setup,
                                   bool dry_run);
  // `stored` (optional): set to whether they are an operator's (stored).
  absl::StatusOr<v1::Budgets> CurrentBudgets(bool* stored = nullptr) const;
  // Budgets answers: the runtime's nodes as plans use them (ApplyNodes) and
  // one NodeUse per node from the latest plan (Budgets.node_use).
  void AddNodeUse(v1::Budgets& budgets, bool operator_set) const;
  absl::StatusOr<std::vector<std::string>> Requeue(
      const std::function<bool(const StoredJob&)>& which, v1::RequeueCause cause,
      const std::string& reason);
  void Trigger() const;
  // Sets a RUNNING job's observed usage from options_.usage.
  void WithLiveUsage(v1::Job* job) const;
  // WithLiveUsage and Job.workspace_path.
  void Decorate(v1::Job* job) const;
  // Fills missing memory estimates of `snapshot`'s jobs in fill_memory_pools
  // (every job if the snapshot asks for it) from the usage history, recomputing their fingerprints; logs each fill
  // (executor_core_usage.cc).
  void FillMemoryEstimates(ReceivedSnapshot& snapshot) const;
  // " Its memory reservation was raised to X after an OOM kill (it asks Y)."
  // for a job with Job.raised_memory_bytes, else "" (executor_core_usage.cc).
  static std::string RaisedSentence(const v1::Job& job);
  // Adds right-sizing advice to a queued job's explanation when its action's
  // history shows its memory estimate far above use (executor_core_usage.cc).
  void AddRightSizing(const v1::JobSpec& spec, v1::Explanation* out) const;

  Store& store_;
  PlanCache& plans_;
  Clock& clock_;
  absl::Mutex& admission_mu_;
  const ExecutorCoreOptions options_;
};

// The whole plan of a snapshot as the API message, with summaries; at most
// `limit` decisions (0 = all); with `ranges` (the snapshot's ranges()),
// each shown decision's ETA range too.
v1::Plan ToProtoPlan(const PlanSnapshot& snapshot, int32_t limit,
                     const PlanRanges* ranges = nullptr);

}  // namespace berth

#endif  // BERTH_SERVER_CORE_EXECUTOR_CORE_H_
