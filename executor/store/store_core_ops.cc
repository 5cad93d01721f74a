// StoreCore: decisions, transitions and meta (retention: store_core_compact.cc).
#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "executor/store/attempt_history.h"
#include "executor/store/store_core.h"
#include "executor/store/store_internal.h"
#include "executor/store/store_util.h"
#include "planner/base/status_macros.h"

namespace berth {

using berth::v1::JobState;

namespace {

// A new attempt (admission): a requeued job's exit code was its killed
// attempt's (e.g. 143), not this one's; its ADMITTED and RUNNING events must
// not carry it.
void ClearAttemptExit(v1::Job& job) {
  job.set_exit_code(0);
  job.set_has_exit_code(false);
}


bool LegalEdge(JobState from, JobState to) {
  switch (from) {
    case v1::JOB_STATE_QUEUED:
      return to == v1::JOB_STATE_ADMITTED || to == v1::JOB_STATE_CANCELLED ||
             to == v1::JOB_STATE_FAILED || to == v1::JOB_STATE_REJECTED;
    case v1::JOB_STATE_ADMITTED:
      return to == v1::JOB_STATE_RUNNING || to == v1::JOB_STATE_QUEUED ||
             to == v1::JOB_STATE_SUCCEEDED || to == v1::JOB_STATE_FAILED ||
             to == v1::JOB_STATE_CANCELLED;
    case v1::JOB_STATE_RUNNING:
      return to == v1::JOB_STATE_QUEUED || to == v1::JOB_STATE_SUCCEEDED ||
             to == v1::JOB_STATE_FAILED || to == v1::JOB_STATE_CANCELLED;
    default:
      return false;
  }
}

bool IsActive(JobState s) {
  return s == v1::JOB_STATE_ADMITTED || s == v1::JOB_STATE_RUNNING;
}

absl::Status Stale(const std::string& id, JobState actual, JobState expected) {
  return absl::FailedPreconditionError(
      absl::StrFormat("job '%s' is %s, not %s (stale)", id,
                      v1::JobState_Name(actual), v1::JobState_Name(expected)));
}

}  // namespace

absl::StatusOr<StoredJob> StoreCore::JobInState(const std::string& id,
                                               JobState expected) const {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) {
    return absl::NotFoundError(absl::StrCat("job '", id, "' not found"));
  }
  if (it->second.state != expected) return Stale(id, it->second.state, expected);
  return it->second.stored->Decode();
}

absl::StatusOr<std::vector<Decision>> StoreCore::RecordDecisions(
    const std::vector<DecisionRequest>& decisions, absl::Time now) {
  if (decisions.empty()) {
    return absl::InvalidArgumentError("no decisions to record");
  }
  absl::MutexLock write(&write_mu_);
  RETURN_IF_ERROR(WaitLoaded());  // writes wait for a background load
  ChangeSet c;
  c.sync = true;  // always: the reconciler acts only on durable decisions
  absl::flat_hash_set<std::string> seen;
  std::vector<Decision> out;
  {
    absl::ReaderMutexLock lock(&mu_);
    c.meta = meta_;
    EventWriter ev(&c, now);
    for (const DecisionRequest& d : decisions) {
      if (!seen.insert(d.job_id).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("job '", d.job_id, "' appears twice in one call"));
      }
      ASSIGN_OR_RETURN(StoredJob sj, JobInState(d.job_id, d.expected_state));
      const JobState state = d.expected_state;
      v1::Job& job = sj.job;
      uint64_t revision = 0;
      auto wrong_state = [&]() {
        return absl::FailedPreconditionError(absl::StrFormat(
            "cannot %s job '%s' in state %s", DecisionKindName(d.kind), d.job_id,
            v1::JobState_Name(state)));
      };
      switch (d.kind) {
        case DecisionKind::kAdmit:
          if (state != v1::JOB_STATE_QUEUED) return wrong_state();
          job.set_state(v1::JOB_STATE_ADMITTED);
          job.set_message(d.reason);
          job.set_node(d.node);
          job.set_attempt(job.requeue_count() + 1);
          // The ADMITTED event's own time: never before an event already
          // recorded (such as the finish that freed the memory it takes).
          // An adopted run keeps the time it was admitted before the restore.
          *job.mutable_admitted_at() = ToProtoTime(
              d.admitted_at.has_value() ? std::min(*d.admitted_at, ev.now()) : ev.now());
          ClearAttemptExit(job);
          ev.JobChanged(&job, state);
          revision = job.revision();
          break;
        case DecisionKind::kCancel:
          if (state == v1::JOB_STATE_QUEUED) {
            job.set_state(v1::JOB_STATE_CANCELLED);
            job.set_message(d.reason);
            *job.mutable_finished_at() = ToProtoTime(now);
            ev.JobChanged(&job, state);
            revision = job.revision();
          } else if (IsActive(state)) {
            sj.stop_intent = StopIntent::kCancel;
          } else {
            return wrong_state();
          }
          break;
        case DecisionKind::kRequeue:
          if (!IsActive(state)) return wrong_state();
          sj.stop_intent = StopIntent::kRequeue;
          break;
        case DecisionKind::kTimeout:
          if (state != v1::JOB_STATE_RUNNING) return wrong_state();
          sj.stop_intent = StopIntent::kTimeout;
          break;
        case DecisionKind::kReject:
          if (state != v1::JOB_STATE_QUEUED) return wrong_state();
          job.set_state(v1::JOB_STATE_REJECTED);
          job.set_reject_reason(d.reject_reason);
          job.set_message(d.reason);
          *job.mutable_finished_at() = ToProtoTime(now);
          ev.JobChanged(&job, state);
          revision = job.revision();
          break;
        default:
          return absl::InvalidArgumentError("unknown decision kind");
      }
      c.decisions.push_back(MakeDecision(
          &c.meta, d.job_id, d.kind, d.reason, d.plan_generation, now, revision,
          d.kind == DecisionKind::kRequeue ? d.requeue_cause
                                           : v1::REQUEUE_CAUSE_UNSPECIFIED));
      out.push_back(c.decisions.back());
      c.Put(sj);
    }
  }
  RETURN_IF_ERROR(Commit(std::move(c)));
  return out;
}

absl::StatusOr<StoredJob> StoreCore::Transition(const TransitionRequest& r,
                                                absl::Time now) {
  if (!LegalEdge(r.expected_state, r.new_state)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("illegal transition %s -> %s for job '%s'",
                        v1::JobState_Name(r.expected_state),
                        v1::JobState_Name(r.new_state), r.job_id));
  }
  const bool oom_requeue = r.raised_memory_bytes.has_value();
  if ((oom_requeue || r.requeue_reason) && r.new_state != v1::JOB_STATE_QUEUED) {
    return absl::InvalidArgumentError(absl::StrCat(
        "job '", r.job_id, "': a raised memory or requeue decision needs new state QUEUED"));
  }
  if (oom_requeue && (*r.raised_memory_bytes <= 0 || !r.requeue_reason)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "job '", r.job_id, "': a raised memory needs a requeue reason and must be > 0"));
  }
  absl::MutexLock write(&write_mu_);
  RETURN_IF_ERROR(WaitLoaded());  // writes wait for a background load
  ChangeSet c;
  c.sync = sync_writes_ || r.requeue_reason.has_value();  // decisions are durable
  StoredJob sj;
  {
    absl::ReaderMutexLock lock(&mu_);
    ASSIGN_OR_RETURN(sj, JobInState(r.job_id, r.expected_state));
    c.meta = meta_;
    // An OOM-killed run requeued with more memory is a failed run at its limit.
    const v1::JobState run_state = oom_requeue ? v1::JOB_STATE_FAILED : r.new_state;
    if (r.observed && CountsAsRun(run_state, *r.observed)) {
      AddUsageRun(sj.job, run_state,
                  oom_requeue ? v1::FAILURE_CAUSE_OOM_KILLED
                              : r.failure_cause.value_or(v1::FAILURE_CAUSE_UNSPECIFIED),
                  *r.observed, now, &c);
    }
  }
  const JobState state = sj.job.state();
  EventWriter ev(&c, now);
  v1::Job& job = sj.job;
  job.set_state(r.new_state);
  // When the run ended: the engine's time when given, within the run.
  absl::Time ended = now;
  if (r.finished_at.has_value() && IsActive(state)) {
    ended = std::min(*r.finished_at, now);
    if (job.has_started_at()) {
      ended = std::max(ended, FromProtoTime(job.started_at()));
    } else if (job.has_admitted_at()) {
      ended = std::max(ended, FromProtoTime(job.admitted_at()));
    }
  }
  if (IsActive(state) && !IsActive(r.new_state)) {
    sj.stop_intent = StopIntent::kNone;
    AppendEndedAttempt(r, ended, job);
  }
  switch (r.new_state) {
    case v1::JOB_STATE_ADMITTED:
      job.set_attempt(job.requeue_count() + 1);
      *job.mutable_admitted_at() = ToProtoTime(now);
      ClearAttemptExit(job);
      break;
    case v1::JOB_STATE_RUNNING: {
      absl::Time started = r.started_at.value_or(now);
      if (started > now) started = now;
      if (job.has_admitted_at()) {
        started = std::max(started, FromProtoTime(job.admitted_at()));
      }
      *job.mutable_started_at() = ToProtoTime(started);
      break;
    }
    case v1::JOB_STATE_QUEUED:  // requeued: a fresh attempt later
      job.set_requeue_count(job.requeue_count() + 1);
      *job.mutable_queued_at() = ToProtoTime(now);
      job.clear_admitted_at();
      job.clear_started_at();
      job.clear_container_id();
      job.clear_node();
      break;
    default:  // terminal
      *job.mutable_finished_at() = ToProtoTime(ended);
      break;
  }
  if (r.failure_cause) job.set_failure_cause(*r.failure_cause);
  if (r.reject_reason) job.set_reject_reason(*r.reject_reason);
  if (r.exit_code) {
    job.set_exit_code(*r.exit_code);
    job.set_has_exit_code(true);
  }
  job.set_message(r.message.value_or(""));
  if (r.container_id) job.set_container_id(*r.container_id);
  if (r.logs_tail) job.set_logs_tail(*r.logs_tail);
  if (r.observed) *job.mutable_observed() = *r.observed;
  if (oom_requeue) job.set_raised_memory_bytes(*r.raised_memory_bytes);
  // The run's usage goes with the event that ends the run.
  ev.JobChanged(&job, state, r.observed ? &*r.observed : nullptr);
  if (r.requeue_reason) {
    c.decisions.push_back(MakeDecision(
        &c.meta, r.job_id, DecisionKind::kRequeue, *r.requeue_reason,
        c.meta.last_generation, now, job.revision(),
        r.requeue_cause.value_or(v1::REQUEUE_CAUSE_UNSPECIFIED)));
  }
  c.Put(sj);
  RETURN_IF_ERROR(Commit(std::move(c)));
  return sj;
}

absl::StatusOr<uint64_t> StoreCore::SetBudgets(const v1::Budgets& budgets,
                                               absl::Time now) {
  absl::MutexLock write(&write_mu_);
  RETURN_IF_ERROR(WaitLoaded());  // writes wait for a background load
  ChangeSet c;
  c.sync = sync_writes_;
  c.meta = MetaForWrite();
  c.meta.budgets = budgets;
  v1::Event e;
  e.set_type(v1::EVENT_TYPE_BUDGETS_CHANGED);
  *e.mutable_budgets() = budgets;
  const uint64_t rev = EventWriter(&c, now).Append(std::move(e));
  RETURN_IF_ERROR(Commit(std::move(c)));
  return rev;
}

absl::StatusOr<uint64_t> StoreCore::RecordOrphanStopped(
    const std::string& job_id, const std::string& container,
    const std::string& message, absl::Time now) {
  return RecordContainerEvent(v1::EVENT_TYPE_ORPHAN_STOPPED, job_id, container, message, now);
}

absl::StatusOr<uint64_t> StoreCore::RecordStrayTask(
    const std::string& job_id, const std::string& container,
    const std::string& message, absl::Time now) {
  return RecordContainerEvent(v1::EVENT_TYPE_STRAY_TASK, job_id, container, message, now);
}

absl::StatusOr<uint64_t> StoreCore::RecordContainerEvent(
    v1::EventType type, const std::string& job_id, const std::string& container,
    const std::string& message, absl::Time now) {
  if (container.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(v1::EventType_Name(type), " event: empty container name"));
  }
  absl::MutexLock write(&write_mu_);
  RETURN_IF_ERROR(WaitLoaded());  // writes wait for a background load
  ChangeSet c;
  c.sync = sync_writes_;
  c.meta = MetaForWrite();
  v1::Event e;
  e.set_type(type);
  e.set_job_id(job_id);
  e.set_container(container);
  e.set_message(message);
  const uint64_t rev = EventWriter(&c, now).Append(std::move(e));
  RETURN_IF_ERROR(Commit(std::move(c)));
  return rev;
}

absl::StatusOr<v1::ControlState> StoreCore::SetPaused(bool paused,
                                                      const std::string& reason,
                                                      absl::Time now) {
  absl::MutexLock write(&write_mu_);
  RETURN_IF_ERROR(WaitLoaded());  // writes wait for a background load
  ChangeSet c;
  c.sync = sync_writes_;
  c.meta = MetaForWrite();
  // A second Pause with another reason replaces the reason (a new PAUSED
  // event says so); the same state again changes nothing.
  if (c.meta.paused == paused && (!paused || c.meta.pause_reason == reason)) {
    return ControlStateOf(c.meta);
  }
  c.meta.paused = paused;
  c.meta.pause_reason = paused ? reason : "";
  v1::Event e;
  e.set_type(paused ? v1::EVENT_TYPE_PAUSED : v1::EVENT_TYPE_RESUMED);
  e.set_message(reason);
  EventWriter(&c, now).Append(std::move(e));
  v1::ControlState after = ControlStateOf(c.meta);
  RETURN_IF_ERROR(Commit(std::move(c)));
  return after;
}

absl::StatusOr<v1::ControlState> StoreCore::SetPoolMaintenance(
    const std::string& pool, bool in_maintenance, const std::string& reason,
    absl::Time now) {
  if (pool.empty()) return absl::InvalidArgumentError("empty pool name");
  absl::MutexLock write(&write_mu_);
  RETURN_IF_ERROR(WaitLoaded());  // writes wait for a background load
  ChangeSet c;
  c.sync = sync_writes_;
  c.meta = MetaForWrite();
  // A second SetPoolMaintenance with another reason replaces the reason (a
  // new event says so); the same state again changes nothing.
  const bool was = c.meta.pools_in_maintenance.count(pool) > 0;
  const auto old_reason = c.meta.maintenance_reasons.find(pool);
  const bool same_reason = old_reason == c.meta.maintenance_reasons.end()
                               ? reason.empty()
                               : old_reason->second == reason;
  if (was == in_maintenance && (!in_maintenance || same_reason)) {
    return ControlStateOf(c.meta);
  }
  if (in_maintenance) {
    c.meta.pools_in_maintenance.insert(pool);
    if (reason.empty()) {
      c.meta.maintenance_reasons.erase(pool);
    } else {
      c.meta.maintenance_reasons[pool] = reason;
    }
  } else {
    c.meta.pools_in_maintenance.erase(pool);
    c.meta.maintenance_reasons.erase(pool);
  }
  v1::Event e;
  e.set_type(v1::EVENT_TYPE_POOL_MAINTENANCE_CHANGED);
  e.set_pool(pool);
  e.set_in_maintenance(in_maintenance);
  e.set_message(reason);
  EventWriter(&c, now).Append(std::move(e));
  v1::ControlState after = ControlStateOf(c.meta);
  RETURN_IF_ERROR(Commit(std::move(c)));
  return after;
}

}  // namespace berth
