#include "executor/runtime/docker/docker_runtime.h"

#include <curl/curl.h>
#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

std::string ContainerName(absl::string_view job_id) {
  return absl::StrCat("berth-", job_id);
}

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

absl::Status DockerRuntime::CheckImageAllowed(const std::string& image) const {
  // Patterns match only a valid reference: "berth-test/../evil:1" or
  // "berth-test/" never reach the glob.
  if (std::optional<SpecProblem> p = CheckImageReference(image)) {
    return absl::InvalidArgumentError(p->message);
  }
  for (const std::string& pattern : options_.image_allow_list) {
    if (fnmatch(pattern.c_str(), image.c_str(), 0) == 0) {
      return absl::OkStatus();
    }
  }
  return absl::PermissionDeniedError(absl::StrCat(
      "image '", image, "' is not in the image allow-list (",
      options_.image_allow_list.empty()
          ? std::string("empty")
          : absl::StrJoin(options_.image_allow_list, ", "),
      ")"));
}

absl::Status DockerRuntime::ValidateSpec(const ContainerSpec& spec) const {
  // The limits ingest checks too (executor/runtime_limits.h).
  if (std::optional<SpecProblem> p = CheckContainerSpec(spec)) {
    return absl::InvalidArgumentError(absl::StrCat(
        p->field, ": ", p->message));
  }
  if (spec.mount_workspace && options_.workspaces_root.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "workspace mount requested but no "
        "workspaces root is configured"));
  }
  return CheckImageAllowed(spec.image);
}

std::string DockerRuntime::BuildCreateBody(const ContainerSpec& spec) const {
  json env = json::array();
  for (const auto& [name, value] : spec.env) env.push_back(name + "=" + value);
  json host = {
      {"NetworkMode", spec.network.empty() ? "none" : spec.network},
      {"CapDrop", {"ALL"}},
      {"SecurityOpt", {"no-new-privileges"}},
      {"PidsLimit", options_.pids_limit},
      {"Memory", spec.memory_bytes},
      {"MemoryReservation", spec.memory_bytes},
      {"MemorySwap", spec.memory_bytes},  // = Memory: no swap
      {"NanoCpus", spec.cpu_millis * 1'000'000},
      {"Init", true},
      {"ReadonlyRootfs", options_.readonly_rootfs},
      {"RestartPolicy", {{"Name", "no"}}},
      {"AutoRemove", false},
      {"LogConfig",
       {{"Type", "json-file"},
        {"Config",
         {{"max-size", options_.log_max_size},
          {"max-file", std::to_string(options_.log_max_files)}}}}},
  };
  if (options_.readonly_rootfs) {
    host["Tmpfs"] = {
        {"/tmp", absl::StrCat("rw,nosuid,nodev,size=", options_.tmp_size)}};
  }
  if (spec.mount_workspace) {
    host["Binds"] = {absl::StrCat(options_.workspaces_root, "/", spec.workspace,
                                  ":/workspace:rw")};
  }
  json body = {
      {"Image", spec.image},
      {"User", options_.user},
      {"Env", env},
      {"Labels",
       {{"berth.job", spec.job_id},
        {"berth.workspace", spec.workspace},
        {"berth.action", spec.action},
        {"berth.instance", options_.instance}}},
      {"HostConfig", host},
      {"AttachStdin", false},
      {"AttachStdout", false},
      {"AttachStderr", false},
      {"Tty", false},
      {"OpenStdin", false},
  };
  if (!spec.argv.empty()) body["Cmd"] = spec.argv;
  return body.dump();
}

absl::StatusOr<StartResult> DockerRuntime::Start(const ContainerSpec& spec) {
  // Everything is checked before the first engine call.
  RETURN_IF_ERROR(ValidateSpec(spec));
  if (spec.mount_workspace) {
    // The job's user may write its workspace; nobody else on the host may.
    ASSIGN_OR_RETURN(ContainerUser user, ParseContainerUser(options_.user));
    absl::Status prepared =
        PrepareWorkspaceDir(options_.workspaces_root, spec.workspace, user.uid, user.gid);
    if (!prepared.ok()) {
      return absl::FailedPreconditionError(
          std::string(prepared.message()));
    }
  }
  const std::string name = ContainerName(spec.job_id);
  HttpRequest req;
  req.method = "POST";
  req.path = absl::StrCat("/containers/create?name=", name);
  req.body = BuildCreateBody(spec);
  const std::string ctx = absl::StrCat("create container ", name);
  absl::StatusOr<HttpResponse> created = Call("create", req, true, ctx);
  if (!created.ok()) return ClassifyDockerStartError(created.status());
  HttpResponse resp = *std::move(created);

  StartResult result;
  for (int attempt = 1;; ++attempt) {
    if (resp.status == 201) {
      ASSIGN_OR_RETURN(result.container_id, ParseCreateResponse(resp.body));
      break;
    }
    if (resp.status == 404) {
      return absl::NotFoundError(absl::StrCat(
          "image '", spec.image,
          "' is not present on the Docker host (Berth never pulls images): ",
          DockerErrorToStatus(0, "", resp.status, resp.body, ctx).message()));
    }
    if (resp.status != 409) {
      return ClassifyDockerStartError(
          DockerErrorToStatus(0, "", resp.status, resp.body, ctx));
    }
    // The name exists: an earlier (maybe retried, maybe concurrent) create
    // won. Adopt its container.
    std::string instance;
    absl::StatusOr<ContainerObservation> existing =
        InspectOwned(spec.job_id, &instance);
    if (existing.ok()) {
      result.container_id = existing->container_id;
      result.adopted = true;
      // Only a never-started container is started: an exited one already ran.
      if (existing->state != ContainerState::kCreated) return result;
      break;
    }
    if (existing.status().code() != absl::StatusCode::kNotFound) {
      return existing.status();
    }
    if (!instance.empty() && instance != options_.instance) {
      return absl::AlreadyExistsError(absl::StrCat(
          "container ", name,
          " exists but belongs to Berth instance '", instance, "'"));
    }
    // Not visible yet (a concurrent create is still registering it) or just
    // removed: try the create again.
    if (attempt >= options_.max_attempts) {
      return absl::AlreadyExistsError(absl::StrCat(
          "container ", name,
          " conflicts but cannot be inspected; not ours or being removed"));
    }
    clock_->SleepFor(Backoff(attempt, options_.backoff_initial,
                             options_.backoff_max));
    ASSIGN_OR_RETURN(resp, Call("create", req, true, ctx));
  }
  CrashPoint("runtime.after_create");  // created, not started
  RETURN_IF_ERROR(StartCreated(spec.job_id, result.container_id));
  return result;
}

absl::Status DockerRuntime::StartCreated(const std::string& job,
                                         const std::string& id) {
  HttpRequest req;
  req.method = "POST";
  req.path = absl::StrCat("/containers/", id, "/start");
  const std::string ctx = absl::StrCat("start container ", ContainerName(job));
  absl::Status last;
  for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
    if (attempt > 1) {
      clock_->SleepFor(Backoff(attempt - 1, options_.backoff_initial,
                               options_.backoff_max));
      // A lost answer may hide a successful start: never start twice.
      absl::StatusOr<ContainerObservation> now = InspectOwned(job, nullptr);
      if (now.ok() && now->state != ContainerState::kCreated) {
        return absl::OkStatus();
      }
    }
    // Not retried inside Call: the state check above guards each retry.
    absl::StatusOr<HttpResponse> resp = Call("start", req, false, ctx);
    if (resp.ok()) {
      // 204 started, 304 already started.
      absl::Status started = ClassifyDockerStartError(
          DockerErrorToStatus(0, "", resp->status, resp->body, ctx));
      // A 500 that is not a permanent refusal (INTERNAL) is retried.
      if (started.ok() || !IsRetryableDockerError(started)) return started;
      last = started;
      continue;
    }
    last = ClassifyDockerStartError(resp.status());
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
  return ParseContainerList(resp.body, options_.instance);
}

absl::StatusOr<ContainerObservation> DockerRuntime::InspectOwned(
    absl::string_view job_id, std::string* instance_out) {
  if (!IsIdLike(job_id)) {
    return absl::InvalidArgumentError(absl::StrCat("bad job id '", job_id, "'"));
  }
  const std::string name = ContainerName(job_id);
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
  const std::string ctx = absl::StrCat("stop container ", ContainerName(job_id));
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
      absl::StrCat("remove container ", ContainerName(job_id));
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
