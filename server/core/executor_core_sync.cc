// ExecutorCore's snapshot path: the sync filter, validation (Prepare), Sync
// and DryRun. The other RPCs are in executor_core.cc.
#include "server/core/executor_core.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "planner/base/crash_point.h"
#include "planner/convert/convert.h"
#include "planner/base/status_macros.h"
#include "server/ingest/job_validation.h"
#include "server/ingest/stored_spec_filter.h"

namespace berth {

namespace {

// A job-server snapshot of 100k jobs takes ~100 ms to validate: the early
// generation check spares that for a stale or repeated generation.
absl::Status CheckGeneration(const Store& store, uint64_t generation) {
  uint64_t last = store.LastAppliedGeneration();
  if (generation < last) {
    return absl::FailedPreconditionError(absl::StrCat(
        "snapshot generation ", generation,
        " is older than the last applied generation ", last,
        "; send a generation > ", last, " (or ", last,
        " again with the same content, which changes nothing)"));
  }
  return absl::OkStatus();
}

}  // namespace

struct ExecutorCore::Prepared {
  SnapshotRequest request;
  v1::Budgets budgets;
  // Rejections of jobs whose id cannot be stored (empty or over 128 bytes):
  // listed in the response only.
  std::vector<v1::JobRejection> unstored;
};

namespace {

void AddUnstored(std::vector<v1::JobRejection> unstored, v1::SyncSnapshotResponse* r) {
  if (unstored.empty()) return;
  r->set_rejected(r->rejected() + static_cast<int32_t>(unstored.size()));
  for (v1::JobRejection& j : unstored) *r->add_rejections() = std::move(j);
}

}  // namespace

absl::StatusOr<ExecutorCore::SyncSetup> ExecutorCore::BeginSync() const {
  SyncSetup setup;
  bool stored = false;
  ASSIGN_OR_RETURN(setup.budgets, CurrentBudgets(&stored));
  plans_.ApplyNodes(setup.budgets, stored);  // multi-node: the runtime's current nodes
  ValidationConfig& config = setup.validation;
  config.image_allowed = options_.image_allowed;
  config.image_missing = options_.image_missing;
  config.workspace_exists = options_.workspace_exists;
  for (const auto& [pool, unused] : setup.budgets.pools()) config.known_pools.insert(pool);
  config.memory_bytes = setup.budgets.memory_bytes();
  config.cpu_millis = setup.budgets.cpu_millis();
  config.host_cpu_millis = options_.engine.cpu_millis;
  config.nodes.assign(setup.budgets.nodes().begin(), setup.budgets.nodes().end());
  return setup;
}

std::unique_ptr<SpecFilter> ExecutorCore::NewSyncFilter(const SyncSetup& setup) const {
  return std::make_unique<StoredSpecFilter>(store_, setup.validation);
}

absl::StatusOr<ExecutorCore::Prepared> ExecutorCore::Prepare(
    ReceivedSnapshot snapshot, const SyncSetup& setup, bool dry_run) {
  Prepared p;
  p.budgets = setup.budgets;
  const ValidationConfig& config = setup.validation;
  if (!options_.fill_memory_pools.empty() || snapshot.fill_memory_from_history) {
    FillMemoryEstimates(snapshot);
  }
  // Fingerprints computed while the stream was read, if the caller has them.
  const bool fingerprinted = snapshot.fingerprints.size() == snapshot.jobs.size();
  // The id index SnapshotAssembler built as the stream arrived; a snapshot
  // built without one (empty while it has jobs) gets one from ValidateJobs,
  // or a dependency on a job of the same snapshot would read as unknown.
  const JobIdIndex* index =
      snapshot.index.empty() && !snapshot.jobs.empty() ? nullptr : &snapshot.index;
  ValidatedJobs v = ValidateJobs(
      std::move(snapshot.jobs), config,
      [this](const std::string& id) { return store_.HasJob(id); }, index);
  p.request.generation = snapshot.generation;
  p.request.digest = snapshot.digest;
  p.request.jobs = std::move(v.accepted);
  // Valid as they arrived (StoredSpecFilter); the index viewed their ids.
  p.request.unchanged = std::move(snapshot.unchanged);
  if (fingerprinted) {
    p.request.fingerprints.reserve(v.accepted_from.size());
    for (size_t from : v.accepted_from) {
      p.request.fingerprints.push_back(snapshot.fingerprints[from]);
    }
  }
  p.request.rejected.reserve(v.rejected.size());
  for (size_t i = 0; i < v.rejected.size(); ++i) {
    const std::string& id = v.rejected[i].id();
    if (id.empty() || id.size() > kMaxStoredIdBytes) {
      p.unstored.push_back(std::move(v.rejections[i]));
      continue;
    }
    p.request.rejected.push_back(
        RejectedJob{std::move(v.rejected[i]), std::move(v.rejections[i])});
  }
  p.request.options.allow_mass_cancel = snapshot.allow_mass_cancel;
  p.request.requeue_oom_once = snapshot.requeue_oom_once;
  p.request.options.max_cancel_fraction = options_.max_cancel_fraction;
  p.request.options.mass_cancel_min_jobs = options_.mass_cancel_min_jobs;
  p.request.dry_run = dry_run;
  return p;
}

absl::StatusOr<v1::SyncSnapshotResponse> ExecutorCore::Sync(
    ReceivedSnapshot snapshot) {
  ASSIGN_OR_RETURN(SyncSetup setup, BeginSync());
  return Sync(std::move(snapshot), setup);
}

absl::StatusOr<v1::SyncSnapshotResponse> ExecutorCore::Sync(
    ReceivedSnapshot snapshot, const SyncSetup& setup) {
  RETURN_IF_ERROR(CheckGeneration(store_, snapshot.generation));
  if (snapshot.generation == store_.LastAppliedGeneration()) {
    // A re-send: the store compares its digest with the applied one
    // (FAILED_PRECONDITION if the content differs) without validating again.
    SnapshotRequest resend;
    resend.generation = snapshot.generation;
    resend.digest = snapshot.digest;
    resend.dry_run = true;
    ASSIGN_OR_RETURN(SnapshotResult r, store_.ApplySnapshot(resend, clock_.Now()));
    if (r.response.already_applied()) return std::move(r.response);
    // Another sync applied a newer generation meanwhile: the full path
    // answers (FAILED_PRECONDITION for an older one).
  }
  ASSIGN_OR_RETURN(Prepared p, Prepare(std::move(snapshot), setup, /*dry_run=*/false));
  absl::StatusOr<SnapshotResult> result;
  {
    absl::MutexLock lock(&admission_mu_);
    CrashPoint("sync.before_apply");  // stream received, nothing written
    // p.request is not read again: its specs move into the store's records.
    result = store_.ApplySnapshot(std::move(p.request), clock_.Now());
    CrashPoint("sync.after_apply");  // written, not acknowledged
    // A sync that wrote no job changed nothing a plan reads. It writes no
    // event either (the store writes SNAPSHOT_APPLIED only with a change),
    // so the revision stays and the cached plan with it; the carry-forward
    // is kept for any write of this kind that does advance the revision (no
    // 1M replan after an unchanged re-sync). Under admission_mu_, so the
    // reconciler's next pass already finds the plan at the new revision.
    if (result.ok() && result->job_writes == 0 && !result->response.already_applied()) {
      plans_.CarryForward(result->revision_before, result->response.revision());
    }
  }
  if (!result.ok()) return result.status();
  Trigger();
  AddUnstored(std::move(p.unstored), &result->response);
  return std::move(result->response);
}

absl::StatusOr<v1::DryRunResponse> ExecutorCore::DryRun(ReceivedSnapshot snapshot) {
  if (!snapshot.unchanged.empty()) {
    return absl::InvalidArgumentError(
        "a dry run needs every spec; this snapshot was read with a SpecFilter");
  }
  RETURN_IF_ERROR(CheckGeneration(store_, snapshot.generation));
  ASSIGN_OR_RETURN(SyncSetup setup, BeginSync());
  ASSIGN_OR_RETURN(Prepared p, Prepare(std::move(snapshot), setup, /*dry_run=*/true));
  ASSIGN_OR_RETURN(SnapshotResult result, store_.ApplySnapshot(p.request, clock_.Now()));
  if (!result.response.already_applied()) {
    AddUnstored(std::move(p.unstored), &result.response);
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const PlanSnapshot> current, plans_.Get());

  // The state the snapshot would leave: its accepted jobs that are queued now
  // or new replace the queue; running jobs stay (cancelled ones are stopped
  // soon after, but hold their resources until then).
  auto next = std::make_shared<PlanSnapshot>();
  next->revision = current->revision.load();
  next->now = current->now;
  next->budgets = current->budgets;
  next->control = current->control;
  next->state.running = current->state.running;
  next->state.paused = current->state.paused;
  next->state.pause_reason = current->state.pause_reason;
  next->state.pools_in_maintenance = current->state.pools_in_maintenance;
  next->state.maintenance_reasons = current->state.maintenance_reasons;
  next->state.finished = current->state.finished;
  if (!result.response.already_applied()) {
    for (v1::JobSpec& spec : p.request.jobs) {
      const std::optional<uint32_t> queued_now = current->PositionOf(spec.id());
      if (!queued_now.has_value() && store_.HasJob(spec.id())) {
        continue;  // active/terminal
      }
      StoredJob job;
      job.job.set_state(v1::JOB_STATE_QUEUED);
      if (queued_now.has_value()) {  // a raise survives a sync
        const StoredRecord& was = *current->queued_jobs[current->result.decisions[*queued_now].job];
        job.job.set_raised_memory_bytes(was.raised_memory_bytes());
      }
      *job.job.mutable_spec() = std::move(spec);
      auto record = std::make_shared<const StoredRecord>(job);
      next->state.queued.push_back(QueuedJobOf(*record));
      next->queued_jobs.push_back(std::move(record));
    }
    RETURN_IF_ERROR(AddDependencyOutcomes(store_, &next->state));
  } else {
    next->state.queued = current->state.queued;
    next->queued_jobs = current->queued_jobs;
  }
  // As the next real plan would (plan_snapshot.cc): the current plan's
  // reservation holder, fair turns and aging's top priority carry over.
  planner::CarryReservation(current->state, current->result, next->state);
  next->result = planner::Plan(next->state, planner::FromProto(next->budgets),
                               plans_.policy(), next->now);
  v1::DryRunResponse out;
  *out.mutable_sync() = std::move(result.response);
  *out.mutable_plan() = ToProtoPlan(*next, 0);
  return out;
}

}  // namespace berth
