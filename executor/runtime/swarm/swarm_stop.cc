// SwarmRuntime: Stop (remove the service, keep a tombstone), Remove, logs (the
// tail and the whole log) and
// the (empty) event subscription.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/runtime/swarm/swarm_runtime.h"
#include "nlohmann/json.hpp"
#include "planner/base/status_macros.h"

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
        "[berth: the job was stopped on Swarm and its service removed; only its last ",
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
  // The log tail first: it goes with the service.
  absl::StatusOr<std::string> logs = ServiceLogs(service.id, options_.stop_logs_bytes);
  const std::string ctx = absl::StrCat("remove service ", service.name);
  HttpRequest req;
  req.method = "DELETE";
  req.path = "/services/" + service.id;
  ASSIGN_OR_RETURN(HttpResponse resp, engine_->Call("remove", req, true, ctx));
  if (resp.status != 404) {
    RETURN_IF_ERROR(DockerErrorToStatus(0, "", resp.status, resp.body, ctx));
  }
  // Swarm stops the container now (SIGTERM, StopGracePeriod, SIGKILL): wait
  // for it unless its node is gone (then nobody can tell).
  const absl::Time deadline =
      clock_->Now() + options_.stop_grace + options_.call_timeout;
  std::string node = obs.node_id;
  while (!obs.lost && clock_->Now() < deadline) {
    // By name: the service filter no longer resolves a removed service.
    const nlohmann::json filter = {{"name", {service.name}}};
    ASSIGN_OR_RETURN(std::string body,
                     Get("inspect", "/tasks?filters=" + SwarmQueryEscape(filter.dump()), ctx));
    ASSIGN_OR_RETURN(std::vector<SwarmTask> tasks, ParseTaskList(body));
    const SwarmTask* t = NewestTask(tasks, service.id);
    if (t == nullptr || IsTerminalTaskState(t->state)) {
      if (t != nullptr) obs.exit_code = t->exit_code;
      break;
    }
    clock_->SleepFor(options_.stop_poll);
  }
  obs.state = ContainerState::kExited;
  obs.finished_at = clock_->Now();
  if (obs.exit_code == 0) obs.exit_code = 137;  // killed, code unknown
  obs.oom_killed = false;
  Tombstone t;
  t.observation = std::move(obs);
  t.logs = logs.ok() ? *std::move(logs) : "";
  absl::MutexLock lock(&mu_);
  tombstones_[std::string(job_id)] = std::move(t);
  return absl::OkStatus();
}

absl::Status SwarmRuntime::Remove(absl::string_view job_id) {
  bool had_tombstone = false;
  {
    absl::MutexLock lock(&mu_);
    had_tombstone = tombstones_.erase(std::string(job_id)) > 0;
  }
  ASSIGN_OR_RETURN(std::vector<SwarmService> services, JobServices(job_id));
  if (services.empty() && !had_tombstone) {
    return absl::NotFoundError(absl::StrCat("no service of job ", job_id));
  }
  for (const SwarmService& s : services) {
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
    listed_services_.erase(s.name);
  }
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
