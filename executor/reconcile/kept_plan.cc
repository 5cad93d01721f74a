#include "executor/reconcile/kept_plan.h"

#include <utility>
#include <vector>

#include "executor/reconcile/plan_snapshot.h"
#include "planner/base/status_macros.h"
#include "planner/convert/convert.h"

namespace berth {
namespace {

// Events read per store call.
constexpr int kEventPage = 10000;

planner::DependencyOutcome OutcomeOf(v1::JobState state) {
  return state == v1::JOB_STATE_SUCCEEDED ? planner::DependencyOutcome::kSucceeded
                                          : planner::DependencyOutcome::kFailed;
}

bool IsRunning(const planner::State& state, const std::string& id) {
  for (const planner::RunningJob& r : state.running) {
    if (r.id == id) return true;
  }
  return false;
}

}  // namespace

KeptPlan::KeptPlan(const Store& store, v1::Budgets default_budgets, planner::Policy policy,
                   const NodeBudgets* nodes)
    : store_(store),
      default_budgets_(std::move(default_budgets)),
      policy_(std::move(policy)),
      nodes_(nodes),
      planner_(std::make_unique<planner::IncrementalPlanner>()) {}

KeptPlan::~KeptPlan() = default;

absl::Status KeptPlan::ReadBudgets() {
  absl::StatusOr<v1::Budgets> budgets = store_.GetBudgets();
  const bool operator_set = budgets.ok();
  if (budgets.ok()) {
    budgets_ = *std::move(budgets);
  } else if (budgets.status().code() == absl::StatusCode::kNotFound) {
    budgets_ = default_budgets_;
  } else {
    return budgets.status();
  }
  nodes_version_ = 0;
  if (nodes_ != nullptr) {
    nodes_version_ = nodes_->version();
    nodes_->ApplyTo(budgets_, operator_set);
  }
  planned_budgets_ = planner::FromProto(budgets_);
  control_ = store_.GetControlState();
  return absl::OkStatus();
}

absl::Status KeptPlan::Sync(absl::Time now) {
  // The revision first: whatever is read after it is at least as new.
  const uint64_t revision = store_.CurrentRevision();
  RETURN_IF_ERROR(ReadBudgets());
  if (!built_ || revision < revision_) return ReadAll(revision, now);

  absl::flat_hash_set<std::string> touched;
  uint64_t after = revision_;
  while (after < revision) {
    absl::StatusOr<EventPage> page = store_.ReadEvents(after, kEventPage);
    if (!page.ok()) {
      // Trimmed since the last read: what changed is no longer known.
      if (page.status().code() == absl::StatusCode::kOutOfRange) return ReadAll(revision, now);
      return page.status();
    }
    if (page->events.empty()) break;
    for (const v1::Event& e : page->events) {
      if (e.revision() > revision) break;
      after = e.revision();
      switch (e.type()) {
        case v1::EVENT_TYPE_JOB_STATE_CHANGED:
        case v1::EVENT_TYPE_JOB_SPEC_UPDATED:
          touched.insert(e.job_id());
          break;
        case v1::EVENT_TYPE_SNAPSHOT_APPLIED:
        case v1::EVENT_TYPE_BUDGETS_CHANGED:  // budgets and control are read
        case v1::EVENT_TYPE_PAUSED:           // every time
        case v1::EVENT_TYPE_RESUMED:
        case v1::EVENT_TYPE_POOL_MAINTENANCE_CHANGED:
        case v1::EVENT_TYPE_ORPHAN_STOPPED:  // change no job
        case v1::EVENT_TYPE_STRAY_TASK:
          break;
        default:
          return ReadAll(revision, now);  // a change this reader cannot place
      }
    }
    // Reading afresh is cheaper than updating most of the queue.
    if (touched.size() > state().queued.size() + 1024) return ReadAll(revision, now);
    if (page->events.back().revision() > revision) break;
  }
  if (absl::Status s = Apply(touched, now); !s.ok()) {
    built_ = false;  // half applied: read afresh next time
    return s;
  }
  ApplyControls();
  RedateUndated(now);
  PruneFinished();
  revision_ = revision;
  return absl::OkStatus();
}

absl::Status KeptPlan::ReadAll(uint64_t revision, absl::Time now) {
  planner::State fresh;
  RETURN_IF_ERROR(ReadPlannerJobs(store_, now, &fresh, nullptr));
  if (built_) {
    // The memory of the plans made so far outlives a fresh read.
    planner::RestoreMemory(planner::MemoryOf(state()), fresh);
  } else {
    SeedWorkspaceTurns(store_, fresh);
  }
  auto next = std::make_unique<planner::IncrementalPlanner>();
  next->SetControls(fresh);
  for (const auto& [id, outcome] : fresh.finished) next->SetFinished(id, outcome);
  undated_.clear();
  for (planner::RunningJob& r : fresh.running) {
    next->AddRunning(std::move(r));
  }
  for (v1::JobState s : {v1::JOB_STATE_ADMITTED, v1::JOB_STATE_RUNNING}) {
    store_.VisitJobsInState(s, [this](const JobRecord& job) {
      if (job->active_since() == absl::InfiniteFuture()) undated_.emplace(job->id());
    });
  }
  queued_by_pool_.clear();
  for (const planner::QueuedJob& q : fresh.queued) ++queued_by_pool_[q.pool];
  // At once, sorted the rankings' way: the store lists them by id.
  next->EnqueueAll(std::move(fresh.queued));
  planner_ = std::move(next);
  control_applied_.clear();
  ApplyControls();
  revision_ = revision;
  built_ = true;
  ++full_reads_;
  return absl::OkStatus();
}

absl::Status KeptPlan::Apply(const absl::flat_hash_set<std::string>& touched,
                             absl::Time now) {
  if (touched.empty()) return absl::OkStatus();
  planner::IncrementalPlanner& p = *planner_;
  // Every job named leaves wherever the state had it...
  std::vector<std::string> deps_left;  // dependencies of jobs that left the queue
  for (const std::string& id : touched) {
    for (int64_t k = p.QueuedIndexOf(id); k >= 0; k = p.QueuedIndexOf(id)) {
      const planner::QueuedJob& q = p.state().queued[static_cast<size_t>(k)];
      for (const std::string& d : q.depends_on) deps_left.push_back(d);
      if (--queued_by_pool_[q.pool] == 0) queued_by_pool_.erase(q.pool);
      p.Dequeue(static_cast<size_t>(k));
    }
    while (p.RemoveRunning(id)) {
    }
    undated_.erase(id);
    if (p.state().finished.contains(id)) p.ForgetFinished(id);
  }
  // ...and comes back where its record now is.
  std::vector<std::pair<std::string, planner::DependencyOutcome>> ended;
  std::vector<std::string> arrived;
  for (const std::string& id : touched) {
    absl::StatusOr<StoredJob> job = store_.GetJob(id);
    if (!job.ok()) {
      if (job.status().code() == absl::StatusCode::kNotFound) continue;  // compacted
      return job.status();
    }
    ++jobs_updated_;
    const v1::JobState state = job->job.state();
    if (state == v1::JOB_STATE_QUEUED) {
      const StoredRecord record(*job);
      planner::QueuedJob q = QueuedJobOf(record);
      ++queued_by_pool_[q.pool];
      p.Enqueue(std::move(q));
      if (!record.depends_on().empty()) arrived.push_back(id);
    } else if (state == v1::JOB_STATE_ADMITTED || state == v1::JOB_STATE_RUNNING) {
      const StoredRecord record(*job);
      p.AddRunning(RunningJobOf(record, now));
      if (record.active_since() == absl::InfiniteFuture()) undated_.insert(id);
    } else if (IsTerminal(state)) {
      ended.emplace_back(id, OutcomeOf(state));
    }
  }
  // The outcomes queued jobs look at: of jobs that ended, and of the
  // dependencies of jobs that arrived.
  for (const auto& [id, outcome] : ended) {
    if (p.HasQueuedDependants(id)) p.SetFinished(id, outcome);
  }
  for (const std::string& id : arrived) RETURN_IF_ERROR(AddOutcomesOfDependencies(id));
  for (const std::string& d : deps_left) {
    if (!p.HasQueuedDependants(d) && p.state().finished.contains(d)) p.ForgetFinished(d);
  }
  return absl::OkStatus();
}

absl::Status KeptPlan::AddOutcomesOfDependencies(const std::string& id) {
  planner::IncrementalPlanner& p = *planner_;
  const int64_t k = p.QueuedIndexOf(id);
  if (k < 0) return absl::OkStatus();
  const std::vector<std::string> deps = p.state().queued[static_cast<size_t>(k)].depends_on;
  for (const std::string& d : deps) {
    if (p.QueuedIndexOf(d) >= 0 || IsRunning(p.state(), d) || p.state().finished.contains(d))
      continue;
    absl::StatusOr<StoredJob> dep = store_.GetJob(d);
    if (!dep.ok()) {
      if (dep.status().code() == absl::StatusCode::kNotFound) continue;  // unknown: unmet
      return dep.status();
    }
    // Not terminal: a change after the revision read; its event updates it.
    if (IsTerminal(dep->job.state())) p.SetFinished(d, OutcomeOf(dep->job.state()));
  }
  return absl::OkStatus();
}

void KeptPlan::ApplyControls() {
  std::string serialized = control_.SerializeAsString();
  if (serialized == control_applied_) return;
  planner::State controls;
  planner::RestoreMemory(planner::MemoryOf(state()), controls);
  ApplyControlState(control_, controls);
  planner_->SetControls(controls);
  control_applied_ = std::move(serialized);
}

void KeptPlan::RedateUndated(absl::Time now) {
  for (const std::string& id : undated_) {
    for (const planner::RunningJob& r : state().running) {
      if (r.id != id) continue;
      planner::RunningJob dated = r;
      dated.started_at = now;
      planner_->RemoveRunning(id);
      planner_->AddRunning(std::move(dated));
      break;
    }
  }
}

void KeptPlan::PruneFinished() {
  std::vector<std::string> gone;
  for (const auto& [id, outcome] : state().finished) {
    if (!planner_->HasQueuedDependants(id) || !store_.HasJob(id)) gone.push_back(id);
  }
  for (const std::string& id : gone) planner_->ForgetFinished(id);
}

void KeptPlan::Plan(absl::Time now, planner::IncrementalPlanner::Detail detail, bool carry,
                    planner::PlanResult& out) {
  planner_->Plan(planned_budgets_, policy_, now, detail, out);
  if (carry) planner_->Carry(out);
}

}  // namespace berth
