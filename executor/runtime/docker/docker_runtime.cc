#include "executor/runtime/docker/docker_runtime.h"

#include <curl/curl.h>
#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "executor/runtime/container_names.h"
#include "absl/strings/match.h"
#include "executor/runtime/docker/docker_json.h"
#include "executor/runtime/docker/docker_start_errors.h"
#include "executor/runtime/docker/workspace_dir.h"
#include "executor/runtime/runtime_limits.h"
#include "nlohmann/json.hpp"
#include "planner/base/crash_point.h"
#include "planner/base/status_macros.h"

namespace berth {

using nlohmann::json;

namespace {

bool IsIdLike(absl::string_view s) { return IsValidName(s); }

std::string UrlEncode(absl::string_view s) {
  char* e = curl_easy_escape(nullptr, s.data(), static_cast<int>(s.size()));
  std::string out = e ? e : "";
  curl_free(e);
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<DockerRuntime>> DockerRuntime::Create(
    DockerRuntimeOptions options) {
  if (!IsIdLike(options.instance)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "docker runtime: instance '", options.instance,
        "' must be 1-128 chars of [A-Za-z0-9._-]"));
  }
  // Numeric, range-checked, never uid 0 or gid 0 by any spelling; Docker
  // gets the canonical form.
  absl::StatusOr<ContainerUser> user = ParseContainerUser(options.user);
  if (!user.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("docker runtime: ", user.status().message()));
  }
  options.user = user->ToString();
  if (options.pids_limit <= 0 || options.max_attempts < 1 ||
      options.log_max_files < 1 || options.call_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "docker runtime: pids_limit, max_attempts, log_max_files and "
        "call_timeout must be positive");
  }
  if (options.clock == nullptr) {
    return absl::InvalidArgumentError("docker runtime: clock is null");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<DockerHttp> http,
                   DockerHttp::Create(options.endpoint));
  return std::unique_ptr<DockerRuntime>(
      new DockerRuntime(std::move(options), std::move(http)));
}

DockerRuntime::DockerRuntime(DockerRuntimeOptions options,
                             std::unique_ptr<DockerHttp> http)
    : options_(std::move(options)),
      http_(std::move(http)),
      clock_(options_.clock) {}

void DockerRuntime::Count(const std::string& endpoint, bool error) {
  absl::MutexLock lock(&mu_);
  EndpointCounters& c = counters_[endpoint];
  ++c.calls;
  if (error) ++c.errors;
}

CallCounters DockerRuntime::Counters() const {
  absl::MutexLock lock(&mu_);
  return counters_;
}

absl::Duration DockerRuntime::Backoff(int retry, absl::Duration initial,
                                      absl::Duration max) {
  absl::Duration d = initial;
  for (int i = 1; i < retry && d < max; ++i) d *= 2;
  d = std::min(d, max);
  double factor = 1.0;
  if (options_.backoff_jitter > 0) {
    absl::MutexLock lock(&mu_);
    factor = absl::Uniform(rng_, 1.0 - options_.backoff_jitter,
                           1.0 + options_.backoff_jitter);
  }
  return d * factor;
}

absl::StatusOr<HttpResponse> DockerRuntime::Call(const std::string& endpoint,
                                                 HttpRequest req,
                                                 bool idempotent,
                                                 absl::string_view context,
                                                 absl::Duration extra_timeout) {
  req.timeout = options_.call_timeout + extra_timeout;
  const int attempts = idempotent ? options_.max_attempts : 1;
  absl::Status last;
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    if (attempt > 1) {
      clock_->SleepFor(Backoff(attempt - 1, options_.backoff_initial,
                               options_.backoff_max));
    }
    absl::StatusOr<HttpResponse> resp = http_->Do(req);
    if (resp.ok() && resp->status < 500) {
      Count(endpoint, resp->status >= 400);
      return resp;
    }
    Count(endpoint, true);
    last = resp.ok() ? DockerErrorToStatus(0, "", resp->status, resp->body,
                                           context)
                     : absl::Status(resp.status().code(),
                                    absl::StrCat(context, ": ",
                                                 resp.status().message()));
    if (!IsRetryableDockerError(last)) break;
  }
  return last;
}

absl::StatusOr<ContainerList> DockerRuntime::List() {
  const json filters = {
      {"label", {absl::StrCat("berth.instance=", options_.instance)}}};
  HttpRequest req;
  req.path = absl::StrCat("/containers/json?all=1&filters=",
                          UrlEncode(filters.dump()));
  const std::string ctx = "list containers";
  ASSIGN_OR_RETURN(HttpResponse resp, Call("list", req, true, ctx));
  RETURN_IF_ERROR(DockerErrorToStatus(0, "", resp.status, resp.body, ctx));
  std::set<std::string> legacy;
  ASSIGN_OR_RETURN(ContainerList list,
                   ParseContainerList(resp.body, options_.instance, &legacy));
  {
    // Containers created before names carried the instance keep their old
    // name; Inspect/Stop/Remove/LogsTail address them by it.
    absl::MutexLock lock(&mu_);
    legacy_jobs_ = std::move(legacy);
  }
  return list;
}

std::string DockerRuntime::NameOf(absl::string_view job_id) const {
  {
    absl::MutexLock lock(&mu_);
    if (legacy_jobs_.count(std::string(job_id)) > 0) return LegacyContainerName(job_id);
  }
  return ContainerName(options_.instance, job_id);
}

absl::StatusOr<ContainerObservation> DockerRuntime::InspectOwned(
    absl::string_view job_id, std::string* instance_out) {
  if (!IsIdLike(job_id)) {
    return absl::InvalidArgumentError(absl::StrCat("bad job id '", job_id, "'"));
  }
  const std::string name = NameOf(job_id);
  HttpRequest req;
  req.path = absl::StrCat("/containers/", name, "/json");
  const std::string ctx = absl::StrCat("inspect container ", name);
  ASSIGN_OR_RETURN(HttpResponse resp, Call("inspect", req, true, ctx));
  RETURN_IF_ERROR(DockerErrorToStatus(0, "", resp.status, resp.body, ctx));
  std::string instance;
  ASSIGN_OR_RETURN(ContainerObservation obs,
                   ParseInspect(resp.body, &instance));
  if (instance_out != nullptr) *instance_out = instance;
  if (instance != options_.instance || obs.job_id != job_id) {
    return absl::NotFoundError(absl::StrCat(
        "container ", name, " does not belong to instance ", options_.instance));
  }
  return obs;
}

absl::StatusOr<ContainerObservation> DockerRuntime::Inspect(
    absl::string_view job_id) {
  return InspectOwned(job_id, nullptr);
}

absl::Status DockerRuntime::Stop(absl::string_view job_id,
                                 absl::Duration grace) {
  ASSIGN_OR_RETURN(ContainerObservation obs, InspectOwned(job_id, nullptr));
  const int64_t secs = std::max<int64_t>(0, absl::ToInt64Seconds(absl::Ceil(
                                                grace, absl::Seconds(1))));
  HttpRequest req;
  req.method = "POST";
  req.path = absl::StrCat("/containers/", obs.container_id, "/stop?t=", secs);
  const std::string ctx = absl::StrCat("stop container ", NameOf(job_id));
  ASSIGN_OR_RETURN(HttpResponse resp,
                   Call("stop", req, true, ctx, absl::Seconds(secs)));
  // 204 stopped, 304 already stopped.
  return DockerErrorToStatus(0, "", resp.status, resp.body, ctx);
}

absl::Status DockerRuntime::Remove(absl::string_view job_id) {
  ASSIGN_OR_RETURN(ContainerObservation obs, InspectOwned(job_id, nullptr));
  HttpRequest req;
  req.method = "DELETE";
  req.path = absl::StrCat("/containers/", obs.container_id, "?force=1&v=1");
  const std::string ctx =
      absl::StrCat("remove container ", NameOf(job_id));
  ASSIGN_OR_RETURN(HttpResponse resp, Call("remove", req, true, ctx));
  // A retried remove whose first attempt succeeded sees 404: that is done.
  if (resp.status == 404) return absl::OkStatus();
  return DockerErrorToStatus(0, "", resp.status, resp.body, ctx);
}

absl::StatusOr<HostInfo> DockerRuntime::GetHostInfo() {
  HttpRequest req;
  req.path = "/info";
  ASSIGN_OR_RETURN(HttpResponse resp, Call("info", req, true, "docker info"));
  RETURN_IF_ERROR(DockerErrorToStatus(0, "", resp.status, resp.body, "docker info"));
  return ParseHostInfo(resp.body);
}

absl::Status DockerRuntime::Ping() {
  HttpRequest req;
  req.path = "/_ping";
  // One attempt, with its own short limit: a probe of the engine's health.
  req.timeout = options_.ping_timeout;
  absl::StatusOr<HttpResponse> answered = http_->Do(req);
  Count("ping", !answered.ok() || answered->status >= 400);
  if (!answered.ok()) {
    return absl::Status(answered.status().code(),
                        absl::StrCat("docker ping: ", answered.status().message()));
  }
  const HttpResponse& resp = *answered;
  return DockerErrorToStatus(0, "", resp.status, resp.body, "docker ping");
}

}  // namespace berth
