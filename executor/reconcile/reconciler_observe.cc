// The observe step of a reconcile pass: match the bulk container list
// against ADMITTED/RUNNING jobs, requeue the jobs of drained nodes, and hand
// what ended to Finalise (reconciler_finalise.cc).
#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "executor/logs/job_log_reader.h"
#include "executor/reconcile/pass_work.h"
#include "executor/reconcile/reconciler.h"
#include "executor/reconcile/requeue_why.h"
#include "executor/usage/oom_requeue.h"
#include "planner/base/crash_point.h"
#include "planner/base/log.h"
#include "planner/base/status_macros.h"
#include "planner/base/units.h"
#include "planner/convert/convert.h"

namespace berth {
namespace {

// A job on a node the operator drained: records a requeue (durable, as
// ExecutorCore's Drain does) so that the usual stop path removes its
// container/service and finalises it QUEUED; the planner places it again on
// a node that accepts jobs. Jobs whose container already ended keep their
// outcome. Sets job.stop_intent when it records the requeue.
absl::Status RequeueIfNodeDrained(
    Store& store, const absl::flat_hash_set<std::string>& drained_nodes,
    absl::Time now, const ContainerSummary* c, StoredJob& job) {
  if (drained_nodes.empty() || job.stop_intent != StopIntent::kNone) return absl::OkStatus();
  if (c == nullptr ? job.job.state() != v1::JOB_STATE_ADMITTED : IsFinished(c->state)) {
    return absl::OkStatus();
  }
  const std::string& node =
      c != nullptr && !c->node_id.empty() ? c->node_id : job.job.node();
  if (node.empty() || !drained_nodes.contains(node)) return absl::OkStatus();
  DecisionRequest d;
  d.job_id = job.job.spec().id();
  d.kind = DecisionKind::kRequeue;
  d.expected_state = job.job.state();
  d.reason = absl::StrCat("its node ", node, kDrainedNext);
  d.requeue_cause = v1::REQUEUE_CAUSE_NODE_DRAINED;
  d.plan_generation = store.LastAppliedGeneration();
  absl::StatusOr<std::vector<Decision>> recorded = store.RecordDecisions({d}, now);
  if (!recorded.ok()) {
    if (IsStale(recorded.status())) return absl::OkStatus();
    return recorded.status();
  }
  job.stop_intent = StopIntent::kRequeue;
  Log(LogLevel::kInfo, "requeuing a job off a drained node",
      {{"job", d.job_id}, {"node", node}});
  return absl::OkStatus();
}

}  // namespace

absl::Status Reconciler::Observe(Work& work) {
  absl::flat_hash_set<std::string> seen;
  for (v1::JobState state : {v1::JOB_STATE_ADMITTED, v1::JOB_STATE_RUNNING}) {
    for (const JobRecord& record : store_.JobsInState(state)) {
      const std::string id(record->id());
      seen.insert(id);
      // Its start is in flight, or finished after the list was taken (which
      // then cannot show its container): the next pass looks at it.
      if (starter_.Busy(id, work.start_mark)) continue;
      StoredJob job = record->Decode();  // few (admitted/running): a copy to update
      auto it = work.containers.find(id);
      const ContainerSummary* c = it == work.containers.end() ? nullptr : &it->second;
      RETURN_IF_ERROR(RequeueIfNodeDrained(store_, work.drained_nodes, work.now, c, job));

      if (c == nullptr) {
        if (state == v1::JOB_STATE_ADMITTED && job.stop_intent == StopIntent::kNone) {
          // Its run may have happened and ended with its container removed
          // (the store restored from before it): never run it twice.
          if (std::optional<RunEvidence> e = EvidenceFor(job.job, nullptr)) {
            // Recorded once its log is kept (the pass after the import).
            if (RunLogSettled(job.job.spec(), *e)) {
              RETURN_IF_ERROR(FinishFromEvidence(work, job, *e));
            }
            continue;
          }
          work.to_start.push_back(StartOf(job.job));  // admitted, not yet created
        } else {
          RETURN_IF_ERROR(Finalise(work, job, nullptr));
        }
        continue;
      }
      // Docker's "die" event comes before its list says "exited".
      std::optional<ExitHint> hint = exit_hints_.Died(id);
      if (hint.has_value() && !hint->Matches(c->container_id)) hint.reset();
      if (IsFinished(c->state) || (hint.has_value() && c->state == ContainerState::kRunning)) {
        RETURN_IF_ERROR(Finalise(work, job, c, hint));
        continue;
      }
      if (c->state == ContainerState::kCreated) {
        // Created but never started (a crash between create and start).
        if (job.stop_intent == StopIntent::kNone) {
          work.to_start.push_back(StartOf(job.job));  // Start adopts it
        } else {
          absl::Status removed = runtime_.Remove(id);
          if (!removed.ok() && removed.code() != absl::StatusCode::kNotFound) continue;
          RETURN_IF_ERROR(Finalise(work, job, nullptr));
        }
        continue;
      }
      // The container runs.
      if (state == v1::JOB_STATE_ADMITTED) {
        TransitionRequest t;
        t.job_id = id;
        t.expected_state = v1::JOB_STATE_ADMITTED;
        t.new_state = v1::JOB_STATE_RUNNING;
        t.container_id = c->container_id;
        t.started_at = c->started_at;  // the engine's, when it knows
        absl::StatusOr<StoredJob> moved = store_.Transition(t, work.now);
        if (moved.ok()) {
          ++work.stats.adopted;
          job = *std::move(moved);
        } else if (!IsStale(moved.status())) {
          return moved.status();
        }
      }
      if (options_.live_logs != nullptr) {
        options_.live_logs->Follow(id, job.job.requeue_count() + 1);
      }
      if (job.stop_intent != StopIntent::kNone) {
        work.to_stop.push_back(id);
        continue;
      }
      const v1::JobSpec& spec = job.job.spec();
      if (spec.has_max_duration() && job.job.has_started_at()) {
        absl::Time deadline = planner::FromProto(job.job.started_at()) +
                              planner::FromProto(spec.max_duration());
        if (work.now >= deadline) {
          DecisionRequest d;
          d.job_id = id;
          d.kind = DecisionKind::kTimeout;
          d.expected_state = job.job.state();
          d.reason = absl::StrCat("ran past max_duration ",
                                  FormatHumanDuration(planner::FromProto(spec.max_duration())));
          d.plan_generation = store_.LastAppliedGeneration();
          absl::StatusOr<std::vector<Decision>> recorded =
              store_.RecordDecisions({d}, work.now);
          if (recorded.ok()) {
            work.to_stop.push_back(id);
          } else if (!IsStale(recorded.status())) {
            return recorded.status();
          }
        }
      }
    }
  }

  if (options_.live_logs != nullptr) {
    // Follows of jobs that no longer run (finalised without their
    // container, requeued, cancelled) are abandoned.
    options_.live_logs->Retain(
        [&](const std::string& id, int) { return seen.contains(id); });
  }

  // Containers no active job owns: leftovers of finished or requeued jobs
  // (removed after finalising, but Berth may have crashed in between) and
  // orphans (unknown jobs). Stopped if running, then removed -- except,
  // on a store just restored, orphans until the first newer sync says
  // whether the job-server still wants their jobs.
  if (orphan_hold_generation_.has_value() &&
      store_.LastAppliedGeneration() != *orphan_hold_generation_) {
    Log(LogLevel::kInfo, "first sync after the restore applied: orphan hold ended",
        {{"generation", static_cast<int64_t>(store_.LastAppliedGeneration())}});
    orphan_hold_generation_.reset();
  }
  for (const auto& [id, c] : work.containers) {
    if (seen.contains(id)) continue;
    absl::StatusOr<StoredJob> job = store_.GetJob(id);
    bool orphan = !job.ok();
    if (!job.ok() && job.status().code() != absl::StatusCode::kNotFound) {
      return job.status();
    }
    if (job.ok()) {
      // A run the store does not know of: adopted, never stopped and
      // started again.
      bool adopted = false;
      RETURN_IF_ERROR(AdoptQueued(work, *job, c, &adopted));
      if (adopted) continue;
    }
    if (orphan && orphan_hold_generation_.has_value()) {
      // A job submitted after the backup may still be wanted: stopping it
      // now would make the next sync run it again.
      ++work.stats.orphans_held;
      continue;
    }
    if (!IsFinished(c.state)) {
      absl::Status stopped = runtime_.Stop(id, options_.stop_grace);
      if (!stopped.ok() && stopped.code() != absl::StatusCode::kNotFound) continue;
    }
    absl::Status removed = runtime_.Remove(id);
    if (removed.ok() && orphan) {
      ++work.stats.orphans_stopped;
      Log(LogLevel::kWarning, "orphan container stopped and removed",
          {{"job", id}, {"container", c.container_id}});
      // Reported in the event stream too; the container is gone either way,
      // so a failed write only loses the report (logged above).
      absl::StatusOr<uint64_t> reported = store_.RecordOrphanStopped(
          id, c.container_id,
          absl::StrCat("container of unknown job '", id, "' stopped and removed"),
          work.now);
      if (!reported.ok()) {
        Log(LogLevel::kWarning, "orphan report not stored",
            {{"job", id}, {"error", std::string(reported.status().message())}});
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace berth
