#include "executor/reconcile/plan_snapshot.h"

#include <algorithm>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "executor/reconcile/kept_plan.h"
#include "planner/convert/convert.h"
#include "planner/base/status_macros.h"

namespace berth {

const planner::Decision* PlanSnapshot::Find(const std::string& job_id) const {
  const std::optional<uint32_t> k = PositionOf(job_id);
  return k.has_value() ? &result.decisions[*k] : nullptr;
}

std::optional<uint32_t> PlanSnapshot::PositionOf(absl::string_view job_id) const {
  const PositionIndex& index = positions();
  auto it = index.find(job_id);
  if (it == index.end()) return std::nullopt;
  return it->second;
}

const PlanSnapshot::PositionIndex& PlanSnapshot::positions() const {
  absl::MutexLock lock(&positions_mu_);
  if (positions_ == nullptr) {
    auto index = std::make_unique<PositionIndex>();
    index->reserve(result.decisions.size());
    for (uint32_t i = 0; i < result.decisions.size(); ++i) {
      index->emplace(state.queued[result.decisions[i].job].id, i);
    }
    positions_ = std::move(index);
  }
  return *positions_;
}

const planner::StartEstimateTable& PlanSnapshot::estimates() const {
  absl::MutexLock lock(&estimates_mu_);
  if (estimates_ == nullptr) {
    estimates_ = std::make_unique<const planner::StartEstimateTable>(state, planned_budgets,
                                                                    policy, result, forecast);
  }
  return *estimates_;
}

const PlanRanges& PlanSnapshot::ranges(const Store& store) const {
  absl::MutexLock lock(&ranges_mu_);
  if (ranges_ == nullptr) {
    ranges_ = BuildPlanRanges(state, queued_jobs, planned_budgets, policy, result, forecast,
                              store.UsageHistories());
  }
  return *ranges_;
}

const planner::RankingKeys& PlanSnapshot::rank_keys() const {
  absl::MutexLock lock(&rank_keys_mu_);
  if (rank_keys_ == nullptr) {
    rank_keys_ = std::make_unique<const planner::RankingKeys>(
        planner::RankKeysOf(state, planned_budgets, policy, result.now));
  }
  return *rank_keys_;
}

const planner::StartEstimateTable* PlanSnapshot::estimates_if_computed() const {
  absl::MutexLock lock(&estimates_mu_);
  return estimates_.get();
}

absl::Status ReadPlannerJobs(const Store& store, absl::Time now, planner::State* state,
                             std::vector<JobRecord>* queued_records) {
  for (v1::JobState s : {v1::JOB_STATE_ADMITTED, v1::JOB_STATE_RUNNING}) {
    for (const JobRecord& job : store.JobsInState(s)) {
      state->running.push_back(RunningJobOf(*job, now));
    }
  }
  std::vector<JobRecord> queued = store.JobsInState(v1::JOB_STATE_QUEUED);
  state->queued.reserve(state->queued.size() + queued.size());
  for (const JobRecord& job : queued) state->queued.push_back(QueuedJobOf(*job));
  if (queued_records != nullptr) *queued_records = std::move(queued);
  return AddDependencyOutcomes(store, state);
}

absl::Status AddDependencyOutcomes(const Store& store, planner::State* state) {
  // The ids depended on are few (most queues have none): collect them, drop
  // those queued or running in one pass over the jobs (lookups in a small
  // table, not inserts of every queued id into a large one), and ask the
  // store about the rest.
  absl::flat_hash_set<absl::string_view> wanted;
  for (const planner::QueuedJob& q : state->queued) {
    for (const std::string& dep : q.depends_on) {
      if (!state->finished.contains(dep)) wanted.insert(dep);
    }
  }
  if (wanted.empty()) return absl::OkStatus();
  for (const planner::QueuedJob& q : state->queued) wanted.erase(q.id);
  for (const planner::RunningJob& r : state->running) wanted.erase(r.id);
  for (absl::string_view dep : wanted) {
    const std::string id(dep);
    absl::StatusOr<StoredJob> d = store.GetJob(id);
    if (!d.ok()) {
      if (d.status().code() == absl::StatusCode::kNotFound) continue;
      return d.status();
    }
    state->finished[id] = d->job.state() == v1::JOB_STATE_SUCCEEDED
                              ? planner::DependencyOutcome::kSucceeded
                              : planner::DependencyOutcome::kFailed;
  }
  return absl::OkStatus();
}

absl::Time PlanningStart(const StoredRecord& job, absl::Time now) {
  return job.active_since() == absl::InfiniteFuture() ? now : job.active_since();
}

planner::QueuedJob QueuedJobOf(const StoredRecord& job) {
  return planner::QueuedJobFrom(job);
}

planner::RunningJob RunningJobOf(const StoredRecord& job, absl::Time now) {
  return planner::RunningJobFrom(job, PlanningStart(job, now));
}

absl::StatusOr<std::shared_ptr<const PlanSnapshot>> BuildPlanSnapshot(
    const Store& store, const v1::Budgets& default_budgets,
    const planner::Policy& policy, absl::Time now, const PlanSnapshot* previous,
    const NodeBudgets* nodes, planner::Planner* planner, const planner::ExecutorModel& executor,
    const PassMemory* pass) {
  auto snap = std::make_shared<PlanSnapshot>();
  snap->forecast.executor = executor;
  // Read the revision first: anything written after it makes the snapshot
  // stale (PlanCache recomputes), never wrongly fresh.
  snap->revision = store.CurrentRevision();
  snap->now = now;
  absl::StatusOr<v1::Budgets> budgets = store.GetBudgets();
  const bool operator_set = budgets.ok();
  if (budgets.ok()) {
    snap->budgets = *std::move(budgets);
  } else if (budgets.status().code() == absl::StatusCode::kNotFound) {
    snap->budgets = default_budgets;
  } else {
    return budgets.status();
  }
  if (nodes != nullptr) {
    snap->nodes_version = nodes->version();
    nodes->ApplyTo(snap->budgets, operator_set);
  }
  snap->control = store.GetControlState();

  planner::State& state = snap->state;
  ApplyControlState(snap->control, state);
  RETURN_IF_ERROR(ReadPlannerJobs(store, now, &state, &snap->queued_jobs));
  if (pass != nullptr) {
    planner::RestoreMemory(snap->revision == pass->revision ? pass->before : pass->after, state);
  } else if (previous != nullptr) {
    planner::CarryReservation(previous->state, previous->result, state);
  } else {
    SeedWorkspaceTurns(store, state);
  }

  snap->planned_budgets = planner::FromProto(snap->budgets);
  snap->policy = policy;
  if (planner != nullptr) {
    planner->Plan(state, snap->planned_budgets, policy, now, snap->result);
  } else {
    snap->result = planner::Plan(state, snap->planned_budgets, policy, now);
  }
  return std::shared_ptr<const PlanSnapshot>(std::move(snap));
}

void ApplyControlState(const v1::ControlState& control, planner::State& state) {
  state.paused = control.paused();
  state.pause_reason = control.pause_reason();
  for (const std::string& pool : control.pools_in_maintenance()) {
    state.pools_in_maintenance.insert(pool);
  }
  for (const auto& [pool, reason] : control.maintenance_reasons()) {
    state.maintenance_reasons[pool] = reason;
  }
}

void SeedWorkspaceTurns(const Store& store, planner::State& state) {
  absl::flat_hash_map<std::string, absl::Time> latest;  // workspace -> last admission
  for (const planner::QueuedJob& q : state.queued) latest.emplace(q.workspace, absl::InfinitePast());
  for (const planner::RunningJob& r : state.running) latest.emplace(r.workspace, absl::InfinitePast());
  if (latest.empty()) return;
  for (v1::JobState s : {v1::JOB_STATE_ADMITTED, v1::JOB_STATE_RUNNING, v1::JOB_STATE_SUCCEEDED,
                         v1::JOB_STATE_FAILED, v1::JOB_STATE_CANCELLED}) {
    for (const JobRecord& job : store.JobsInState(s)) {
      const absl::Time admitted = job->active_since();
      if (admitted == absl::InfiniteFuture()) continue;  // never admitted
      auto it = latest.find(job->workspace());
      if (it != latest.end()) it->second = std::max(it->second, admitted);
    }
  }
  std::vector<std::pair<absl::Time, std::string>> order;
  for (auto& [workspace, at] : latest) {
    if (at != absl::InfinitePast()) order.emplace_back(at, workspace);
  }
  std::sort(order.begin(), order.end());
  state.workspace_turns.clear();
  uint64_t turn = 0;
  for (auto& [at, workspace] : order) state.workspace_turns[std::move(workspace)] = ++turn;
}

PlanCache::PlanCache(const Store& store, Clock& clock,
                     v1::Budgets default_budgets, planner::Policy policy,
                     absl::Duration max_age)
    : store_(store),
      clock_(clock),
      default_budgets_(std::move(default_budgets)),
      policy_(policy),
      max_age_(max_age) {}

PlanCache::~PlanCache() = default;

absl::StatusOr<PlanCache::PassPlan> PlanCache::PlanAdmissions(const PassVisitor& visit) {
  absl::MutexLock lock(&kept_mu_);
  if (kept_ == nullptr) {
    kept_ = std::make_unique<KeptPlan>(store_, default_budgets_, policy_, nodes_);
  }
  const absl::Time now = clock_.Now();
  RETURN_IF_ERROR(kept_->Sync(now));
  PassMemory memory;
  memory.revision = kept_->revision();
  memory.before = planner::MemoryOf(kept_->state());
  kept_->Plan(now, planner::IncrementalPlanner::Detail::kAdmissions, /*carry=*/true,
              pass_result_);
  memory.after = planner::MemoryOf(kept_->state());
  visit(kept_->state(), pass_result_);
  // The head is the prefix's first job: its decision is the whole plan's
  // (an empty prefix: every job waits for a worker slot, so none is blocked).
  head_watch_.Observe(kept_->state(), pass_result_);
  std::shared_ptr<planner::State> running;
  if (nodes_ != nullptr) {
    running = std::make_shared<planner::State>();
    running->running = kept_->state().running;  // as many as run: small
  }
  auto summary = std::make_shared<Summary>();
  summary->revision = kept_->revision();
  summary->budgets = kept_->budgets();
  summary->control = kept_->control();
  summary->used_before = pass_result_.used_before;
  summary->queued_by_pool = kept_->queued_by_pool();
  for (const planner::RunningJob& r : kept_->state().running) ++summary->running_by_pool[r.pool];
  summary->queued = static_cast<int64_t>(kept_->state().queued.size());
  {
    absl::MutexLock l(&mu_);
    pass_memory_ = std::move(memory);
    pass_revision_ = kept_->revision();
    pass_running_ = std::move(running);
    pass_summary_ = std::move(summary);
  }
  return PassPlan{kept_->revision(), kept_->nodes_version()};
}

std::optional<PlanCache::Summary> PlanCache::CurrentSummary() const {
  std::shared_ptr<const PlanSnapshot> latest;
  std::shared_ptr<const Summary> pass;
  {
    absl::MutexLock lock(&mu_);
    latest = latest_;
    pass = pass_summary_;
  }
  if (pass != nullptr && (latest == nullptr || pass->revision >= latest->revision)) return *pass;
  if (latest == nullptr) return std::nullopt;
  Summary s;
  s.revision = latest->revision;
  s.budgets = latest->budgets;
  s.control = latest->control;
  s.used_before = latest->result.used_before;
  for (const planner::QueuedJob& q : latest->state.queued) ++s.queued_by_pool[q.pool];
  for (const planner::RunningJob& r : latest->state.running) ++s.running_by_pool[r.pool];
  s.queued = static_cast<int64_t>(latest->state.queued.size());
  return s;
}

std::vector<v1::NodeUse> PlanCache::NodeUsesNow(const v1::Budgets& budgets) const {
  std::shared_ptr<const PlanSnapshot> latest;
  std::shared_ptr<const planner::State> running;
  {
    absl::MutexLock lock(&mu_);
    latest = latest_;
    if (pass_running_ != nullptr && (latest == nullptr || pass_revision_ >= latest->revision)) {
      running = pass_running_;
    }
  }
  const planner::State empty;
  const planner::State& state =
      running != nullptr ? *running : (latest != nullptr ? latest->state : empty);
  return NodeUses(budgets, state, nodes_ != nullptr ? nodes_->live_jobs() : std::nullopt);
}

void PlanCache::SetExecutorModel(const planner::ExecutorModel& model) {
  absl::MutexLock lock(&mu_);
  executor_ = model;
}

absl::StatusOr<std::shared_ptr<const PlanSnapshot>> PlanCache::Get() {
  auto fresh = [this](const std::shared_ptr<const PlanSnapshot>& s) {
    return s != nullptr && s->revision == store_.CurrentRevision() &&
           s->nodes_version == NodesVersion() && clock_.Now() - s->now < max_age_;
  };
  std::shared_ptr<const PlanSnapshot> stale;
  {
    absl::MutexLock lock(&mu_);
    if (fresh(latest_)) return latest_;
    stale = latest_;
  }
  if (stale != nullptr) {
    // Another caller is planning already: answer with the latest plan (its
    // revision says how fresh it is) rather than queue behind a replan.
    if (!compute_mu_.TryLock()) return stale;
  } else {
    compute_mu_.Lock();
  }
  auto unlock = absl::MakeCleanup([this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { compute_mu_.Unlock(); });
  {
    // Another caller may have computed it while we waited.
    absl::MutexLock lock(&mu_);
    if (fresh(latest_)) return latest_;
  }
  return ComputeLocked();
}

absl::StatusOr<std::shared_ptr<const PlanSnapshot>> PlanCache::Refresh() {
  absl::MutexLock compute(&compute_mu_);
  {
    absl::MutexLock lock(&mu_);
    if (latest_ != nullptr && latest_->revision == store_.CurrentRevision() &&
        latest_->nodes_version == NodesVersion())
      return latest_;
  }
  return ComputeLocked();
}

absl::StatusOr<std::shared_ptr<const PlanSnapshot>> PlanCache::ComputeLocked() {
  // The last plan's reservation holder keeps its reservation.
  const std::shared_ptr<const PlanSnapshot> last = Latest();
  planner::ExecutorModel executor;
  std::optional<PassMemory> pass;
  {
    absl::MutexLock lock(&mu_);
    executor = executor_;
    pass = pass_memory_;
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const PlanSnapshot> snap,
                   BuildPlanSnapshot(store_, default_budgets_, policy_, clock_.Now(),
                                     last.get(), nodes_, &planner_, executor,
                                     pass.has_value() ? &*pass : nullptr));
  std::shared_ptr<const PlanSnapshot> previous;  // freed after unlocking
  absl::MutexLock lock(&mu_);
  ++computations_;
  if (latest_ == nullptr || snap->revision >= latest_->revision ||
      snap->nodes_version != latest_->nodes_version) {
    previous = std::exchange(latest_, snap);
    head_watch_.Observe(snap->state, snap->result);
  }
  return snap;
}

void PlanCache::CarryForward(uint64_t from_revision, uint64_t to_revision) {
  absl::MutexLock lock(&mu_);
  if (latest_ == nullptr || to_revision <= from_revision) return;
  uint64_t expected = from_revision;
  latest_->revision.compare_exchange_strong(expected, to_revision);
}

std::shared_ptr<const PlanSnapshot> PlanCache::Latest() const {
  absl::MutexLock lock(&mu_);
  return latest_;
}

int64_t PlanCache::computations() const {
  absl::MutexLock lock(&mu_);
  return computations_;
}

}  // namespace berth
