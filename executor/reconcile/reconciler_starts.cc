// The reconciler's container starts (reconciler.h): the admitted jobs of a
// pass handed to the start pool, each started, and its outcome recorded
// (RUNNING, still ADMITTED on a transient error, or FAILED).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "executor/reconcile/pass_work.h"
#include "executor/reconcile/reconciler.h"
#include "planner/base/crash_point.h"
#include "planner/base/log.h"
#include "planner/convert/convert.h"

namespace berth {

void Reconciler::set_on_start_done(std::function<void()> on_done) {
  starter_.set_on_done(on_done);
  log_keeper_.set_on_done(std::move(on_done));
}

void Reconciler::AwaitStarts() const {
  starter_.AwaitIdle();
  log_keeper_.AwaitIdle();
}

void Reconciler::StopStarts() {
  starter_.set_on_done(nullptr);
  log_keeper_.set_on_done(nullptr);
  stopping_logs_ = true;
  starter_.Stop();
  log_keeper_.Stop();
  starter_.AwaitIdle();
  log_keeper_.AwaitIdle();
}

ContainerSpec Reconciler::SpecFor(const ToStart& start) const {
  const v1::JobSpec& spec = start.spec;
  ContainerSpec c;
  c.node = start.node;
  c.attempt = start.attempt;
  c.job_id = spec.id();
  c.workspace = spec.workspace();
  c.action = spec.action();
  c.image = spec.image();
  c.argv.assign(spec.argv().begin(), spec.argv().end());
  for (const auto& [key, value] : spec.env()) c.env.emplace_back(key, value);
  std::sort(c.env.begin(), c.env.end());
  c.cpu_millis = spec.resources().cpu_millis();
  c.memory_bytes = start.memory_bytes;
  auto net = options_.pool_networks.find(spec.pool().empty() ? "default" : spec.pool());
  if (net != options_.pool_networks.end()) c.network = net->second;
  c.mount_workspace = options_.mount_workspaces;
  return c;
}

void Reconciler::StartAdmitted(Work& work) {
  // Jobs waiting out a start backoff are left for a later pass.
  std::vector<ToStart*> due;
  for (ToStart& s : work.to_start) {
    if (start_retries_.Due(s.spec.id(), work.now)) due.push_back(&s);
  }
  // This pass's starts and those still in flight start together (for
  // on_start_latency).
  const int starts = static_cast<int>(
      std::min<size_t>(std::max(1, options_.start_parallelism), starter_.in_flight() + due.size()));
  for (ToStart* s : due) {
    const std::string id = s->spec.id();
    // Refused while the job's start is in flight: never two at once.
    (void)starter_.Submit(id, [this, start = std::move(*s), starts] { StartOne(start, starts); });
  }
  if (!options_.background_starts) starter_.AwaitIdle();
}

void Reconciler::StartOne(const ToStart& start, int starts) {
  const v1::JobSpec& spec = start.spec;
  absl::StatusOr<StartResult> result = runtime_.Start(SpecFor(start));
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
    ++start_failed_;
    Log(LogLevel::kWarning, "job failed to start", {{"job", spec.id()}, {"error", exhausted}});
  } else if (result.ok() && !result->running) {
    // Accepted, not yet running (Swarm schedules the task): stays ADMITTED;
    // a later pass sees it run and records RUNNING with its start time.
    return;
  } else if (result.ok()) {
    CrashPoint("reconcile.after_start");  // running, RUNNING not persisted
    // Followed from its first byte (the next pass would do it too).
    if (options_.live_logs != nullptr) options_.live_logs->Follow(spec.id(), start.attempt + 1);
    t.new_state = v1::JOB_STATE_RUNNING;
    t.container_id = result->container_id;
    ++started_;
  } else if (ClassifyStartError(result.status()).has_value()) {
    t.new_state = v1::JOB_STATE_FAILED;
    t.failure_cause = v1::FAILURE_CAUSE_START_FAILED;
    t.message = std::string(result.status().message());
    ++start_failed_;
    Log(LogLevel::kWarning, "job failed to start",
        {{"job", spec.id()}, {"error", result.status().ToString()}});
  }
  absl::StatusOr<StoredJob> moved = store_.Transition(t, clock_.Now());
  if (moved.ok() && t.new_state == v1::JOB_STATE_FAILED && options_.on_job_finished) {
    options_.on_job_finished(t.new_state, t.failure_cause.value_or(v1::FAILURE_CAUSE_UNSPECIFIED));
  }
  if (moved.ok() && t.new_state == v1::JOB_STATE_RUNNING && options_.on_start_latency &&
      moved->job.has_admitted_at() && moved->job.has_started_at()) {
    options_.on_start_latency(planner::FromProto(moved->job.started_at()) -
                                  planner::FromProto(moved->job.admitted_at()),
                              starts);
  }
  if (!moved.ok() && !IsStale(moved.status())) {
    // The next pass sees the container and adopts it (-> RUNNING).
    Log(LogLevel::kError, "could not record start",
        {{"job", spec.id()}, {"error", moved.status().ToString()}});
  }
}

}  // namespace berth
