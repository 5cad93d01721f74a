#include "executor/runtime/swarm/swarm_runtime.h"

#include <curl/curl.h>
#include <fnmatch.h>

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "executor/runtime/docker/engine_images.h"
#include "executor/runtime/docker/workspace_dir.h"
#include "executor/runtime/runtime_limits.h"
#include "nlohmann/json.hpp"
#include "planner/base/crash_point.h"
#include "planner/base/log.h"
#include "planner/base/status_macros.h"

namespace berth {

using nlohmann::json;

namespace {

bool IsNodeId(absl::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  });
}

}  // namespace

std::string SwarmQueryEscape(absl::string_view s) {
  char* e = curl_easy_escape(nullptr, s.data(), static_cast<int>(s.size()));
  std::string out = e ? e : "";
  curl_free(e);
  return out;
}

absl::StatusOr<std::unique_ptr<SwarmRuntime>> SwarmRuntime::Create(
    SwarmRuntimeOptions options) {
  RETURN_IF_ERROR(ValidateEngineRuntimeOptions(
      options, "swarm runtime",
      options.tmp_size_bytes > 0 && options.stop_grace >= absl::ZeroDuration(),
      "tmp_size_bytes"));
  ASSIGN_OR_RETURN(std::unique_ptr<EngineClient> engine, EngineClient::Create(options));
  return std::unique_ptr<SwarmRuntime>(
      new SwarmRuntime(std::move(options), std::move(engine)));
}

SwarmRuntime::SwarmRuntime(SwarmRuntimeOptions options,
                           std::unique_ptr<EngineClient> engine)
    : options_(std::move(options)),
      engine_(std::move(engine)),
      clock_(options_.clock),
      prefix_(SwarmServicePrefix(options_.instance)) {}

SwarmServiceOptions SwarmRuntime::ServiceOptions() const {
  SwarmServiceOptions o;
  o.instance = options_.instance;
  o.user = options_.user;
  o.pids_limit = options_.pids_limit;
  o.readonly_rootfs = options_.readonly_rootfs;
  o.tmp_size_bytes = options_.tmp_size_bytes;
  o.log_max_size = options_.log_max_size;
  o.log_max_files = options_.log_max_files;
  o.stop_grace = options_.stop_grace;
  o.workspaces_root = options_.workspaces_root;
  o.workspace_gid = options_.workspace_gid;
  o.constraints = options_.constraints;
  return o;
}

NodeLossOptions SwarmRuntime::LossOptions() const {
  NodeLossOptions o;
  o.lost_grace = options_.node_lost_grace;
  o.rejoin_settle = options_.stop_grace + options_.rejoin_margin;
  return o;
}

void SwarmRuntime::ReportNodeLosses(const std::vector<NodeInfo>& nodes, absl::Time now) {
  const std::map<std::string, NodeLoss> before = losses_.Lost();
  losses_.Update(nodes, now);
  const std::map<std::string, NodeLoss> after = losses_.Lost();
  for (const auto& [id, loss] : after) {
    if (before.count(id)) continue;
    Log(LogLevel::kWarning, "swarm node lost: its jobs are held, not requeued, until it is "
        "back and their attempts ended or it is removed from the swarm",
        {{"node", id}, {"hostname", loss.hostname}});
  }
  for (const auto& [id, loss] : before) {
    if (after.count(id)) continue;
    const NodeLoss* now_loss = losses_.Find(id);
    Log(LogLevel::kInfo,
        now_loss != nullptr && now_loss->removed ? "lost swarm node removed from the swarm"
                                                 : "lost swarm node is back",
        {{"node", id}, {"hostname", loss.hostname}});
  }
}

CallCounters SwarmRuntime::Counters() const { return engine_->Counters(); }

absl::StatusOr<std::string> SwarmRuntime::Get(const std::string& endpoint,
                                              const std::string& path,
                                              absl::string_view context) {
  HttpRequest req;
  req.path = path;
  ASSIGN_OR_RETURN(HttpResponse resp, engine_->Call(endpoint, req, true, context));
  RETURN_IF_ERROR(DockerErrorToStatus(0, "", resp.status, resp.body, context));
  return std::move(resp.body);
}

bool SwarmRuntime::ImageAllowed(absl::string_view image) const {
  const std::string s(image);
  for (const std::string& pattern : options_.image_allow_list) {
    if (fnmatch(pattern.c_str(), s.c_str(), 0) == 0) return true;
  }
  return false;
}

absl::Status SwarmRuntime::ValidateSpec(const ContainerSpec& spec) const {
  // The limits ingest checks too (executor/runtime/runtime_limits.h), the
  // same path as DockerRuntime::ValidateSpec, before any engine call.
  if (std::optional<SpecProblem> p = CheckContainerSpec(spec)) {
    return absl::InvalidArgumentError(absl::StrCat(
        p->field, ": ", p->message));
  }
  if (spec.attempt < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attempt must be >= 0"));
  }
  if (!spec.node.empty() && !IsNodeId(spec.node)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node '", spec.node, "' is not a swarm node id"));
  }
  for (const auto& [name, value] : spec.env) {
    if (name.empty() || absl::StrContains(name, '=')) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad environment variable name '", name, "'"));
    }
  }
  if (spec.mount_workspace && options_.workspaces_root.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "workspace mount requested but no workspaces root is configured"));
  }
  if (!ImageAllowed(spec.image)) {
    return absl::PermissionDeniedError(absl::StrCat(
        "image '", spec.image, "' is not in the image allow-list (",
        options_.image_allow_list.empty()
            ? std::string("empty")
            : absl::StrJoin(options_.image_allow_list, ", "),
        ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<StartResult> SwarmRuntime::Start(const ContainerSpec& spec) {
  RETURN_IF_ERROR(ValidateSpec(spec));
  const std::string name =
      SwarmServiceName(options_.instance, spec.job_id, spec.attempt);
  {
    // Seen by the last bulk list (e.g. a task still pending): nothing to do.
    // Found by its labels, not its name: a service an older berthd created
    // for this run is named by the attempt counted from 0.
    absl::MutexLock lock(&mu_);
    auto it = listed_services_.find({spec.job_id, spec.attempt});
    if (it != listed_services_.end()) return StartResult{it->second, true, false};
  }
  if (spec.mount_workspace) {
    // As on one host: the job's user may write its workspace, nobody else.
    // The workspaces root is a share mounted at the same path on berthd's
    // host and every node (docs/cluster.md), so this is what
    // the task's node sees.
    ASSIGN_OR_RETURN(ContainerUser user, ParseContainerUser(options_.user));
    absl::Status prepared = PrepareWorkspaceDir(
        options_.workspaces_root, spec.workspace, user.uid, WorkspaceDirGid(options_.workspace_gid, user.gid),
        WorkspaceDirMode(options_.workspace_gid));
    if (!prepared.ok()) return absl::FailedPreconditionError(prepared.message());
  }
  // Images by id: an agent given a tag tries its registry before its store.
  const std::string image_ctx = absl::StrCat("inspect image ", spec.image);
  HttpRequest image_req;
  image_req.path = absl::StrCat("/images/", spec.image, "/json");
  ASSIGN_OR_RETURN(HttpResponse image,
                   engine_->Call("image", image_req, true, image_ctx));
  const size_t at = spec.image.find("@sha256:");
  if (image.status == 404 && at != std::string::npos) {
    // name@<image id>: the engine resolves "@sha256:" against registry
    // digests, which a loaded (never pulled) image lacks; the part after
    // '@' may be the image's own id. Accepted when the id exists.
    image_req.path = absl::StrCat("/images/", spec.image.substr(at + 1), "/json");
    ASSIGN_OR_RETURN(image, engine_->Call("image", image_req, true, image_ctx));
    if (image.status == 200) {
      absl::StatusOr<std::string> id = ParseImageId(image.body);
      if (!id.ok() || *id != spec.image.substr(at + 1)) image.status = 404;
    }
  }
  if (image.status == 404) {
    return absl::NotFoundError(absl::StrCat(
        "image '", spec.image,
        "' is not present on the swarm manager (Berth never pulls images; "
        "load it on every node)"));
  }
  RETURN_IF_ERROR(DockerErrorToStatus(0, "", image.status, image.body, image_ctx));
  ASSIGN_OR_RETURN(std::string image_id, ParseImageId(image.body));

  HttpRequest req;
  req.method = "POST";
  req.path = "/services/create";
  req.body = BuildServiceSpec(spec, image_id, ServiceOptions());
  const std::string ctx = absl::StrCat("create service ", name);
  ASSIGN_OR_RETURN(HttpResponse resp, engine_->Call("create", req, true, ctx));
  if (resp.status == 201 || resp.status == 200) {
    ASSIGN_OR_RETURN(std::string id, ParseServiceCreate(resp.body));
    CrashPoint("runtime.after_create");
    return StartResult{id, false, false};
  }
  if (resp.status != 409) {
    return DockerErrorToStatus(0, "", resp.status, resp.body, ctx);
  }
  // The name exists: an earlier (retried, or before a crash) create won.
  ASSIGN_OR_RETURN(std::vector<SwarmService> mine, JobServices(spec.job_id));
  for (const SwarmService& s : mine) {
    if (s.name == name) return StartResult{s.id, true, false};
  }
  return absl::AlreadyExistsError(absl::StrCat(
      "service ", name,
      " exists but is not this Berth instance's run of the job"));
}

absl::StatusOr<ContainerList> SwarmRuntime::List() {
  const json service_filter = {
      {"label", {absl::StrCat("berth.instance=", options_.instance)}}};
  const json task_filter = {{"name", {prefix_}}};
  ASSIGN_OR_RETURN(std::string services_body,
                   Get("list", "/services?filters=" + SwarmQueryEscape(service_filter.dump()),
                       "list services"));
  ASSIGN_OR_RETURN(std::string tasks_body,
                   Get("list", "/tasks?filters=" + SwarmQueryEscape(task_filter.dump()),
                       "list tasks"));
  ASSIGN_OR_RETURN(std::string nodes_body, Get("nodes", "/nodes", "list nodes"));
  ASSIGN_OR_RETURN(std::vector<SwarmService> services,
                   ParseServiceList(services_body, options_.instance));
  ASSIGN_OR_RETURN(std::vector<SwarmTask> tasks, ParseTaskList(tasks_body));
  ASSIGN_OR_RETURN(std::vector<NodeInfo> nodes, ParseNodeList(nodes_body));
  absl::ReleasableMutexLock lock(&mu_);
  const absl::Time now = clock_->Now();
  ReportNodeLosses(nodes, now);
  std::map<std::string, const NodeInfo*> by_id;
  for (const NodeInfo& n : nodes) by_id[n.id] = &n;
  ContainerList list = BuildContainerList(services, tasks, [&](const SwarmTask& t) {
    auto n = by_id.find(t.node_id);
    std::optional<NodeInfo> node;
    if (n != by_id.end()) node = *n->second;
    return ObserveFencedTask(
        t, FenceTask(t, node, losses_.Find(t.node_id), now, LossOptions()));
  });
  listed_services_.clear();
  for (const SwarmService& s : services) listed_services_[{s.job_id, s.attempt}] = s.id;
  const std::vector<SwarmService> to_end = NoteStrays(StrayTasks(services, tasks), services);
  // A stopped job reads as its tombstone (its service is gone, or going).
  for (const auto& [job, tomb] : tombstones_) {
    ContainerSummary c;
    c.job_id = job;
    c.container_id = tomb.observation.container_id;
    c.state = tomb.observation.state;
    c.node_id = tomb.observation.node_id;
    list[job] = std::move(c);
  }
  lock.Release();
  for (const SwarmService& s : to_end) {
    absl::Status asked = AskTaskEnd(s);
    if (!asked.ok()) {
      Log(LogLevel::kWarning, "could not ask Swarm to end a stray task; asked again next list",
          {{"service", s.name}, {"error", asked.ToString()}});
    }
  }
  return list;
}

absl::StatusOr<std::vector<SwarmService>> SwarmRuntime::JobServices(
    absl::string_view job_id) {
  if (!IsValidName(job_id)) {
    return absl::InvalidArgumentError(absl::StrCat("bad job id '", job_id, "'"));
  }
  const json filter = {
      {"label",
       {absl::StrCat("berth.instance=", options_.instance),
        absl::StrCat("berth.job=", job_id)}}};
  ASSIGN_OR_RETURN(std::string body,
                   Get("inspect", "/services?filters=" + SwarmQueryEscape(filter.dump()),
                       absl::StrCat("services of job ", job_id)));
  ASSIGN_OR_RETURN(std::vector<SwarmService> services,
                   ParseServiceList(body, options_.instance));
  std::sort(services.begin(), services.end(),
            [](const SwarmService& a, const SwarmService& b) {
              return a.attempt < b.attempt;
            });
  return services;
}

absl::StatusOr<std::vector<SwarmTask>> SwarmRuntime::ServiceTasks(
    const std::string& service_id) {
  const json filter = {{"service", {service_id}}};
  ASSIGN_OR_RETURN(std::string body,
                   Get("inspect", "/tasks?filters=" + SwarmQueryEscape(filter.dump()),
                       absl::StrCat("tasks of service ", service_id)));
  return ParseTaskList(body);
}

absl::StatusOr<ContainerObservation> SwarmRuntime::ObserveService(
    const SwarmService& service) {
  ASSIGN_OR_RETURN(std::vector<SwarmTask> tasks, ServiceTasks(service.id));
  ContainerObservation obs;
  if (const SwarmTask* t = NewestTask(tasks, service.id)) {
    std::optional<NodeInfo> node;
    if (!t->node_id.empty()) {
      HttpRequest req;
      req.path = "/nodes/" + t->node_id;
      const std::string ctx = absl::StrCat("inspect node ", t->node_id);
      ASSIGN_OR_RETURN(HttpResponse resp, engine_->Call("nodes", req, true, ctx));
      if (resp.status != 404) {  // 404: removed from the swarm
        RETURN_IF_ERROR(DockerErrorToStatus(0, "", resp.status, resp.body, ctx));
        ASSIGN_OR_RETURN(node, ParseNode(resp.body));
      }
    }
    absl::MutexLock lock(&mu_);
    const absl::Time now = clock_->Now();
    if (!t->node_id.empty()) losses_.UpdateOne(t->node_id, node, now);
    obs = ObserveFencedTask(
        *t, FenceTask(*t, node, losses_.Find(t->node_id), now, LossOptions()));
  } else {
    obs.state = ContainerState::kCreated;  // the orchestrator has not run yet
  }
  obs.job_id = service.job_id;
  obs.container_id = service.id;
  return obs;
}

absl::StatusOr<ContainerObservation> SwarmRuntime::Inspect(
    absl::string_view job_id) {
  Tombstone tomb;
  if (TombstoneOf(job_id, &tomb)) return tomb.observation;
  ASSIGN_OR_RETURN(std::vector<SwarmService> services, JobServices(job_id));
  if (services.empty()) {
    return absl::NotFoundError(absl::StrCat("no service of job ", job_id));
  }
  return ObserveService(services.back());
}

absl::StatusOr<HostInfo> SwarmRuntime::GetHostInfo() {
  ASSIGN_OR_RETURN(std::vector<NodeInfo> nodes, ListNodes());
  ASSIGN_OR_RETURN(std::string version, Get("info", "/version", "docker version"));
  HostInfo info;
  int64_t nano_cpus = 0;
  info.nodes = 0;
  for (const NodeInfo& n : nodes) {
    if (!AcceptsJobs(n)) continue;
    ++info.nodes;
    nano_cpus += n.nano_cpus;
    info.mem_total_bytes += n.memory_bytes;
  }
  info.ncpu = static_cast<int>(nano_cpus / 1'000'000'000);
  const json v = json::parse(version, nullptr, /*allow_exceptions=*/false);
  if (v.is_object() && v.contains("Version") && v["Version"].is_string()) {
    info.server_version = v["Version"].get<std::string>();
  }
  if (info.ncpu <= 0 || info.mem_total_bytes <= 0) {
    return absl::UnavailableError("swarm: no Ready, active node");
  }
  return info;
}

absl::Status SwarmRuntime::Ping() {
  HttpRequest req;
  req.path = "/_ping";
  ASSIGN_OR_RETURN(HttpResponse resp, engine_->Call("ping", req, true, "swarm ping"));
  return DockerErrorToStatus(0, "", resp.status, resp.body, "swarm ping");
}

absl::StatusOr<std::vector<std::string>> SwarmRuntime::ListImages() {
  return ListEngineImages(*engine_, "swarm manager images");
}

}  // namespace berth
