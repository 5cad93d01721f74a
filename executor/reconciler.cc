#include "executor/reconciler.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "planner/convert/convert.h"
#include "planner/units.h"
#include "tools/base/crash_point.h"
#include "tools/base/log.h"
#include "tools/base/status_macros.h"

namespace berth {

struct Reconciler::Work {
  absl::Time now;
  ContainerList containers;
  // ADMITTED jobs to create/start this pass (new admissions and recovered).
  std::vector<v1::JobSpec> to_start;
  // Jobs whose running container must be stopped (intent recorded).
  std::vector<std::string> to_stop;
  PassStats stats;
};

namespace {

// Runs f(i) for i in [0, n) on at most `parallelism` threads.
template <typename F>
void ParallelFor(size_t n, int parallelism, F f) {
  if (n == 0) return;
  size_t threads = std::min<size_t>(n, std::max(1, parallelism));
  if (threads == 1) {
    for (size_t i = 0; i < n; ++i) f(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (size_t i = next++; i < n; i = next++) f(i);
    });
  }
  for (std::thread& th : pool) th.join();
}

bool IsStale(const absl::Status& s) {
  // Someone else moved the job first (a sync cancelled it, another pass
  // finalised it): the decision is moot, not an error.
  return s.code() == absl::StatusCode::kFailedPrecondition ||
         s.code() == absl::StatusCode::kNotFound;
}

// The terminal (or requeued) transition for an outcome.
TransitionRequest OutcomeTransition(const StoredJob& job, const ExitOutcome& outcome,
                                    bool has_exit) {
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
          planner::FormatBytes(job.job.spec().resources().memory_bytes()));
      break;
    case ExitKind::kTimedOut:
      t.new_state = v1::JOB_STATE_FAILED;
      t.failure_cause = v1::FAILURE_CAUSE_TIMED_OUT;
      t.message = absl::StrCat(
          "stopped by Berth after max_duration ",
          absl::FormatDuration(planner::FromProto(job.job.spec().max_duration())));
      break;
    case ExitKind::kCancelled:
      t.new_state = v1::JOB_STATE_CANCELLED;
      t.message = "cancelled: withdrawn by the job-server; container stopped, logs kept";
      break;
    case ExitKind::kRequeued:
      t.new_state = v1::JOB_STATE_QUEUED;
      t.message = job.stop_intent == StopIntent::kRequeue
                      ? "requeued by an operator (drain or pool maintenance)"
                      : absl::StrCat("requeued: the container engine stopped it (exit ", code,
                                     ") while it was unreachable, e.g. a dockerd restart "
                                     "without live-restore");
      break;
    case ExitKind::kLost:
      t.new_state = v1::JOB_STATE_FAILED;
      t.failure_cause = v1::FAILURE_CAUSE_LOST;
      t.message = "container vanished without Berth observing its exit";
      break;
    case ExitKind::kStartFailed:
      t.new_state = v1::JOB_STATE_FAILED;
      t.failure_cause = v1::FAILURE_CAUSE_START_FAILED;
      t.message = "container could not be started";
      break;
  }
  return t;
}

}  // namespace

Reconciler::Reconciler(Store& store, Runtime& runtime, Clock& clock,
                       PlanCache& plans, ReconcilerOptions options)
    : store_(store),
      runtime_(runtime),
      clock_(clock),
      plans_(plans),
      options_(std::move(options)),
      start_retries_(options_.start_retries) {}

bool Reconciler::runtime_healthy() const {
  absl::MutexLock lock(&mu_);
  return runtime_healthy_;
}

absl::StatusOr<PassStats> Reconciler::RunPass() {
  Work work;
  work.now = clock_.Now();
  absl::StatusOr<ContainerList> list = runtime_.List();
  {
    absl::MutexLock lock(&mu_);
    runtime_healthy_ = list.ok();
  }
  if (!list.ok()) {
    if (!outage_since_.has_value()) outage_since_ = last_ok_;
    // A runtime outage never fails a job: observe nothing, admit nothing.
    Log(LogLevel::kWarning, "runtime unavailable; pass skipped",
        {{"error", list.status().ToString()}});
    // Readers still get current plans: PlanCache::Get plans on demand.
    return work.stats;
  }
  work.stats.runtime_ok = true;
  work.containers = *std::move(list);
  if (outage_since_.has_value()) {
    outage_from_ = *outage_since_;
    outage_to_ = work.now;
    outage_since_.reset();
    Log(LogLevel::kInfo, "runtime reachable again",
        {{"outage_from", absl::FormatTime(outage_from_)}, {"outage_to", absl::FormatTime(outage_to_)}});
  }
  last_ok_ = work.now;

  RETURN_IF_ERROR(Observe(work));
  RETURN_IF_ERROR(Plan(work));
  StartAdmitted(work);
  RETURN_IF_ERROR(StopRequested(work));
  return work.stats;
}

absl::Status Reconciler::Observe(Work& work) {
  absl::flat_hash_set<std::string> seen;
  for (v1::JobState state : {v1::JOB_STATE_ADMITTED, v1::JOB_STATE_RUNNING}) {
    for (const JobRecord& record : store_.JobsInState(state)) {
      StoredJob job = *record;  // few (admitted/running): a copy to update
      const std::string& id = job.job.spec().id();
      seen.insert(id);
      auto it = work.containers.find(id);
      const ContainerSummary* c = it == work.containers.end() ? nullptr : &it->second;

      if (c == nullptr) {
        if (state == v1::JOB_STATE_ADMITTED && job.stop_intent == StopIntent::kNone) {
          work.to_start.push_back(job.job.spec());  // admitted, not yet created
        } else {
          RETURN_IF_ERROR(Finalise(work, job, nullptr));
        }
        continue;
      }
      if (IsFinished(c->state)) {
        RETURN_IF_ERROR(Finalise(work, job, c));
        continue;
      }
      if (c->state == ContainerState::kCreated) {
        // Created but never started (a crash between create and start).
        if (job.stop_intent == StopIntent::kNone) {
          work.to_start.push_back(job.job.spec());  // Start adopts it
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
        absl::StatusOr<StoredJob> moved = store_.Transition(t, work.now);
        if (moved.ok()) {
          ++work.stats.adopted;
          job = *std::move(moved);
        } else if (!IsStale(moved.status())) {
          return moved.status();
        }
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
                                  absl::FormatDuration(planner::FromProto(spec.max_duration())));
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

  // Containers no active job owns: leftovers of finished or requeued jobs
  // (removed after finalising, but Berth may have crashed in between) and
  // orphans (unknown jobs). Stopped if running, then removed.
  for (const auto& [id, c] : work.containers) {
    if (seen.contains(id)) continue;
    absl::StatusOr<StoredJob> job = store_.GetJob(id);
    bool orphan = !job.ok();
    if (!job.ok() && job.status().code() != absl::StatusCode::kNotFound) {
      return job.status();
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

const char kEndedInOutageNote[] =
    "ended while Docker was unreachable: output written after Docker became "
    "unreachable may be missing from the log";

absl::Status Reconciler::Finalise(Work& work, const StoredJob& job,
                                  const ContainerSummary* container) {
  const std::string& id = job.job.spec().id();
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
  std::optional<ExitOutcome> outcome = ClassifyExit(observation, job.stop_intent);
  if (!outcome.has_value()) return absl::OkStatus();  // still running
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

  TransitionRequest t = OutcomeTransition(
      job, *outcome, observation.has_value() && IsFinished(observation->state));
  if (container != nullptr) {
    t.container_id = container->container_id;
    t.logs_tail = std::move(logs);
  }
  if (ended_in_outage && !killed_by_engine) {
    // Docker drops what a container writes after its daemon stops if the
    // container exits before the daemon is back (live-restore keeps running
    // containers, not their last output). Berth cannot tell a stopped daemon
    // from an unreachable one, so it says the log may be incomplete.
    t.message = absl::StrCat(
        t.message.value_or(""), t.message.value_or("").empty() ? "" : "; ",
        kEndedInOutageNote);
  }
  CrashPoint("reconcile.before_finalise");  // observed the exit, not recorded
  absl::StatusOr<StoredJob> done = store_.Transition(t, work.now);
  if (!done.ok()) {
    if (IsStale(done.status())) return absl::OkStatus();
    return done.status();
  }
  CrashPoint("reconcile.after_finalise");  // recorded, container not removed
  ++work.stats.finalised;
  Log(LogLevel::kInfo, "job finished",
      {{"job", id},
       {"state", v1::JobState_Name(t.new_state)},
       {"outcome", std::string(ExitKindName(outcome->kind))},
       {"message", t.message.value_or("")}});
  if (container != nullptr) {
    // The name must be free before a requeued job runs again; a failure here
    // is retried by the leftover sweep of the next pass.
    (void)runtime_.Remove(id);
  }
  return absl::OkStatus();
}

absl::Status Reconciler::Plan(Work& work) {
  absl::MutexLock admission(&admission_mu_);
  // Without a new event nothing can have become admissible (time alone only
  // narrows backfill: a job must end before the reservation), so a tick
  // that changed nothing skips the replan.
  const uint64_t revision = store_.CurrentRevision();
  if (revision == last_planned_revision_) return absl::OkStatus();
  absl::Time started = clock_.Now();
  // Through the cache: readers meanwhile get the previous plan rather than
  // compute this one a second time.
  ASSIGN_OR_RETURN(std::shared_ptr<const PlanSnapshot> snap, plans_.Refresh());
  work.stats.plan_latency = clock_.Now() - started;
  work.stats.planned = true;

  const uint64_t generation = store_.LastAppliedGeneration();
  std::vector<DecisionRequest> admits;
  std::vector<const v1::JobSpec*> admitted_specs;
  for (const planner::Decision& d : snap->result.decisions) {
    const v1::JobSpec& spec = snap->queued_jobs[d.job]->job.spec();
    if (d.verdict == planner::Verdict::kAdmit) {
      DecisionRequest r;
      r.job_id = spec.id();
      r.kind = DecisionKind::kAdmit;
      r.expected_state = v1::JOB_STATE_QUEUED;
      r.reason = absl::StrCat("fits: ", planner::FormatBytes(spec.resources().memory_bytes()),
                              " memory, ", spec.resources().cpu_millis(),
                              " millicores");
      r.plan_generation = generation;
      admits.push_back(std::move(r));
      admitted_specs.push_back(&spec);
    } else if (d.verdict == planner::Verdict::kReject &&
               d.reason == planner::Reason::kDependencyFailed) {
      TransitionRequest t;
      t.job_id = spec.id();
      t.expected_state = v1::JOB_STATE_QUEUED;
      t.new_state = v1::JOB_STATE_FAILED;
      t.failure_cause = v1::FAILURE_CAUSE_DEPENDENCY_FAILED;
      t.message = "a job it depends on did not succeed";
      absl::StatusOr<StoredJob> failed = store_.Transition(t, work.now);
      if (failed.ok()) {
        ++work.stats.dependency_failed;
        work.stats.more_work = true;  // its dependants may fail next
      } else if (!IsStale(failed.status())) {
        return failed.status();
      }
    }
  }
  if (admits.empty()) {
    last_planned_revision_ = snap->revision;
    return absl::OkStatus();
  }
  // Durable (WAL fsync) before any container exists for these jobs.
  absl::StatusOr<std::vector<Decision>> recorded = store_.RecordDecisions(admits, work.now);
  if (!recorded.ok()) {
    if (IsStale(recorded.status())) {
      work.stats.more_work = true;  // the store moved under the plan: re-plan
      return absl::OkStatus();
    }
    return recorded.status();
  }
  CrashPoint("reconcile.after_admit");  // ADMITTED durable, no container yet
  last_planned_revision_ = snap->revision;
  work.stats.admitted += static_cast<int>(admits.size());
  for (const v1::JobSpec* spec : admitted_specs) work.to_start.push_back(*spec);
  return absl::OkStatus();
}

ContainerSpec Reconciler::SpecFor(const v1::JobSpec& spec) const {
  ContainerSpec c;
  c.job_id = spec.id();
  c.workspace = spec.workspace();
  c.action = spec.action();
  c.image = spec.image();
  c.argv.assign(spec.argv().begin(), spec.argv().end());
  for (const auto& [key, value] : spec.env()) c.env.emplace_back(key, value);
  std::sort(c.env.begin(), c.env.end());
  c.cpu_millis = spec.resources().cpu_millis();
  c.memory_bytes = spec.resources().memory_bytes();
  auto net = options_.pool_networks.find(spec.pool().empty() ? "default" : spec.pool());
  if (net != options_.pool_networks.end()) c.network = net->second;
  c.mount_workspace = options_.mount_workspaces;
  return c;
}

void Reconciler::StartAdmitted(Work& work) {
  std::atomic<int> started{0};
  std::atomic<int> failed{0};
  // Jobs waiting out a start backoff are left for a later pass.
  work.to_start.erase(
      std::remove_if(work.to_start.begin(), work.to_start.end(),
                     [&](const v1::JobSpec& s) { return !start_retries_.Due(s.id(), work.now); }),
      work.to_start.end());
  ParallelFor(work.to_start.size(), options_.start_parallelism, [&](size_t i) {
    const v1::JobSpec& spec = work.to_start[i];
    absl::StatusOr<StartResult> result = runtime_.Start(SpecFor(spec));
    TransitionRequest t;
    t.job_id = spec.id();
    t.expected_state = v1::JOB_STATE_ADMITTED;
    std::string exhausted;
    if (!result.ok() && !ClassifyStartError(result.status()).has_value()) {
      exhausted = start_retries_.Failed(spec.id(), result.status(), clock_.Now());
      if (exhausted.empty()) {
        // Transient: stays ADMITTED, retried after its backoff.
        Log(LogLevel::kWarning, "start deferred",
            {{"job", spec.id()}, {"error", result.status().ToString()}});
        return;
      }
    } else {
      start_retries_.Forget(spec.id());
    }
    if (!exhausted.empty()) {
      t.new_state = v1::JOB_STATE_FAILED;
      t.failure_cause = v1::FAILURE_CAUSE_START_FAILED;
      t.message = exhausted;
      ++failed;
      Log(LogLevel::kWarning, "job failed to start",
          {{"job", spec.id()}, {"error", exhausted}});
    } else if (result.ok()) {
      CrashPoint("reconcile.after_start");  // running, RUNNING not persisted
      t.new_state = v1::JOB_STATE_RUNNING;
      t.container_id = result->container_id;
      ++started;
    } else if (ClassifyStartError(result.status()).has_value()) {
      t.new_state = v1::JOB_STATE_FAILED;
      t.failure_cause = v1::FAILURE_CAUSE_START_FAILED;
      t.message = std::string(result.status().message());
      ++failed;
      Log(LogLevel::kWarning, "job failed to start",
          {{"job", spec.id()}, {"error", result.status().ToString()}});
    }
    absl::StatusOr<StoredJob> moved = store_.Transition(t, clock_.Now());
    if (!moved.ok() && !IsStale(moved.status())) {
      // The next pass sees the container and adopts it (-> RUNNING).
      Log(LogLevel::kError, "could not record start",
          {{"job", spec.id()}, {"error", moved.status().ToString()}});
    }
  });
  work.stats.started += started;
  work.stats.start_failed += failed;
}

absl::Status Reconciler::StopRequested(Work& work) {
  work.stats.stop_requests = static_cast<int>(work.to_stop.size());
  if (work.to_stop.empty()) return absl::OkStatus();
  ParallelFor(work.to_stop.size(), std::max(options_.start_parallelism, 8),
              [&](size_t i) {
                absl::Status s = runtime_.Stop(work.to_stop[i], options_.stop_grace);
                if (!s.ok() && s.code() != absl::StatusCode::kNotFound) {
                  Log(LogLevel::kWarning, "stop failed; retried next pass",
                      {{"job", work.to_stop[i]}, {"error", s.ToString()}});
                }
              });
  work.stats.more_work = true;  // finalise the stopped jobs at once
  return absl::OkStatus();
}

}  // namespace berth
