#include "executor/runtime/container_names.h"
#include "executor/runtime/swarm/swarm_json.h"
#include "executor/runtime/docker/engine_json.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace berth {

using nlohmann::json;

namespace {

using engine_json::Int;
using engine_json::Obj;
using engine_json::Str;

absl::StatusOr<json> Parse(absl::string_view body, absl::string_view what) {
  return engine_json::Parse(body, "swarm API", what);
}

absl::StatusOr<json> ParseArray(absl::string_view body, absl::string_view what) {
  absl::StatusOr<json> j = Parse(body, what);
  if (j.ok() && !j->is_array()) {
    return absl::InternalError(
        absl::StrCat("swarm API: ", what, " answer is not an array"));
  }
  return j;
}

NodeInfo NodeFromJson(const json& n) {
  NodeInfo info;
  info.id = Str(n, "ID");
  const json& spec = Obj(n, "Spec");
  const json& desc = Obj(n, "Description");
  info.hostname = Str(desc, "Hostname");
  info.engine_version = Str(Obj(desc, "Engine"), "EngineVersion");
  info.updated_at = ParseDockerTime(Str(n, "UpdatedAt"));
  const std::string state = Str(Obj(n, "Status"), "State");
  info.state = state == "ready" ? NodeState::kReady
               : state == "down" || state == "disconnected" ? NodeState::kDown
                                                            : NodeState::kUnknown;
  const std::string avail = Str(spec, "Availability");
  info.availability = avail == "drain"   ? NodeAvailability::kDrain
                      : avail == "pause" ? NodeAvailability::kPause
                                         : NodeAvailability::kActive;
  info.manager = Str(spec, "Role") == "manager";
  const json& res = Obj(desc, "Resources");
  info.nano_cpus = Int(res, "NanoCPUs");
  info.memory_bytes = Int(res, "MemoryBytes");
  for (const auto& [k, v] : Obj(spec, "Labels").items()) {
    if (v.is_string()) info.labels[k] = v.get<std::string>();
  }
  return info;
}

}  // namespace

std::string SwarmServicePrefix(absl::string_view instance) {
  return InstanceNamePrefix(instance);
}

std::string SwarmServiceName(absl::string_view instance,
                             absl::string_view job_id, int attempt) {
  std::string readable;
  for (char c : job_id.substr(0, 20)) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       (c >= '0' && c <= '9');
    readable += alnum ? c : '-';
  }
  return absl::StrFormat("%s%s-%012x-a%d", SwarmServicePrefix(instance),
                         readable, NameHash(instance, job_id) >> 16,
                         int64_t{std::max(attempt, 0)} + 1);
}

std::string BuildServiceSpec(const ContainerSpec& spec, absl::string_view image_id,
                             const SwarmServiceOptions& options) {
  const json labels = {
      {"berth.job", spec.job_id},
      {"berth.workspace", spec.workspace},
      {"berth.action", spec.action},
      {"berth.instance", options.instance},
      {kAttemptLabel, AttemptLabels(spec.attempt).at(kAttemptLabel)},
      {kAttemptBaseLabel, AttemptLabels(spec.attempt).at(kAttemptBaseLabel)},
      {"berth.image", spec.image},
  };
  json env = json::array();
  for (const auto& [name, value] : spec.env) env.push_back(name + "=" + value);
  json mounts = json::array();
  if (options.readonly_rootfs) {
    mounts.push_back({{"Type", "tmpfs"},
                      {"Target", "/tmp"},
                      {"TmpfsOptions", {{"SizeBytes", options.tmp_size_bytes}}}});
  }
  if (spec.mount_workspace) {
    mounts.push_back(
        {{"Type", "bind"},
         {"Source", absl::StrCat(options.workspaces_root, "/", spec.workspace)},
         {"Target", "/workspace"},
         {"ReadOnly", false}});
  }
  json container = {
      {"Image", std::string(image_id)},
      {"Labels", labels},
      {"Env", env},
      {"User", options.user},
      {"ReadOnly", options.readonly_rootfs},
      {"Init", true},
      {"CapabilityDrop", {"ALL"}},
      {"Mounts", mounts},
      {"StopGracePeriod", absl::ToInt64Nanoseconds(options.stop_grace)},
  };
  if (options.workspace_gid > 0) {
    container["Groups"] = {std::to_string(options.workspace_gid)};
  }
  if (!spec.argv.empty()) container["Args"] = spec.argv;
  const int64_t nano_cpus = spec.cpu_millis * 1'000'000;
  json constraints = json::array();
  if (!spec.node.empty()) constraints.push_back("node.id==" + spec.node);
  for (const std::string& c : options.constraints) constraints.push_back(c);
  json task = {
      {"ContainerSpec", container},
      {"Resources",
       {{"Limits",
         {{"NanoCPUs", nano_cpus},
          {"MemoryBytes", spec.memory_bytes},
          {"Pids", options.pids_limit}}},
        {"Reservations",
         {{"NanoCPUs", nano_cpus}, {"MemoryBytes", spec.memory_bytes}}}}},
      {"RestartPolicy", {{"Condition", "none"}, {"MaxAttempts", 0}}},
      {"Placement", {{"Constraints", constraints}}},
      {"LogDriver",
       {{"Name", "json-file"},
        {"Options",
         {{"max-size", options.log_max_size},
          {"max-file", std::to_string(options.log_max_files)}}}}},
  };
  if (!spec.network.empty()) {
    task["Networks"] = json::array({{{"Target", spec.network}}});
  }
  const json body = {
      {"Name", SwarmServiceName(options.instance, spec.job_id, spec.attempt)},
      {"Labels", labels},
      {"TaskTemplate", task},
      {"Mode", {{"ReplicatedJob", {{"MaxConcurrent", 1}, {"TotalCompletions", 1}}}}},
  };
  return body.dump();
}

absl::StatusOr<std::string> StopJobServiceSpec(absl::string_view inspected) {
  absl::StatusOr<json> j = Parse(inspected, "service inspect");
  if (!j.ok()) return j.status();
  if (!j->is_object() || !j->contains("Spec") || !(*j)["Spec"].is_object()) {
    return absl::InternalError("swarm API: service answer has no Spec");
  }
  json spec = (*j)["Spec"];
  spec.erase("UpdateConfig");
  spec.erase("RollbackConfig");
  spec["Mode"] = {{"ReplicatedJob", {{"MaxConcurrent", 0}, {"TotalCompletions", 0}}}};
  return spec.dump();
}

absl::StatusOr<std::vector<SwarmService>> ParseServiceList(
    absl::string_view body, absl::string_view instance) {
  absl::StatusOr<json> j = ParseArray(body, "service list");
  if (!j.ok()) return j.status();
  std::vector<SwarmService> out;
  for (const json& row : *j) {
    const json& spec = Obj(row, "Spec");
    const json& labels = Obj(spec, "Labels");
    SwarmService s;
    s.job_id = Str(labels, "berth.job");
    if (s.job_id.empty() || Str(labels, "berth.instance") != instance) continue;
    s.id = Str(row, "ID");
    s.name = Str(spec, "Name");
    s.image = Str(labels, "berth.image");
    s.attempt = ParseAttemptLabel(Str(labels, kAttemptLabel), Str(labels, kAttemptBaseLabel))
                    .value_or(0);
    const json& job = Obj(Obj(spec, "Mode"), "ReplicatedJob");
    s.stopped = job.contains("TotalCompletions") && Int(job, "TotalCompletions") == 0;
    out.push_back(std::move(s));
  }
  return out;
}

absl::StatusOr<std::vector<SwarmTask>> ParseTaskList(absl::string_view body) {
  absl::StatusOr<json> j = ParseArray(body, "task list");
  if (!j.ok()) return j.status();
  std::vector<SwarmTask> out;
  for (const json& row : *j) {
    SwarmTask t;
    t.id = Str(row, "ID");
    t.service_id = Str(row, "ServiceID");
    t.node_id = Str(row, "NodeID");
    t.desired_state = Str(row, "DesiredState");
    t.version = Int(Obj(row, "Version"), "Index");
    t.created_at = ParseDockerTime(Str(row, "CreatedAt"));
    const json& status = Obj(row, "Status");
    t.state = Str(status, "State");
    t.err = Str(status, "Err");
    t.message = Str(status, "Message");
    t.status_at = ParseDockerTime(Str(status, "Timestamp"));
    const json& cs = Obj(status, "ContainerStatus");
    t.container_id = Str(cs, "ContainerID");
    t.exit_code = static_cast<int>(Int(cs, "ExitCode"));
    const json& task_spec = Obj(row, "Spec");
    t.job_id = Str(Obj(Obj(task_spec, "ContainerSpec"), "Labels"), "berth.job");
    const json& reservations = Obj(Obj(task_spec, "Resources"), "Reservations");
    t.reserved_memory_bytes = Int(reservations, "MemoryBytes");
    t.reserved_nano_cpus = Int(reservations, "NanoCPUs");
    out.push_back(std::move(t));
  }
  return out;
}

absl::StatusOr<std::vector<NodeInfo>> ParseNodeList(absl::string_view body) {
  absl::StatusOr<json> j = ParseArray(body, "node list");
  if (!j.ok()) return j.status();
  std::vector<NodeInfo> out;
  for (const json& row : *j) out.push_back(NodeFromJson(row));
  std::sort(out.begin(), out.end(),
            [](const NodeInfo& a, const NodeInfo& b) { return a.id < b.id; });
  return out;
}

absl::StatusOr<NodeInfo> ParseNode(absl::string_view body) {
  absl::StatusOr<json> j = Parse(body, "node inspect");
  if (!j.ok()) return j.status();
  NodeInfo n = NodeFromJson(*j);
  if (n.id.empty()) return absl::InternalError("swarm API: node answer has no ID");
  return n;
}

absl::StatusOr<std::string> ParseImageId(absl::string_view body) {
  absl::StatusOr<json> j = Parse(body, "image inspect");
  if (!j.ok()) return j.status();
  std::string id = Str(*j, "Id");
  if (id.empty()) return absl::InternalError("swarm API: image answer has no Id");
  return id;
}

absl::StatusOr<std::string> ParseServiceCreate(absl::string_view body) {
  absl::StatusOr<json> j = Parse(body, "service create");
  if (!j.ok()) return j.status();
  std::string id = Str(*j, "ID");
  if (id.empty()) return absl::InternalError("swarm API: create answer has no ID");
  return id;
}

bool IsTerminalTaskState(absl::string_view state) {
  return state == "complete" || state == "failed" || state == "shutdown" ||
         state == "rejected" || state == "orphaned" || state == "remove";
}

ContainerObservation ObserveTask(const SwarmTask& task, bool node_ready) {
  ContainerObservation obs;
  obs.node_id = task.node_id;
  obs.error = task.err;
  const std::string& s = task.state;
  if (s == "running") {
    obs.state = ContainerState::kRunning;
    obs.started_at = task.status_at;
  } else if (!IsTerminalTaskState(s)) {
    obs.state = ContainerState::kCreated;
  }
  if (!IsTerminalTaskState(s)) {
    if (!node_ready && !task.node_id.empty()) {
      obs.state = ContainerState::kDead;
      obs.lost = true;
      obs.error = absl::StrCat("node ", task.node_id,
                               " is not ready: the task was lost in state ", s);
    }
    return obs;
  }
  obs.finished_at = task.status_at;
  obs.exit_code = task.exit_code;
  if (s == "complete") {
    obs.state = ContainerState::kExited;
    obs.exit_code = 0;
  } else if (s == "failed" && task.exit_code != 0) {
    obs.state = ContainerState::kExited;
    obs.oom_killed = task.exit_code == 137;
  } else if (s == "rejected" &&
             (!task.container_id.empty() || absl::StrContains(task.err, "constraints"))) {
    // Rejected after its container existed: the constraint enforcer took it
    // off a node that went away. Swarm ended it, not the job.
    obs.state = ContainerState::kDead;
    obs.lost = true;
  } else if (s == "failed" || s == "rejected") {
    obs.state = ContainerState::kDead;
    obs.start_failed = true;
  } else {  // shutdown, remove, orphaned
    obs.state = ContainerState::kDead;
    obs.lost = true;
    if (obs.error.empty()) {
      obs.error = absl::StrCat("swarm ended the task (", s, "): ", task.message);
    }
  }
  return obs;
}

const SwarmTask* NewestTask(const std::vector<SwarmTask>& tasks,
                            absl::string_view service_id) {
  const SwarmTask* best = nullptr;
  for (const SwarmTask& t : tasks) {
    if (t.service_id != service_id) continue;
    if (best == nullptr || t.version > best->version) best = &t;
  }
  return best;
}

namespace {

// Job id -> its newest live service (the highest attempt).
std::map<std::string, const SwarmService*> LatestServices(
    const std::vector<SwarmService>& services) {
  std::map<std::string, const SwarmService*> latest;
  for (const SwarmService& s : services) {
    const SwarmService*& cur = latest[s.job_id];
    if (cur == nullptr || s.attempt > cur->attempt ||
        (s.attempt == cur->attempt && s.id > cur->id)) {
      cur = &s;
    }
  }
  return latest;
}

}  // namespace

std::vector<SwarmTask> StrayTasks(const std::vector<SwarmService>& services,
                                  const std::vector<SwarmTask>& tasks) {
  std::set<std::string> current;
  for (const auto& [job, service] : LatestServices(services)) current.insert(service->id);
  std::vector<SwarmTask> out;
  for (const SwarmTask& t : tasks) {
    if (t.node_id.empty() || IsTerminalTaskState(t.state)) continue;
    if (current.count(t.service_id)) continue;
    out.push_back(t);
  }
  return out;
}

ContainerList BuildContainerList(
    const std::vector<SwarmService>& services, const std::vector<SwarmTask>& tasks,
    const std::function<ContainerObservation(const SwarmTask&)>& observe) {
  const std::map<std::string, const SwarmService*> latest = LatestServices(services);
  std::map<std::string, const SwarmTask*> newest;  // service -> task
  for (const SwarmTask& t : tasks) {
    const SwarmTask*& cur = newest[t.service_id];
    if (cur == nullptr || t.version > cur->version) cur = &t;
  }
  ContainerList out;
  for (const auto& [job, service] : latest) {
    ContainerSummary c;
    c.job_id = job;
    c.container_id = service->id;
    c.state = ContainerState::kCreated;
    c.attempt = service->attempt;
    auto t = newest.find(service->id);
    if (t != newest.end()) {
      const ContainerObservation obs = observe(*t->second);
      c.state = obs.state;
      c.node_id = t->second->node_id;
      if (obs.state == ContainerState::kRunning) c.started_at = obs.started_at;
      c.held = obs.held;
    }
    out[job] = std::move(c);
  }
  return out;
}

}  // namespace berth
