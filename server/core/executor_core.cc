#include "server/core/executor_core.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "planner/convert/convert.h"
#include "planner/convert/rank_proto.h"
#include "planner/convert/workload_state.h"
#include "planner/explain/rank_arithmetic.h"
#include "planner/forecast/eta.h"
#include "planner/explain/explain.h"
#include "server/core/eta_range_proto.h"
#include "server/core/field_mask_paths.h"
#include "server/ingest/job_validation.h"
#include "planner/base/status_macros.h"
#include "server/core/request_limits.h"

namespace berth {

namespace {

// A failure cause for people ("out of memory", not FAILURE_CAUSE_OOM_KILLED).
std::string FailureCauseText(v1::FailureCause cause) {
  switch (cause) {
    case v1::FAILURE_CAUSE_NONZERO_EXIT: return "its command exited with an error";
    case v1::FAILURE_CAUSE_OOM_KILLED: return "killed for using more memory than its limit";
    case v1::FAILURE_CAUSE_TIMED_OUT: return "ran longer than its max_duration";
    case v1::FAILURE_CAUSE_START_FAILED: return "its container could not be started";
    case v1::FAILURE_CAUSE_LOST: return "its container vanished";
    case v1::FAILURE_CAUSE_DEPENDENCY_FAILED: return "a job it depends on did not succeed";
    default: return "cause unknown";
  }
}

std::string StateSentence(const v1::Job& job) {
  auto when = [](const google::protobuf::Timestamp& t) {
    return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", planner::FromProto(t),
                            absl::UTCTimeZone());
  };
  switch (job.state()) {
    case v1::JOB_STATE_ADMITTED:
      return absl::StrCat("Admitted at ", when(job.admitted_at()),
                          "; its container is being created and started.");
    case v1::JOB_STATE_RUNNING:
      return absl::StrCat("Running since ", when(job.started_at()),
                          " in container ", job.container_id().substr(0, 12), ".");
    case v1::JOB_STATE_SUCCEEDED:
      return absl::StrCat("Succeeded at ", when(job.finished_at()), ".");
    case v1::JOB_STATE_FAILED:
      return absl::StrCat("Failed at ", when(job.finished_at()), ": ",
                          FailureCauseText(job.failure_cause()),
                          job.message().empty() ? "" : absl::StrCat(" (", job.message(), ")"),
                          ".");
    case v1::JOB_STATE_CANCELLED:
      return absl::StrCat("Cancelled at ", when(job.finished_at()), ": ",
                          job.message(), ".");
    case v1::JOB_STATE_REJECTED:
      return absl::StrCat("Rejected (", v1::RejectReason_Name(job.reject_reason()),
                          "): ", job.message());
    default:
      return absl::StrCat("In state ", v1::JobState_Name(job.state()), ".");
  }
}

}  // namespace

ExecutorCore::ExecutorCore(Store& store, PlanCache& plans, Clock& clock,
                           absl::Mutex& admission_mu, ExecutorCoreOptions options)
    : store_(store),
      plans_(plans),
      clock_(clock),
      admission_mu_(admission_mu),
      options_(std::move(options)) {}

void ExecutorCore::Trigger() const {
  if (options_.trigger) options_.trigger();
}

absl::StatusOr<v1::Budgets> ExecutorCore::CurrentBudgets(bool* stored) const {
  absl::StatusOr<v1::Budgets> b = store_.GetBudgets();
  if (stored != nullptr) *stored = b.ok();
  if (b.ok()) return b;
  if (b.status().code() == absl::StatusCode::kNotFound) return plans_.default_budgets();
  return b.status();
}

v1::Plan ToProtoPlan(const PlanSnapshot& snap, int32_t limit, const PlanRanges* ranges) {
  v1::Plan plan;
  plan.set_revision(snap.revision);
  *plan.mutable_computed_at() = planner::ToProtoTimestamp(snap.now);
  *plan.mutable_budgets() = snap.budgets;
  *plan.mutable_used() = planner::ToProto(snap.result.used_before);
  *plan.mutable_planned() = planner::ToProto(snap.result.used_after);
  plan.set_paused(snap.control.paused());
  plan.set_pause_reason(snap.control.pause_reason());
  *plan.mutable_pools_in_maintenance() = snap.control.pools_in_maintenance();
  *plan.mutable_maintenance_reasons() = snap.control.maintenance_reasons();
  const size_t n = snap.result.decisions.size();
  plan.set_queued_count(static_cast<int32_t>(n));
  plan.set_admitted_count(static_cast<int32_t>(snap.result.admitted_count));
  size_t shown = limit > 0 ? std::min<size_t>(n, static_cast<size_t>(limit)) : n;
  plan.mutable_decisions()->Reserve(static_cast<int>(shown));
  // Every shown decision's expected start: from the plan's table, the one
  // bounded forecast per plan that GetPlan and ExplainJob share, made as far
  // as the decisions shown need.
  const planner::StartEstimateTable& table = snap.estimates();
  for (size_t i = 0; i < shown; ++i) {
    v1::PlanDecision* d = plan.add_decisions();
    *d = planner::ToProtoDecision(snap.result, snap.result.decisions[i], snap.state,
                                  static_cast<int32_t>(i + 1),
                                  table[i]);
    d->set_summary(planner::DecisionSummary(snap.state, snap.result, i));
    if (ranges != nullptr) {
      if (std::optional<v1::EtaRange> r = ToProtoEtaRange(*ranges, snap.result, i)) {
        *d->mutable_eta_range() = *std::move(r);
      }
    }
  }
  return plan;
}

absl::StatusOr<v1::Plan> ExecutorCore::GetPlan(int32_t limit, bool include_state) {
  if (limit < 0) return absl::InvalidArgumentError("limit: must be >= 0");
  ASSIGN_OR_RETURN(std::shared_ptr<const PlanSnapshot> snap, plans_.Get());
  v1::Plan plan = ToProtoPlan(*snap, limit, &snap->ranges(store_));
  plan.set_last_applied_generation(store_.LastAppliedGeneration());
  for (v1::NodeUse& u : plans_.NodeUsesOf(snap->budgets, *snap)) {
    *plan.add_node_use() = std::move(u);
  }
  if (include_state) {
    int left_out = 0;
    *plan.mutable_state() = planner::WorkloadOfState(
        snap->state, snap->planned_budgets, snap->now,
        absl::StrCat("berthd's plan at store revision ", snap->revision.load()), &left_out);
    if (left_out > 0) {
      plan.mutable_state()->set_description(
          absl::StrCat(plan.state().description(), "; ", left_out,
                       " queued job(s) left out: a dependency failed"));
    }
  }
  return plan;
}

absl::StatusOr<v1::ListJobsResponse> ExecutorCore::ListJobs(
    const v1::ListJobsRequest& request) {
  if (request.page_size() < 0) {
    return absl::InvalidArgumentError("page_size: must be >= 0");
  }
  RETURN_IF_ERROR(CheckLength("workspace", request.workspace(), kMaxNameBytes));
  RETURN_IF_ERROR(CheckLength("pool", request.pool(), kMaxNameBytes));
  RETURN_IF_ERROR(CheckLength("page_token", request.page_token(), kMaxPageTokenBytes));
  JobFilter filter;
  for (int s : request.states()) {
    if (!v1::JobState_IsValid(s) || s == v1::JOB_STATE_UNSPECIFIED) {
      return absl::InvalidArgumentError(absl::StrCat("states: unknown state ", s));
    }
  }
  for (int s : request.states()) filter.states.push_back(static_cast<v1::JobState>(s));
  filter.workspace = request.workspace();
  filter.pool = request.pool();
  filter.page_size = request.page_size();
  filter.page_token = request.page_token();
  ASSIGN_OR_RETURN(JobPage page, store_.ListJobs(filter));
  v1::ListJobsResponse out;
  out.mutable_jobs()->Reserve(static_cast<int>(page.jobs.size()));
  for (StoredJob& j : page.jobs) {
    v1::Job* job = out.add_jobs();
    *job = std::move(j.job);
    Decorate(job);
  }
  out.set_next_page_token(page.next_page_token);
  return out;
}

void ExecutorCore::WithLiveUsage(v1::Job* job) const {
  if (options_.usage == nullptr || job->state() != v1::JOB_STATE_RUNNING) return;
  std::optional<absl::Time> started;
  if (job->has_started_at()) started = planner::FromProto(job->started_at());
  std::optional<v1::ResourceUsage> u =
      options_.usage->Get(job->spec().id(), started, clock_.Now());
  if (u.has_value()) *job->mutable_observed() = *std::move(u);
}

void ExecutorCore::Decorate(v1::Job* job) const {
  WithLiveUsage(job);
  if (!options_.workspaces_root.empty() && !job->spec().workspace().empty()) {
    job->set_workspace_path(absl::StrCat(options_.workspaces_root, "/", job->spec().workspace()));
  }
}

absl::StatusOr<v1::Job> ExecutorCore::GetJob(const std::string& job_id) {
  if (job_id.empty()) return absl::InvalidArgumentError("job_id: required");
  RETURN_IF_ERROR(CheckLength("job_id", job_id, kMaxNameBytes));
  ASSIGN_OR_RETURN(StoredJob job, store_.GetJob(job_id));
  Decorate(&job.job);
  return std::move(job.job);
}

absl::StatusOr<v1::Explanation> ExecutorCore::ExplainJob(const std::string& job_id) {
  return ExplainJobIn(job_id, nullptr);
}

absl::StatusOr<v1::Explanation> ExecutorCore::ExplainJob(const std::string& job_id,
                                                         const PlanSnapshot& plan) {
  return ExplainJobIn(job_id, &plan);
}

absl::StatusOr<v1::Explanation> ExecutorCore::ExplainJobIn(const std::string& job_id,
                                                           const PlanSnapshot* plan) {
  if (job_id.empty()) return absl::InvalidArgumentError("job_id: required");
  RETURN_IF_ERROR(CheckLength("job_id", job_id, kMaxNameBytes));
  ASSIGN_OR_RETURN(StoredJob job, store_.GetJob(job_id));
  v1::Explanation out;
  out.set_job_id(job_id);
  out.set_state(job.job.state());
  if (job.job.state() != v1::JOB_STATE_QUEUED) {
    out.set_summary(absl::StrCat(StateSentence(job.job), RaisedSentence(job.job)));
    std::optional<std::string> held;
    if (options_.held != nullptr && (job.job.state() == v1::JOB_STATE_ADMITTED ||
                                     job.job.state() == v1::JOB_STATE_RUNNING)) {
      held = options_.held->Get(job_id);
    }
    if (held.has_value()) {
      out.set_summary(absl::StrCat(out.summary(), " Held, its node was lost: ", *held, "."));
      out.set_held(*std::move(held));
    }
    out.set_revision(store_.CurrentRevision());
    return out;
  }
  std::shared_ptr<const PlanSnapshot> latest;
  if (plan == nullptr) {
    ASSIGN_OR_RETURN(latest, plans_.Get());
    plan = latest.get();
  }
  const PlanSnapshot* snap = plan;
  out.set_revision(snap->revision);
  const std::optional<uint32_t> k = snap->PositionOf(job_id);
  if (!k.has_value()) {
    // Queued after the plan was read (the next read replans).
    out.set_summary("Queued; not planned yet. Ask again in a moment.");
    return out;
  }
  planner::ExplainOptions options;
  options.max_ahead_ids = options_.max_ahead_ids;
  // The start estimate from the plan's table (one forecast per plan,
  // shared by every ExplainJob and GetPlan).
  planner::Explanation e = planner::Explain(snap->state, snap->planned_budgets, snap->result,
                                            *k, snap->estimates(), options);
  out.set_verdict(static_cast<v1::Verdict>(e.verdict));
  out.set_reason(static_cast<v1::WaitReason>(e.reason));
  out.set_summary(e.summary);
  if (e.shortfall.has_value()) {
    v1::Shortfall* s = out.mutable_shortfall();
    s->set_dimension(static_cast<v1::Dimension>(e.shortfall->dimension));
    s->set_needed(e.shortfall->needed);
    s->set_free(e.shortfall->free);
    s->set_capacity(e.shortfall->capacity);
    s->set_shortfall(e.shortfall->shortfall);
    if (e.on_node) {
      s->set_node(e.short_node);
      s->set_cluster_free(e.cluster_free);
    }
  }
  out.set_node(e.node);
  out.set_queue_position(e.queue_position);
  out.set_jobs_ahead(e.jobs_ahead);
  for (std::string& id : e.ahead_job_ids) out.add_ahead_job_ids(std::move(id));
  for (std::string& id : e.pending_dependencies) out.add_pending_dependencies(std::move(id));
  // The one ETA GetPlan shows too: the plan's forecast.
  const v1::PlanDecision eta = planner::ToProtoDecision(
      snap->result, snap->result.decisions[*k], snap->state, 0, e.projected);
  out.set_eta_kind(eta.eta_kind());
  if (eta.has_estimated_start()) *out.mutable_estimated_start() = eta.estimated_start();
  if (eta.has_not_before()) *out.mutable_not_before() = eta.not_before();
  if (e.first_promised_start != absl::InfiniteFuture()) {
    *out.mutable_first_promised_start() = planner::ToProtoTimestamp(e.first_promised_start);
  }
  // How sure that ETA is, from the durations Berth observed.
  const PlanRanges& ranges = snap->ranges(store_);
  const std::optional<v1::EtaRange> range = ToProtoEtaRange(ranges, snap->result, *k);
  if (range.has_value()) *out.mutable_eta_range() = *range;
  if (range.has_value() || out.has_estimated_start()) {  // no ETA (paused...): nothing to range
    out.set_summary(
        absl::StrCat(out.summary(), EtaRangeSentence(ranges, snap->result, *k, range)));
  }
  if (e.smallest_change.has_value()) {
    v1::Suggestion* s = out.mutable_smallest_change();
    s->set_text(e.smallest_change->text);
    s->set_dimension(static_cast<v1::Dimension>(e.smallest_change->dimension));
    s->set_fits_if_at_most(e.smallest_change->fits_if_at_most);
  }
  // The arithmetic behind its rank, from the ranking's own keys (one
  // ranking per plan, shared by every ExplainJob).
  *out.mutable_rank() = planner::ToProtoRank(
      planner::ExplainRank(snap->state, snap->rank_keys(), snap->result, *k,
                           snap->policy.aging_interval, options.max_ahead_ids));
  out.set_summary(absl::StrCat(out.summary(), RaisedSentence(job.job)));
  // Advice to ask less contradicts a raise the job needed.
  if (job.job.raised_memory_bytes() == 0) AddRightSizing(job.job.spec(), &out);
  return out;
}

ExecutorCore::Revisions ExecutorCore::CurrentRevisions() const {
  return Revisions{store_.OldestRevision(), store_.CurrentRevision()};
}

uint64_t ExecutorCore::LastAppliedGeneration() const {
  return store_.LastAppliedGeneration();
}

uint64_t ExecutorCore::WatchStart(uint64_t from_revision) const {
  if (from_revision != 0) return from_revision;
  // "From the oldest retained": start just before it.
  uint64_t oldest = store_.OldestRevision();
  return oldest > 0 ? oldest - 1 : 0;
}

absl::Status ExecutorCore::CheckWatch(const v1::WatchEventsRequest& request,
                                      WatchResume* resume) const {
  const StoreEpoch epoch = store_.Epoch();
  const uint64_t head = store_.CurrentRevision();
  const uint64_t from = request.from_revision();
  WatchResume r;
  r.epoch = epoch.id;
  r.current_revision = head;
  std::string why;
  if (!request.epoch().empty() && request.epoch() != epoch.id) {
    // Only the direct parent's history is known to be shared up to `since`.
    r.resume_revision = request.epoch() == epoch.parent ? std::min(from, epoch.since) : 0;
    why = absl::StrCat(
        "revision ", from, " of epoch ", request.epoch(), " is not in this store's history: ",
        request.epoch() == epoch.parent
            ? absl::StrCat("the store was restored from a backup of revision ", epoch.since,
                           " and its history since is epoch ", epoch.id)
            : absl::StrCat("the store's history is epoch ", epoch.id,
                           epoch.parent.empty() ? ""
                                                : absl::StrCat(" (restored from epoch ",
                                                               epoch.parent, " at revision ",
                                                               epoch.since, ")")));
  } else if (from > head) {
    const bool same = request.epoch() == epoch.id;
    r.resume_revision = same ? head : (epoch.parent.empty() ? 0 : std::min(from, epoch.since));
    why = absl::StrCat("revision ", from, " is ahead of the current revision ", head,
                       " of epoch ", epoch.id,
                       epoch.parent.empty()
                           ? ""
                           : absl::StrCat(" (the store was restored from a backup of revision ",
                                          epoch.since, ")"));
  } else {
    return absl::OkStatus();
  }
  if (resume != nullptr) *resume = r;
  return absl::FailedPreconditionError(absl::StrCat(
      why, "; revisions are never reused: re-list the jobs, then watch from revision ",
      r.resume_revision, " with epoch ", epoch.id));
}

absl::StatusOr<EventPage> ExecutorCore::ReadEvents(uint64_t after_revision,
                                                   int max_events) const {
  ASSIGN_OR_RETURN(EventPage page, store_.ReadEvents(after_revision, max_events));
  const std::string epoch = store_.Epoch().id;
  for (v1::Event& e : page.events) e.set_epoch(epoch);
  return page;
}

bool ExecutorCore::AwaitRevision(uint64_t after_revision, absl::Duration timeout) const {
  return store_.AwaitRevision(after_revision, timeout);
}

absl::Status ExecutorCore::Watch(uint64_t from_revision,
                                 const std::function<bool(const v1::Event&)>& write,
                                 const std::function<bool()>& cancelled) {
  uint64_t after = WatchStart(from_revision);
  while (!cancelled()) {
    ASSIGN_OR_RETURN(EventPage page, ReadEvents(after, 1000));
    for (const v1::Event& e : page.events) {
      if (!write(e)) return absl::OkStatus();
      after = e.revision();
    }
    if (page.events.empty()) store_.AwaitRevision(after, absl::Milliseconds(500));
  }
  return absl::OkStatus();
}

}  // namespace berth
