// SwarmRuntime: Stop (end the task through a service update, await its end,
// keep a tombstone), Remove, logs (the tail and the whole log) and the
// (empty) event subscription.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "executor/runtime/swarm/swarm_runtime.h"
#include "nlohmann/json.hpp"
#include "planner/base/status_macros.h"
#include "planner/base/units.h"

namespace berth {

bool SwarmRuntime::TombstoneOf(absl::string_view job_id, Tombstone* out) const {
  absl::MutexLock lock(&mu_);
  auto it = tombstones_.find(std::string(job_id));
  if (it == tombstones_.end()) return false;
  *out = it->second;
  return true;
}

absl::StatusOr<std::string> SwarmRuntime::ServiceLogs(
    const std::string& service_id, size_t max_bytes) {
  return engine_->LogsTail(absl::StrCat("/services/", service_id, "/logs"), max_bytes,
                           absl::StrCat("logs of service ", service_id));
}

absl::StatusOr<std::string> SwarmRuntime::LogsTail(absl::string_view job_id,
                                                   size_t max_bytes) {
  Tombstone tomb;
  if (TombstoneOf(job_id, &tomb)) {
    std::string logs = std::move(tomb.logs);
    if (logs.size() > max_bytes) logs.erase(0, logs.size() - max_bytes);
    return logs;
  }
  ASSIGN_OR_RETURN(std::vector<SwarmService> services, JobServices(job_id));
  if (services.empty()) {
    return absl::NotFoundError(absl::StrCat("no service of job ", job_id));
  }
  return ServiceLogs(services.back().id, max_bytes);
}

absl::Status SwarmRuntime::ReadLogs(absl::string_view job_id,
                                    const LogReadOptions& options, const LogSink& sink) {
  Tombstone tomb;
  if (TombstoneOf(job_id, &tomb)) {
    const std::string note = absl::StrCat(
        "[berth: the job was stopped on Swarm and its container removed with its task; only its "
        "last ",
        options_.stop_logs_bytes, " bytes (stdout and stderr merged), read before the "
        "removal, were kept]\n");
    if (!sink(LogStream::kStdout, note)) return absl::OkStatus();
    if (!tomb.logs.empty()) (void)sink(LogStream::kStdout, tomb.logs);
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(std::vector<SwarmService> services, JobServices(job_id));
  if (services.empty()) {
    return absl::NotFoundError(absl::StrCat("no service of job ", job_id));
  }
  const SwarmService& service = services.back();
  ASSIGN_OR_RETURN(ContainerObservation obs, ObserveService(service));
  if (obs.lost || !obs.held.empty()) {
    return absl::NotFoundError(absl::StrCat("the log of job ", job_id,
                                            " cannot be read: ", obs.error));
  }
  return engine_->StreamLogs(
      absl::StrCat("/services/", service.id, "/logs"), options,
      options.follow ? absl::ZeroDuration() : options_.logs_read_timeout, sink,
      absl::StrCat("logs of service ", service.name));
}

absl::Status SwarmRuntime::AskTaskEnd(const SwarmService& service) {
  if (service.stopped) return absl::OkStatus();  // asked before (same iteration)
  const std::string ctx = absl::StrCat("stop service ", service.name);
  ASSIGN_OR_RETURN(std::string inspected, Get("inspect", "/services/" + service.id, ctx));
  ASSIGN_OR_RETURN(std::string body, StopJobServiceSpec(inspected));
  const nlohmann::json parsed = nlohmann::json::parse(inspected, nullptr, false);
  int64_t version = 0;
  if (parsed.is_object() && parsed.contains("Version") && parsed["Version"].is_object()) {
    version = parsed["Version"].value("Index", int64_t{0});
  }
  if (parsed.is_object() && parsed.contains("Spec")) {
    const nlohmann::json& mode = parsed["Spec"].value("Mode", nlohmann::json::object());
    if (mode.contains("ReplicatedJob") &&
        mode["ReplicatedJob"].value("TotalCompletions", int64_t{-1}) == 0) {
      return absl::OkStatus();  // already asked (a crash or a retry in between)
    }
  }
  HttpRequest req;
  req.method = "POST";
  req.path = absl::StrCat("/services/", service.id, "/update?version=", version);
  req.body = std::move(body);
  // Not retried blindly: a second update with the same version is refused
  // (out of sequence), and the next Stop reads the service again.
  ASSIGN_OR_RETURN(HttpResponse resp, engine_->Call("stop", req, false, ctx));
  return DockerErrorToStatus(0, "", resp.status, resp.body, ctx);
}

absl::Status SwarmRuntime::Stop(absl::string_view job_id, absl::Duration grace) {
  (void)grace;  // Swarm uses the StopGracePeriod fixed at creation.
  Tombstone tomb;
  if (TombstoneOf(job_id, &tomb)) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::vector<SwarmService> services, JobServices(job_id));
  if (services.empty()) {
    return absl::NotFoundError(absl::StrCat("no service of job ", job_id));
  }
  const SwarmService& service = services.back();
  ASSIGN_OR_RETURN(ContainerObservation obs, ObserveService(service));
  if (IsFinished(obs.state)) return absl::OkStatus();  // nothing runs
  // The log tail first: the node's agent removes the container with the task.
  absl::StatusOr<std::string> logs = ServiceLogs(service.id, options_.stop_logs_bytes);
  RETURN_IF_ERROR(AskTaskEnd(service));
  if (!obs.held.empty()) {
    // Its node is lost: the agent ends the task when the node is back (its
    // desired state is "remove"); until then the attempt may run and the job
    // stays held (node_loss.h), never recorded ended.
    return absl::UnavailableError(absl::StrCat(
        "stop of job ", job_id, " asked; it ends when its node is back: ", obs.held));
  }
  // Ended when the engine says so: the task's record reaches a terminal state
  // (read with its exit code), or is deleted -- the task reaper deletes a
  // task whose desired state is "remove" only once its node's agent has
  // reported it ended. Never sooner.
  const absl::Time deadline =
      clock_->Now() + options_.stop_grace + options_.call_timeout + options_.stop_margin;
  std::optional<SwarmTask> ended;
  bool gone = false;
  while (true) {
    ASSIGN_OR_RETURN(std::vector<SwarmTask> tasks, ServiceTasks(service.id));
    const SwarmTask* t = NewestTask(tasks, service.id);
    if (t == nullptr) {
      gone = true;
      break;
    }
    if (IsTerminalTaskState(t->state)) {
      ended = *t;
      break;
    }
    if (clock_->Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "stop of job ", job_id, ": its task (", t->state, ") on node ", t->node_id,
          " has not ended ", FormatHumanDuration(options_.stop_grace + options_.call_timeout +
                                                 options_.stop_margin),
          " after Berth asked; asked again next pass"));
    }
    clock_->SleepFor(options_.stop_poll);
  }
  obs.oom_killed = false;
  if (ended.has_value()) {
    obs.state = ContainerState::kExited;
    obs.exit_code = ended->exit_code;
    obs.finished_at = ended->status_at.value_or(clock_->Now());
  } else {
    (void)gone;
    obs.state = ContainerState::kDead;
    obs.lost = true;  // no exit code to record
    obs.exit_code = 0;
    obs.finished_at = clock_->Now();
    obs.error =
        "stopped by Berth; Swarm deleted the task once its node reported it ended, before "
        "Berth read its exit code";
  }
  Tombstone t;
  t.observation = std::move(obs);
  t.logs = logs.ok() ? *std::move(logs) : "";
  absl::MutexLock lock(&mu_);
  tombstones_[std::string(job_id)] = std::move(t);
  return absl::OkStatus();
}

absl::StatusOr<bool> SwarmRuntime::RunsOnReadyNode(const SwarmService& service) {
  ASSIGN_OR_RETURN(std::vector<SwarmTask> tasks, ServiceTasks(service.id));
  const SwarmTask* t = NewestTask(tasks, service.id);
  if (t == nullptr || IsTerminalTaskState(t->state)) return false;
  // Not placed yet: the scheduler may still place it.
  if (t->node_id.empty()) return true;
  HttpRequest req;
  req.path = "/nodes/" + t->node_id;
  const std::string ctx = absl::StrCat("inspect node ", t->node_id);
  ASSIGN_OR_RETURN(HttpResponse resp, engine_->Call("nodes", req, true, ctx));
  if (resp.status == 404) return false;  // removed from the swarm
  RETURN_IF_ERROR(DockerErrorToStatus(0, "", resp.status, resp.body, ctx));
  ASSIGN_OR_RETURN(NodeInfo node, ParseNode(resp.body));
  return node.state == NodeState::kReady;
}

absl::Status SwarmRuntime::Remove(absl::string_view job_id) {
  ASSIGN_OR_RETURN(std::vector<SwarmService> services, JobServices(job_id));
  bool had_tombstone = false;
  {
    absl::MutexLock lock(&mu_);
    had_tombstone = tombstones_.count(std::string(job_id)) > 0;
  }
  if (services.empty() && !had_tombstone) {
    return absl::NotFoundError(absl::StrCat("no service of job ", job_id));
  }
  std::vector<std::string> still_running;
  for (const SwarmService& s : services) {
    // Docker 20.10 leaves the task of a removed job service running to its
    // end: a service whose task runs on a Ready node is asked to end it and
    // kept until it has. (On a node that is down, the node's agent stops
    // what the manager no longer assigns to it when it is back.)
    ASSIGN_OR_RETURN(bool runs, RunsOnReadyNode(s));
    if (runs) {
      RETURN_IF_ERROR(AskTaskEnd(s));
      still_running.push_back(s.name);
      continue;
    }
    HttpRequest req;
    req.method = "DELETE";
    req.path = "/services/" + s.id;
    const std::string ctx = absl::StrCat("remove service ", s.name);
    ASSIGN_OR_RETURN(HttpResponse resp, engine_->Call("remove", req, true, ctx));
    // A retried remove whose first attempt succeeded sees 404: done.
    if (resp.status != 404) {
      RETURN_IF_ERROR(DockerErrorToStatus(0, "", resp.status, resp.body, ctx));
    }
    absl::MutexLock lock(&mu_);
    listed_services_.erase({s.job_id, s.attempt});
  }
  if (!still_running.empty()) {
    return absl::UnavailableError(absl::StrCat(
        "job ", job_id, ": the task of ", absl::StrJoin(still_running, ", "),
        " still runs; asked to end, removed once it has"));
  }
  absl::MutexLock lock(&mu_);
  tombstones_.erase(std::string(job_id));
  return absl::OkStatus();
}

namespace {
class NoEvents final : public EventSubscription {};
}  // namespace

std::unique_ptr<EventSubscription> SwarmRuntime::SubscribeEvents(
    std::function<void(const RuntimeEvent&)> callback) {
  (void)callback;
  return std::make_unique<NoEvents>();
}

}  // namespace berth
