// DockerRuntime's start path: the allow-list and spec checks, the hardened
// create body, and create + start (exactly once per job, by name). Listing,
// inspecting, stopping and the engine calls themselves: docker_runtime.cc.
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

std::string DockerRuntime::BuildCreateBody(const ContainerSpec& spec,
                                           const std::string& cgroup_parent) const {
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
       {{"Type", options_.log_driver},
        {"Config",
         {{"max-size", options_.log_max_size},
          {"max-file", std::to_string(options_.log_max_files)}}}}},
  };
  if (!cgroup_parent.empty()) host["CgroupParent"] = cgroup_parent;
  if (options_.readonly_rootfs) {
    host["Tmpfs"] = {
        {"/tmp", absl::StrCat("rw,nosuid,nodev,size=", options_.tmp_size)}};
  }
  if (options_.workspace_gid > 0) {
    // The researchers' group, and nothing more (engine_client.h).
    host["GroupAdd"] = {std::to_string(options_.workspace_gid)};
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
        {kAttemptLabel, AttemptLabels(spec.attempt).at(kAttemptLabel)},
        {kAttemptBaseLabel, AttemptLabels(spec.attempt).at(kAttemptBaseLabel)},
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
    absl::Status prepared = PrepareWorkspaceDir(
        options_.workspaces_root, spec.workspace, user.uid, WorkspaceDirGid(options_.workspace_gid, user.gid),
        WorkspaceDirMode(options_.workspace_gid));
    if (!prepared.ok()) {
      return absl::FailedPreconditionError(
          std::string(prepared.message()));
    }
  }
  // Always the instance-qualified name (container_names.h).
  const std::string name = ContainerName(options_.instance, spec.job_id);
  HttpRequest req;
  req.method = "POST";
  req.path = absl::StrCat("/containers/create?name=", name);
  std::string cgroup_parent;
  if (const PeakCgroups* peaks = PeakGroups()) {
    // A group an earlier container of this name left would carry its mark
    // (a running one's stays: rmdir refuses it, and the create adopts it).
    (void)peaks->Remove(name);
    cgroup_parent = peaks->ParentOf(name);
  }
  req.body = BuildCreateBody(spec, cgroup_parent);
  const std::string ctx = absl::StrCat("create container ", name);
  absl::StatusOr<HttpResponse> created = engine_->Call("create", req, true, ctx);
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
    clock_->SleepFor(engine_->Backoff(attempt));
    ASSIGN_OR_RETURN(resp, engine_->Call("create", req, true, ctx));
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
  const std::string ctx = absl::StrCat("start container ", NameOf(job));
  absl::Status last;
  for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
    if (attempt > 1) {
      clock_->SleepFor(engine_->Backoff(attempt - 1));
      // A lost answer may hide a successful start: never start twice.
      absl::StatusOr<ContainerObservation> now = InspectOwned(job, nullptr);
      if (now.ok() && now->state != ContainerState::kCreated) {
        return absl::OkStatus();
      }
    }
    // Not retried inside Call: the state check above guards each retry.
    absl::StatusOr<HttpResponse> resp = engine_->Call("start", req, false, ctx);
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

}  // namespace berth
