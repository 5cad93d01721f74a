// The finalise step of a reconcile pass: record how finished or vanished
// containers ended (exit classified with the persisted stop intent).
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

// The terminal (or requeued) transition for an outcome.
// engine_error: the engine's own words (e.g. a Swarm task's error), added
// to a start failure's message.
TransitionRequest OutcomeTransition(const StoredJob& job, const ExitOutcome& outcome,
                                    bool has_exit, std::string requeue_message,
                                    const std::string& engine_error) {
  TransitionRequest t;
  t.job_id = job.job.spec().id();
  t.expected_state = job.job.state();
  const int code = outcome.exit_code;
  if (has_exit) t.exit_code = code;
  switch (outcome.kind) {
    case ExitKind::kSucceeded:
      t.new_state = v1::JOB_STATE_SUCCEEDED;
      t.message = "exited with code 0";
      break;
    case ExitKind::kNonzeroExit:
      t.new_state = v1::JOB_STATE_FAILED;
      t.failure_cause = v1::FAILURE_CAUSE_NONZERO_EXIT;
      t.message = absl::StrCat("exited with code ", code);
      break;
    case ExitKind::kOomKilled:
      t.new_state = v1::JOB_STATE_FAILED;
      t.failure_cause = v1::FAILURE_CAUSE_OOM_KILLED;
      t.message = absl::StrCat(
          "killed by the kernel for exceeding its memory reservation of ",
          FormatBytes(planner::EffectiveMemoryBytes(job.job)));
      break;
    case ExitKind::kTimedOut:
      t.new_state = v1::JOB_STATE_FAILED;
      t.failure_cause = v1::FAILURE_CAUSE_TIMED_OUT;
      t.message = absl::StrCat(
          "stopped by Berth after max_duration ",
          FormatHumanDuration(planner::FromProto(job.job.spec().max_duration())));
      break;
    case ExitKind::kCancelled:
      t.new_state = v1::JOB_STATE_CANCELLED;
      t.message = "withdrawn by the job-server; container stopped, logs kept";
      break;
    case ExitKind::kRequeued:
      t.new_state = v1::JOB_STATE_QUEUED;
      t.message = std::move(requeue_message);
      break;
    case ExitKind::kLost:
      t.new_state = v1::JOB_STATE_FAILED;
      t.failure_cause = v1::FAILURE_CAUSE_LOST;
      t.message = "container vanished without Berth observing its exit";
      break;
    case ExitKind::kStartFailed:
      t.new_state = v1::JOB_STATE_FAILED;
      t.failure_cause = v1::FAILURE_CAUSE_START_FAILED;
      t.message = engine_error.empty()
                      ? std::string("container could not be started")
                      : absl::StrCat("container could not be started: ", engine_error);
      break;
  }
  return t;
}

}  // namespace

bool Reconciler::RequeuesOom(const v1::JobSpec& spec) const {
  const std::string& pool = spec.pool().empty() ? std::string("default") : spec.pool();
  return options_.requeue_oom_pools.count(pool) > 0 ||
         store_.LastSnapshotPolicy().requeue_oom_once;
}

const char kEndedInOutageNote[] =
    "ended while Docker was unreachable: output written after Docker became "
    "unreachable may be missing from the log";

absl::Status Reconciler::Finalise(Work& work, const StoredJob& job,
                                  const ContainerSummary* container,
                                  const std::optional<ExitHint>& hint) {
  const std::string& id = job.job.spec().id();
  // Its log is being kept off the pass: the pass after that records it.
  if (container != nullptr && KeepingLog(id)) return absl::OkStatus();
  std::optional<ContainerObservation> observation;
  std::string logs;
  if (container != nullptr) {
    absl::StatusOr<ContainerObservation> seen = runtime_.Inspect(id);
    if (seen.ok()) {
      observation = *std::move(seen);
    } else if (seen.status().code() != absl::StatusCode::kNotFound) {
      return absl::OkStatus();  // runtime trouble: try again next pass
    }
    absl::StatusOr<std::string> tail = runtime_.LogsTail(id, options_.logs_tail_bytes);
    if (tail.ok()) logs = *std::move(tail);
  }
  if (observation.has_value() && hint.has_value()) {
    // The engine announced the exit; its record may lag behind its event.
    observation->oom_killed = observation->oom_killed || hint->oom_killed;
    if (!IsFinished(observation->state) && hint->exit_code.has_value()) {
      observation->state = ContainerState::kExited;
      observation->exit_code = *hint->exit_code;
      if (hint->exited_at != absl::InfinitePast()) observation->finished_at = hint->exited_at;
    }
  }
  std::optional<ExitOutcome> outcome = ClassifyExit(observation, job.stop_intent);
  if (!outcome.has_value()) return absl::OkStatus();  // still running
  std::optional<AttemptLogInfo> log_info;
  if (container != nullptr && !CaptureLogs(job, &log_info)) return absl::OkStatus();
  // The container ended while the runtime was unreachable (the last outage).
  const bool ended_in_outage = observation.has_value() &&
                               observation->finished_at.has_value() &&
                               *observation->finished_at >= outage_from_ &&
                               *observation->finished_at <= outage_to_;
  const bool killed_by_engine =
      ended_in_outage && outcome->kind == ExitKind::kNonzeroExit &&
      job.stop_intent == StopIntent::kNone &&
      (outcome->exit_code == 137 || outcome->exit_code == 143);
  if (killed_by_engine) outcome->kind = ExitKind::kRequeued;

  RequeueWhy requeue;
  if (outcome->kind == ExitKind::kRequeued) {
    requeue = WhyRequeued(store_, job, observation.has_value() ? &*observation : nullptr,
                          work.drained_nodes, outcome->exit_code);
  }
  // A lost attempt has no exit code (the engine gave up on it).
  TransitionRequest t = OutcomeTransition(
      job, *outcome,
      observation.has_value() && IsFinished(observation->state) && !observation->lost,
      std::move(requeue.message), observation.has_value() ? observation->error : std::string());
  if (outcome->kind == ExitKind::kRequeued) t.requeue_cause = requeue.cause;
  // Gone without a record: the workspace may still say how it ended (its
  // log kept first, like a captured one).
  if (container == nullptr && outcome->kind == ExitKind::kLost) {
    if (std::optional<RunEvidence> e = EvidenceFor(job.job, nullptr);
        e.has_value() && !RunLogSettled(job.job.spec(), *e)) {
      return absl::OkStatus();  // the pass after the import records it
    }
    ApplyEvidence(job, t, *outcome);
  }
  // The engine's exit time, not when this pass recorded it (after an engine
  // outage that may be a minute later).
  if (observation.has_value() && IsFinished(observation->state) &&
      observation->finished_at.has_value()) {
    t.finished_at = *observation->finished_at;
  }
  if (container != nullptr) {
    t.container_id = container->container_id;
    t.logs_tail = std::move(logs);
  }
  if (log_info.has_value()) {
    t.stdout_log_bytes = log_info->stdout_bytes;
    t.stderr_log_bytes = log_info->stderr_bytes;
    t.stdout_log_cut = LogCutProto(log_info->stdout_cut);
    t.stderr_log_cut = LogCutProto(log_info->stderr_cut);
  }
  if (job.job.has_started_at()) {
    // The run's usage: sampled figures if any, and its wall time (the
    // engine's start and exit when known).
    std::optional<absl::Time> started = planner::FromProto(job.job.started_at());
    absl::Time ended = work.now;
    if (observation.has_value() && observation->started_at.has_value() &&
        observation->finished_at.has_value()) {
      started = observation->started_at;
      ended = *observation->finished_at;
    }
    std::optional<v1::ResourceUsage> used;
    if (options_.usage != nullptr) used = options_.usage->Get(id, started, ended);
    t.observed = used.has_value() ? *std::move(used) : RunTimeOnly(started, ended);
    // The kernel's mark over the container's whole life, read before its
    // removal: exact however short the run. Without it the samples' figure
    // is a lower bound (the run may have grown after the last sample).
    absl::StatusOr<int64_t> mark = container != nullptr
                                       ? runtime_.ExitPeakMemory(id)
                                       : absl::StatusOr<int64_t>(absl::NotFoundError("no container"));
    if (mark.ok()) {
      t.observed->set_peak_memory_bytes(std::max(*mark, t.observed->peak_memory_bytes()));
      t.observed->set_peak_exact(true);
    } else {
      t.observed->set_peak_exact(false);
    }
    if (outcome->kind == ExitKind::kOomKilled) {
      // The kernel killed it at its limit: it used at least that much,
      // whatever the last sample saw before the spike.
      FloorPeakAtOomLimit(planner::EffectiveMemoryBytes(job.job), *t.observed);
    }
  }
  // A job Berth was already stopping (cancelled, timed out, requeued) keeps
  // that fate's classification; only a job left to run is given another go.
  if (outcome->kind == ExitKind::kOomKilled && job.stop_intent == StopIntent::kNone &&
      RequeuesOom(job.job.spec())) {
    absl::StatusOr<v1::Budgets> stored = store_.GetBudgets();
    v1::Budgets budgets = stored.value_or(plans_.default_budgets());
    plans_.ApplyNodes(budgets, stored.ok());
    if (RequeueOomKilled(job.job, budgets, t)) outcome->kind = ExitKind::kRequeued;
  }
  if (ended_in_outage && !killed_by_engine) {
    // Docker drops what a container writes after its daemon stops if the
    // container exits before the daemon is back (live-restore keeps running
    // containers, not their last output). Berth cannot tell a stopped daemon
    // from an unreachable one, so it says the log may be incomplete.
    t.message = absl::StrCat(
        t.message.value_or(""), t.message.value_or("").empty() ? "" : "; ",
        kEndedInOutageNote);
  } else if (observation.has_value() && !observation->log_note.empty() &&
             outcome->kind != ExitKind::kRequeued) {
    // The runtime knows more: e.g. the job's node was lost while it ran.
    t.message = absl::StrCat(t.message.value_or(""),
                             t.message.value_or("").empty() ? "" : "; ", observation->log_note);
  }
  const std::string image_id = observation.has_value() ? observation->image_id : std::string();
  const bool owes_metadata = options_.run_metadata.has_value() &&
                             t.new_state != v1::JOB_STATE_QUEUED &&
                             !job.job.spec().workspace().empty();
  // Noted before the outcome: a berthd killed after it writes it at restart.
  if (owes_metadata) NoteMetadataOwed(id, image_id);
  CrashPoint("reconcile.before_finalise");  // observed the exit, not recorded
  // Recorded now: the capacity is given back now; finished_at is the
  // engine's exit time when it reported one (t.finished_at), else now.
  const absl::Time recorded = clock_.Now();
  absl::StatusOr<StoredJob> done = store_.Transition(t, recorded);
  if (container != nullptr) exit_hints_.Forget(id, container->container_id);
  if (!done.ok()) {
    if (IsStale(done.status())) return absl::OkStatus();
    return done.status();
  }
  if (options_.on_job_finished) {
    options_.on_job_finished(t.new_state, t.failure_cause.value_or(v1::FAILURE_CAUSE_UNSPECIFIED));
  }
  CrashPoint("reconcile.after_finalise");  // recorded, container not removed
  if (owes_metadata) WriteMetadata(done->job, image_id);
  if (options_.usage != nullptr) options_.usage->Forget(id);
  ++work.stats.finalised;
  if (options_.on_finish_latency && observation.has_value() &&
      observation->finished_at.has_value() && !ended_in_outage) {
    options_.on_finish_latency(recorded - *observation->finished_at);
  }
  Log(LogLevel::kInfo, "job finished",
      {{"job", id},
       {"state", v1::JobState_Name(t.new_state)},
       {"outcome", std::string(ExitKindName(outcome->kind))},
       {"message", t.message.value_or("")}});
  if (container != nullptr) {
    // The name must be free before a requeued job runs again: removed after
    // Observe, before this pass plans (in parallel, so that one removal does
    // not delay the next job's finalisation); a failure is retried by the
    // leftover sweep of the next pass.
    work.to_remove.push_back(id);
  }
  return absl::OkStatus();
}

}  // namespace berth
