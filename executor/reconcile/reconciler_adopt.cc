// Reconciling the store with the world as it is (DESIGN.md "Recovery"): a
// run the engine or the job's workspace shows, which the store does not
// know of (a store restored from an older backup, a write that was lost),
// is adopted as the job's attempt -- never started a second time -- and a
// run whose container is gone takes its outcome from the best evidence left.
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/logs/run_metadata_evidence.h"
#include "executor/reconcile/pass_work.h"
#include "executor/reconcile/reconciler.h"
#include "planner/base/log.h"
#include "planner/convert/convert.h"

namespace berth {

namespace {

// The store's time for when `job`'s current attempt was queued: a run that
// ended before it was another (an earlier job of the same id).
absl::Time QueuedAt(const v1::Job& job) {
  return job.has_queued_at() ? planner::FromProto(job.queued_at()) : absl::InfinitePast();
}

ExitKind KindOf(const RunEvidence& e) {
  switch (e.state) {
    case v1::JOB_STATE_SUCCEEDED:
      return ExitKind::kSucceeded;
    case v1::JOB_STATE_CANCELLED:
      return ExitKind::kCancelled;
    default:
      return e.failure_cause == v1::FAILURE_CAUSE_OOM_KILLED ? ExitKind::kOomKilled
                                                              : ExitKind::kNonzeroExit;
  }
}

}  // namespace

std::optional<RunEvidence> Reconciler::EvidenceFor(const v1::Job& job, std::string* why) const {
  if (!options_.run_metadata.has_value()) {
    if (why != nullptr) *why = "no run metadata is written (berthd --write_run_metadata)";
    return std::nullopt;
  }
  absl::StatusOr<RunEvidence> e = ReadRunEvidence(*options_.run_metadata, job.spec());
  if (!e.ok()) {
    if (why != nullptr) *why = std::string(e.status().message());
    return std::nullopt;
  }
  const int attempt = job.requeue_count() + 1;
  if (e->attempt != attempt || !e->finished_at.has_value() || *e->finished_at < QueuedAt(job)) {
    if (why != nullptr) {
      *why = absl::StrCat("run metadata ", e->path, " is of an earlier run (attempt ", e->attempt,
                          ", not ", attempt, ")");
    }
    return std::nullopt;
  }
  return *std::move(e);
}

void Reconciler::ApplyEvidence(const StoredJob& job, TransitionRequest& t,
                               ExitOutcome& outcome) const {
  std::string why;
  std::optional<RunEvidence> e = EvidenceFor(job.job, &why);
  if (e.has_value()) {
    t.new_state = e->state;
    t.failure_cause.reset();
    if (e->state == v1::JOB_STATE_FAILED) t.failure_cause = e->failure_cause;
    t.exit_code = e->exit_code;
    t.message = absl::StrCat(e->message, e->message.empty() ? "" : "; ",
                             "outcome read from its run metadata ", e->path,
                             " (its container was gone when berthd looked)");
    t.finished_at = e->finished_at;
    outcome.kind = KindOf(*e);
    outcome.exit_code = e->exit_code.value_or(0);
    if (options_.log_archive != nullptr && e->attempt >= 1) {
      // Imported before (RunLogSettled), when it could be.
      if (std::optional<AttemptLogInfo> info =
              options_.log_archive->Info(job.job.spec().id(), e->attempt);
          info.has_value()) {
        t.stdout_log_bytes = info->stdout_bytes;
        t.stderr_log_bytes = info->stderr_bytes;
      }
    }
    return;
  }
  const int attempt = job.job.requeue_count() + 1;
  const bool log_kept =
      options_.log_archive != nullptr && options_.log_archive->Has(job.job.spec().id(), attempt);
  t.message = absl::StrCat(
      "container vanished without Berth observing its exit, and nothing says how it ended: "
      "the engine has no record of it; ",
      why, "; ",
      log_kept ? "its log was kept, but a log does not say how a run ended"
               : "no log of the attempt was kept");
}

bool Reconciler::RunLogSettled(const v1::JobSpec& spec, const RunEvidence& e) {
  LogArchive* archive = options_.log_archive;
  const std::string& id = spec.id();
  if (archive == nullptr || e.attempt < 1 || archive->Has(id, e.attempt)) return true;
  // The log written beside the metadata is the run's: kept as if captured,
  // so that ReadJobLog and `berthctl logs` give it. Any failure is final:
  // the outcome is recorded without it (the metadata still says how the run
  // ended).
  const auto import = [this, spec, e]() -> absl::Status {
    absl::Status s = ImportRunLog(*options_.run_metadata, spec, e, *options_.log_archive);
    if (absl::IsAlreadyExists(s)) return absl::OkStatus();
    if (!s.ok()) {
      Log(LogLevel::kWarning, "the run's log beside its metadata was not kept",
          {{"job", spec.id()}, {"error", s.ToString()}});
    }
    return s;
  };
  if (!options_.background_log_capture) {
    (void)import();
    return true;
  }
  {
    absl::MutexLock lock(&logs_mu_);
    auto it = log_results_.find(id);
    if (it != log_results_.end() && it->second.attempt == e.attempt) {
      log_results_.erase(it);
      return true;  // not importable: recorded without its log
    }
  }
  // Read off the pass (a large log takes seconds); an import already queued
  // or running is not submitted twice. Its end triggers the pass that
  // records the outcome.
  if (log_keeper_.Busy(id, log_keeper_.Mark())) return false;
  (void)log_keeper_.Submit(id, [this, id, attempt = e.attempt, import] {
    absl::Status s = import();
    if (s.ok()) return;
    absl::MutexLock lock(&logs_mu_);
    log_results_[id] = LogResult{attempt, std::move(s), clock_.Now()};
  });
  return false;
}

absl::Status Reconciler::FinishFromEvidence(Work& work, const StoredJob& job,
                                            const RunEvidence& e) {
  const std::string& id = job.job.spec().id();
  StoredJob admitted = job;
  if (job.job.state() == v1::JOB_STATE_QUEUED) {
    DecisionRequest d;
    d.job_id = id;
    d.kind = DecisionKind::kAdmit;
    d.expected_state = v1::JOB_STATE_QUEUED;
    d.reason = absl::StrCat("adopted: its run metadata ", e.path,
                            " shows this attempt already ran (the store had not recorded it)");
    d.plan_generation = store_.LastAppliedGeneration();
    d.admitted_at = e.started_at.has_value() ? e.started_at : e.finished_at;
    absl::StatusOr<std::vector<Decision>> recorded = store_.RecordDecisions({d}, work.now);
    if (!recorded.ok()) return IsStale(recorded.status()) ? absl::OkStatus() : recorded.status();
    absl::StatusOr<StoredJob> now_admitted = store_.GetJob(id);
    if (!now_admitted.ok()) return now_admitted.status();
    admitted = *std::move(now_admitted);
  }
  TransitionRequest t;
  t.job_id = id;
  t.expected_state = admitted.job.state();
  ExitOutcome outcome;
  ApplyEvidence(admitted, t, outcome);
  absl::StatusOr<StoredJob> done = store_.Transition(t, clock_.Now());
  if (!done.ok()) return IsStale(done.status()) ? absl::OkStatus() : done.status();
  ++work.stats.adopted;
  ++work.stats.finalised;
  work.stats.more_work = true;
  if (options_.on_job_finished) {
    options_.on_job_finished(t.new_state, t.failure_cause.value_or(v1::FAILURE_CAUSE_UNSPECIFIED));
  }
  Log(LogLevel::kInfo, "job outcome adopted from its run metadata",
      {{"job", id}, {"state", v1::JobState_Name(t.new_state)}, {"path", e.path}});
  return absl::OkStatus();
}

absl::Status Reconciler::AdoptQueued(Work& work, const StoredJob& job, const ContainerSummary& c,
                                     bool* adopted) {
  *adopted = false;
  if (job.job.state() != v1::JOB_STATE_QUEUED || job.stop_intent != StopIntent::kNone) {
    return absl::OkStatus();
  }
  // The run the store would start next is attempt requeue_count (0-based).
  // A container of an earlier attempt is a leftover of a requeue; one
  // without the label (an older berthd's) counts only while it runs, as a
  // requeue's container has always exited.
  const int attempt = job.job.requeue_count();
  if (c.attempt.has_value() ? *c.attempt != attempt : c.state != ContainerState::kRunning) {
    return absl::OkStatus();
  }
  if (c.state != ContainerState::kRunning && !IsFinished(c.state)) {
    return absl::OkStatus();  // created, never started: nothing ran; removed
  }
  const std::string& id = job.job.spec().id();
  std::optional<absl::Time> started = c.started_at;
  if (absl::StatusOr<ContainerObservation> seen = runtime_.Inspect(id); seen.ok()) {
    if (seen->started_at.has_value()) started = seen->started_at;
  } else if (seen.status().code() != absl::StatusCode::kNotFound) {
    return absl::OkStatus();  // engine trouble: decide next pass
  }
  DecisionRequest d;
  d.job_id = id;
  d.kind = DecisionKind::kAdmit;
  d.expected_state = v1::JOB_STATE_QUEUED;
  d.node = c.node_id;
  d.reason = absl::StrCat("adopted: container ", c.container_id.substr(0, 12),
                          " of this instance already ran attempt ", attempt + 1,
                          " (the store had not recorded its start); not started again");
  d.plan_generation = store_.LastAppliedGeneration();
  d.admitted_at = started;
  absl::StatusOr<std::vector<Decision>> recorded = store_.RecordDecisions({d}, work.now);
  if (!recorded.ok()) return IsStale(recorded.status()) ? absl::OkStatus() : recorded.status();
  *adopted = true;
  ++work.stats.adopted;
  work.stats.more_work = true;
  Log(LogLevel::kWarning, "container adopted for a queued job",
      {{"job", id}, {"container", c.container_id}, {"attempt", attempt + 1}});
  absl::StatusOr<StoredJob> admitted = store_.GetJob(id);
  if (!admitted.ok()) return admitted.status();
  if (IsFinished(c.state)) return Finalise(work, *admitted, &c);
  TransitionRequest t;
  t.job_id = id;
  t.expected_state = v1::JOB_STATE_ADMITTED;
  t.new_state = v1::JOB_STATE_RUNNING;
  t.container_id = c.container_id;
  t.started_at = started;
  t.message = d.reason;  // the running job says why it was not started
  absl::StatusOr<StoredJob> moved = store_.Transition(t, work.now);
  if (!moved.ok() && !IsStale(moved.status())) return moved.status();
  if (options_.live_logs != nullptr) options_.live_logs->Follow(id, attempt + 1);
  return absl::OkStatus();
}

}  // namespace berth
