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
#include "executor/runtime/docker/engine_images.h"
#include "executor/runtime/docker/workspace_dir.h"
#include "executor/runtime/runtime_limits.h"
#include "nlohmann/json.hpp"
#include "planner/base/crash_point.h"
#include "planner/base/status_macros.h"

namespace berth {

using nlohmann::json;

namespace {

std::string UrlEncode(absl::string_view s) {
  char* e = curl_easy_escape(nullptr, s.data(), static_cast<int>(s.size()));
  std::string out = e ? e : "";
  curl_free(e);
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<DockerRuntime>> DockerRuntime::Create(
    DockerRuntimeOptions options) {
  RETURN_IF_ERROR(ValidateEngineRuntimeOptions(options, "docker runtime"));
  ASSIGN_OR_RETURN(std::unique_ptr<EngineClient> engine, EngineClient::Create(options));
  return std::unique_ptr<DockerRuntime>(
      new DockerRuntime(std::move(options), std::move(engine)));
}

DockerRuntime::DockerRuntime(DockerRuntimeOptions options,
                             std::unique_ptr<EngineClient> engine)
    : options_(std::move(options)),
      engine_(std::move(engine)),
      clock_(options_.clock),
      cgroups_(absl::StartsWith(options_.endpoint.url, "unix://") &&
                       !options_.cgroup_root.empty()
                   ? std::make_unique<CgroupUsage>(CgroupUsageOptions{options_.cgroup_root})
                   : nullptr),
      peaks_(cgroups_ != nullptr && !options_.peak_cgroup_group.empty()
                 ? std::make_unique<PeakCgroups>(options_.cgroup_root,
                                                 options_.peak_cgroup_group)
                 : nullptr) {}

const PeakCgroups* DockerRuntime::PeakGroups() {
  if (peaks_ == nullptr) return nullptr;
  int state = peaks_state_.load();
  if (state == 0) {
    // Asked once: a failed ask leaves it unknown (asked again next create).
    absl::StatusOr<HostInfo> info = GetHostInfo();
    if (!info.ok()) return nullptr;
    state = info->cgroup_driver == "cgroupfs" ? 1 : 2;
    peaks_state_.store(state);
  }
  return state == 1 ? peaks_.get() : nullptr;
}

absl::StatusOr<int64_t> DockerRuntime::ExitPeakMemory(absl::string_view job_id) {
  if (peaks_ == nullptr || peaks_state_.load() == 2) {
    return absl::UnimplementedError(
        "no exit memory peak: a remote engine, no cgroup root, or not the cgroupfs driver");
  }
  return peaks_->Peak(NameOf(job_id));
}

CallCounters DockerRuntime::Counters() const { return engine_->Counters(); }

absl::StatusOr<UsageSamples> DockerRuntime::SampleUsage(const ContainerList& containers) {
  if (cgroups_ == nullptr) {
    return absl::UnimplementedError(
        "usage is observed only on a local engine (unix socket) with a cgroup root");
  }
  if (peaks_ == nullptr || peaks_state_.load() != 1) return cgroups_->Sweep(containers);
  return cgroups_->Sweep(containers, [this](const std::string& job) {
    return peaks_->RelativeOf(NameOf(job));
  });
}

absl::StatusOr<ContainerList> DockerRuntime::List() {
  const json filters = {
      {"label", {absl::StrCat("berth.instance=", options_.instance)}}};
  HttpRequest req;
  req.path = absl::StrCat("/containers/json?all=1&filters=",
                          UrlEncode(filters.dump()));
  const std::string ctx = "list containers";
  ASSIGN_OR_RETURN(HttpResponse resp, engine_->Call("list", req, true, ctx));
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
  if (!IsValidName(job_id)) {
    return absl::InvalidArgumentError(absl::StrCat("bad job id '", job_id, "'"));
  }
  const std::string name = NameOf(job_id);
  HttpRequest req;
  req.path = absl::StrCat("/containers/", name, "/json");
  const std::string ctx = absl::StrCat("inspect container ", name);
  ASSIGN_OR_RETURN(HttpResponse resp, engine_->Call("inspect", req, true, ctx));
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
                   engine_->Call("stop", req, true, ctx,
                                 options_.call_timeout + absl::Seconds(secs)));
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
  ASSIGN_OR_RETURN(HttpResponse resp, engine_->Call("remove", req, true, ctx));
  // A retried remove whose first attempt succeeded sees 404: that is done.
  if (resp.status != 404) RETURN_IF_ERROR(DockerErrorToStatus(0, "", resp.status, resp.body, ctx));
  if (peaks_ != nullptr) {
    // Its mark was read when its run was recorded; an empty group left
    // behind is removed before the next container of this name is made.
    (void)peaks_->Remove(NameOf(job_id));
  }
  return absl::OkStatus();
}

absl::StatusOr<HostInfo> DockerRuntime::GetHostInfo() {
  HttpRequest req;
  req.path = "/info";
  ASSIGN_OR_RETURN(HttpResponse resp, engine_->Call("info", req, true, "docker info"));
  RETURN_IF_ERROR(DockerErrorToStatus(0, "", resp.status, resp.body, "docker info"));
  return ParseHostInfo(resp.body);
}

absl::Status DockerRuntime::Ping() {
  HttpRequest req;
  req.path = "/_ping";
  // One attempt, with its own short limit: a probe of the engine's health.
  ASSIGN_OR_RETURN(HttpResponse resp, engine_->Call("ping", req, /*idempotent=*/false,
                                                    "docker ping", options_.ping_timeout));
  return DockerErrorToStatus(0, "", resp.status, resp.body, "docker ping");
}

absl::StatusOr<std::vector<std::string>> DockerRuntime::ListImages() {
  return ListEngineImages(*engine_, "docker images");
}

}  // namespace berth
