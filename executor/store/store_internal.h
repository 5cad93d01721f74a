// Event and decision builders used by StoreCore (internal to executor/).
#ifndef BERTH_EXECUTOR_STORE_STORE_INTERNAL_H_
#define BERTH_EXECUTOR_STORE_STORE_INTERNAL_H_

#include <algorithm>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "executor/store/store.h"
#include "executor/store/store_core.h"
#include "executor/store/store_util.h"

namespace berth {

// Appends events to a ChangeSet, assigning the next revisions from its meta.
// Not thread-safe (used under StoreCore's lock).
class EventWriter {
 public:
  // REQUIRES: changes->meta set (its last_event_time is the floor of `now`).
  EventWriter(ChangeSet* changes, absl::Time now)
      : changes_(changes), now_(std::max(now, changes->meta.last_event_time)) {}

  // Assigns the next revision and the time; returns the revision.
  uint64_t Append(berth::v1::Event e) { return AppendEvent(&e); }

  // The time every event of this change set carries: `now`, or the last
  // event's time if that is later (event times never go back).
  absl::Time now() const { return now_; }

  // A JOB_STATE_CHANGED event describing `job` (already in its new state),
  // with `observed` (the run's usage) if given, and its finished_at when it
  // ends a run; sets job->revision.
  void JobChanged(berth::v1::Job* job, berth::v1::JobState previous,
                  const berth::v1::ResourceUsage* observed = nullptr) {
    // One event object for every job of a change set: its strings keep
    // their capacity (a first sync appends a million of these).
    berth::v1::Event& e = scratch_;
    e.Clear();
    e.set_type(berth::v1::EVENT_TYPE_JOB_STATE_CHANGED);
    e.set_job_id(job->spec().id());
    e.set_workspace(job->spec().workspace());
    e.set_previous_state(previous);
    e.set_state(job->state());
    e.set_failure_cause(job->failure_cause());
    e.set_reject_reason(job->reject_reason());
    e.set_exit_code(job->exit_code());
    e.set_has_exit_code(job->has_exit_code());
    e.set_message(job->message());
    if (observed != nullptr) *e.mutable_observed() = *observed;
    const bool was_running = previous == berth::v1::JOB_STATE_ADMITTED ||
                             previous == berth::v1::JOB_STATE_RUNNING;
    if (was_running && job->has_finished_at() && job->state() != berth::v1::JOB_STATE_QUEUED) {
      *e.mutable_finished_at() = job->finished_at();
    }
    job->set_revision(AppendEvent(&e));
  }

  // A JOB_SPEC_UPDATED event (state unchanged); sets job->revision.
  void SpecUpdated(berth::v1::Job* job, std::string message) {
    berth::v1::Event e;
    e.set_type(berth::v1::EVENT_TYPE_JOB_SPEC_UPDATED);
    e.set_job_id(job->spec().id());
    e.set_workspace(job->spec().workspace());
    e.set_previous_state(job->state());
    e.set_state(job->state());
    e.set_message(std::move(message));
    job->set_revision(AppendEvent(&e));
  }

 private:
  uint64_t AppendEvent(berth::v1::Event* e) {
    const uint64_t rev = ++changes_->meta.revision;
    e->set_revision(rev);
    *e->mutable_time() = ToProtoTime(now_);
    changes_->meta.last_event_time = now_;
    changes_->events.Append(*e);
    return rev;
  }

  ChangeSet* changes_;
  absl::Time now_;
  berth::v1::Event scratch_;
};

// The API view of the operator flags in `meta`.
inline berth::v1::ControlState ControlStateOf(const StoreMeta& meta) {
  berth::v1::ControlState cs;
  cs.set_paused(meta.paused);
  cs.set_pause_reason(meta.pause_reason);
  for (const auto& p : meta.pools_in_maintenance) {
    cs.add_pools_in_maintenance(p);
  }
  for (const auto& [pool, reason] : meta.maintenance_reasons) {
    if (!reason.empty()) (*cs.mutable_maintenance_reasons())[pool] = reason;
  }
  return cs;
}

inline Decision MakeDecision(StoreMeta* meta, const std::string& job_id,
                             DecisionKind kind, std::string reason,
                             uint64_t plan_generation, absl::Time now,
                             uint64_t revision,
                             berth::v1::RequeueCause requeue_cause =
                                 berth::v1::REQUEUE_CAUSE_UNSPECIFIED) {
  Decision d;
  d.sequence = ++meta->last_decision_sequence;
  d.job_id = job_id;
  d.kind = kind;
  d.reason = std::move(reason);
  d.plan_generation = plan_generation;
  d.time = now;
  d.revision = revision;
  d.requeue_cause = requeue_cause;
  return d;
}

}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_STORE_INTERNAL_H_
