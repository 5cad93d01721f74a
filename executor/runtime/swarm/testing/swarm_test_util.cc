#include "executor/runtime/swarm/testing/swarm_test_util.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "executor/runtime/docker/docker_http.h"
#include "executor/runtime/docker/engine_json.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "executor/runtime/swarm/swarm_json.h"
#include "nlohmann/json.hpp"

namespace berth {
namespace testing {

std::string SwarmManagerUrl() {
  const char* env = std::getenv("BERTH_SWARM_MANAGER");
  return (env != nullptr && *env != '\0')
             ? std::string(env)
             : std::string("unix:///run/berth-swarm/mgr/docker.sock");
}

bool SwarmAvailable() {
  DockerEndpoint e;
  e.url = SwarmManagerUrl();
  absl::StatusOr<std::unique_ptr<DockerHttp>> http = DockerHttp::Create(e);
  if (!http.ok()) return false;
  HttpRequest req;
  req.path = "/_ping";
  req.timeout = absl::Seconds(5);
  absl::StatusOr<HttpResponse> resp = (*http)->Do(req);
  return resp.ok() && resp->status == 200;
}

SwarmRuntimeOptions SwarmTestOptions(const std::string& instance) {
  SwarmRuntimeOptions o;
  o.endpoint.url = SwarmManagerUrl();
  o.instance = instance;
  o.image_allow_list = {kTestImage};
  o.constraints = {"node.role==worker"};
  o.stop_grace = absl::Seconds(2);
  o.backoff_initial = absl::Milliseconds(20);
  o.backoff_max = absl::Milliseconds(200);
  return o;
}

namespace {

absl::StatusOr<std::unique_ptr<DockerHttp>> Http(const std::string& url) {
  DockerEndpoint e;
  e.url = url;
  return DockerHttp::Create(e);
}

// GET `path` on the manager; the parsed JSON of a 200 answer.
absl::StatusOr<nlohmann::json> ManagerGet(DockerHttp& http, const std::string& path) {
  HttpRequest req;
  req.path = path;
  req.timeout = absl::Seconds(10);
  absl::StatusOr<HttpResponse> resp = http.Do(req);
  if (!resp.ok()) return resp.status();
  if (resp->status == 404) {
    return absl::NotFoundError(absl::StrCat("GET ", path, ": ", resp->body));
  }
  if (resp->status != 200) {
    return absl::UnavailableError(absl::StrCat("GET ", path, ": ", resp->status, " ", resp->body));
  }
  nlohmann::json j = nlohmann::json::parse(resp->body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InternalError(absl::StrCat("GET ", path, ": not JSON"));
  return j;
}

std::string InstanceServicesPath(const std::string& instance) {
  const nlohmann::json filter = {
      {"label", {absl::StrCat("berth.instance=", instance)}}};
  return "/services?filters=" + SwarmQueryEscape(filter.dump());
}

}  // namespace

absl::StatusOr<std::string> ManagerImageId(const std::string& reference) {
  absl::StatusOr<std::unique_ptr<DockerHttp>> http = Http(SwarmManagerUrl());
  if (!http.ok()) return http.status();
  absl::StatusOr<nlohmann::json> j =
      ManagerGet(**http, absl::StrCat("/images/", reference, "/json"));
  if (!j.ok()) return j.status();
  if (!j->contains("Id") || !(*j)["Id"].is_string()) {
    return absl::InternalError("image answer has no Id");
  }
  return (*j)["Id"].get<std::string>();
}

absl::StatusOr<int> RemoveInstanceServices(const std::string& instance) {
  absl::StatusOr<std::unique_ptr<DockerHttp>> http = Http(SwarmManagerUrl());
  if (!http.ok()) return http.status();
  absl::StatusOr<nlohmann::json> listed = ManagerGet(**http, InstanceServicesPath(instance));
  if (!listed.ok()) return listed.status();
  const nlohmann::json& services = *listed;
  int removed = 0;
  if (!services.is_array()) return removed;
  for (const nlohmann::json& s : services) {
    HttpRequest del;
    del.method = "DELETE";
    del.path = "/services/" + s.value("ID", std::string());
    absl::StatusOr<HttpResponse> r = (*http)->Do(del);
    if (r.ok() && r->status < 300) ++removed;
  }
  return removed;
}

std::vector<NodeInfo> ReadyWorkers(Runtime& rt) {
  std::vector<NodeInfo> out;
  absl::StatusOr<std::vector<NodeInfo>> nodes = rt.ListNodes();
  if (!nodes.ok()) return out;
  for (const NodeInfo& n : *nodes) {
    if (!n.manager && AcceptsJobs(n)) out.push_back(n);
  }
  return out;
}

absl::Status SetNodeAvailability(const std::string& node_id,
                                 const std::string& availability) {
  absl::StatusOr<std::unique_ptr<DockerHttp>> http = Http(SwarmManagerUrl());
  if (!http.ok()) return http.status();
  absl::StatusOr<nlohmann::json> node = ManagerGet(**http, "/nodes/" + node_id);
  if (!node.ok()) return node.status();
  nlohmann::json spec = (*node)["Spec"];
  spec["Availability"] = availability;
  HttpRequest upd;
  upd.method = "POST";
  upd.path = absl::StrCat("/nodes/", node_id, "/update?version=",
                          (*node)["Version"]["Index"].get<int64_t>());
  upd.body = spec.dump();
  absl::StatusOr<HttpResponse> r = (*http)->Do(upd);
  if (!r.ok()) return r.status();
  if (r->status != 200) {
    return absl::UnavailableError(absl::StrCat("node update: ", r->status, " ", r->body));
  }
  return absl::OkStatus();
}

std::map<std::string, std::string> WorkerNodeIds() {
  std::map<std::string, std::string> out;
  for (int i = 1; i <= 9; ++i) {
    const std::string name = absl::StrCat("w", i);
    absl::StatusOr<std::unique_ptr<DockerHttp>> http =
        Http(absl::StrCat("unix:///run/berth-swarm/", name, "/docker.sock"));
    if (!http.ok()) continue;
    absl::StatusOr<nlohmann::json> info = ManagerGet(**http, "/info");
    if (!info.ok() || !(*info)["Swarm"].is_object()) continue;
    const std::string id = (*info)["Swarm"].value("NodeID", std::string());
    if (!id.empty()) out[name] = id;
  }
  return out;
}

absl::Status KillWorkerDaemon(const std::string& name) {
  const std::string dir = absl::StrCat("/run/berth-swarm/", name);
  std::ifstream pidfile(dir + "/docker.pid");
  int pid = 0;
  if (!(pidfile >> pid) || pid <= 1) {
    return absl::NotFoundError(absl::StrCat("no pidfile for ", name));
  }
  // The cluster's keeper leaves the node down until RestoreCluster.
  if (!std::ofstream(dir + "/hold").good()) {
    return absl::InternalError(absl::StrCat("cannot create ", dir, "/hold"));
  }
  if (kill(pid, SIGKILL) != 0) {
    return absl::InternalError(absl::StrCat("kill -9 ", pid, " failed"));
  }
  return absl::OkStatus();
}

absl::Status RestoreCluster(absl::Duration timeout) {
  // A dockerd started from here would die with the test (Bazel kills what a
  // test leaves behind): the keeper of tools/swarm_cluster.sh, started
  // outside the test, restarts dead nodes once their `hold` is gone.
  std::ifstream keeper("/run/berth-swarm/keeper.pid");
  int keeper_pid = 0;
  if (!(keeper >> keeper_pid) || keeper_pid <= 1 || kill(keeper_pid, 0) != 0) {
    return absl::FailedPreconditionError(
        "the swarm cluster's keeper is not running: run bash tools/swarm_cluster.sh up "
        "(from a shell, not from a test)");
  }
  std::vector<std::string> workers;
  for (int i = 1; i <= 9; ++i) {
    const std::string dir = absl::StrCat("/run/berth-swarm/w", i);
    if (std::ifstream(dir + "/docker.pid").good()) workers.push_back(dir);
    std::remove((dir + "/hold").c_str());
  }
  if (!WaitFor(
          [&] {
            for (const std::string& dir : workers) {
              absl::StatusOr<std::unique_ptr<DockerHttp>> h = Http("unix://" + dir + "/docker.sock");
              if (!h.ok() || !ManagerGet(**h, "/version").ok()) return false;
            }
            return true;
          },
          timeout)) {
    return absl::DeadlineExceededError("worker daemons not back");
  }
  absl::StatusOr<std::unique_ptr<DockerHttp>> http = Http(SwarmManagerUrl());
  if (!http.ok()) return http.status();
  for (const auto& [name, id] : WorkerNodeIds()) {
    absl::StatusOr<nlohmann::json> node = ManagerGet(**http, "/nodes/" + id);
    if (node.ok() && (*node)["Spec"].value("Availability", std::string()) != "active") {
      if (absl::Status s = SetNodeAvailability(id, "active"); !s.ok()) return s;
    }
  }
  const bool all_ready = WaitFor(
      [&] {
        absl::StatusOr<nlohmann::json> nodes = ManagerGet(**http, "/nodes");
        if (!nodes.ok() || !nodes->is_array()) return false;
        for (const nlohmann::json& n : *nodes) {
          if (n["Status"].value("State", std::string()) != "ready" ||
              n["Spec"].value("Availability", std::string()) != "active") {
            return false;
          }
        }
        return true;
      },
      timeout);
  return all_ready ? absl::OkStatus()
                   : absl::DeadlineExceededError("swarm nodes not all Ready and active");
}

namespace {

absl::StatusOr<ClusterSample> SampleOnce(DockerHttp& http, const std::string& instance);

}  // namespace

absl::StatusOr<ClusterSample> SampleCluster(const std::string& instance) {
  absl::StatusOr<std::unique_ptr<DockerHttp>> http = Http(SwarmManagerUrl());
  if (!http.ok()) return http.status();
  // A service removed between the two lists makes the task filter 404:
  // take the sample again (services are removed only now and then).
  absl::StatusOr<ClusterSample> s;
  for (int attempt = 0; attempt < 5; ++attempt) {
    s = SampleOnce(**http, instance);
    if (s.ok() || s.status().code() != absl::StatusCode::kNotFound) return s;
  }
  return s;
}

namespace {

absl::StatusOr<ClusterSample> SampleOnce(DockerHttp& http, const std::string& instance) {
  absl::StatusOr<nlohmann::json> services = ManagerGet(http, InstanceServicesPath(instance));
  if (!services.ok()) return services.status();
  ClusterSample out;
  std::map<std::string, std::string> job_of;  // service id -> job id
  for (const nlohmann::json& s : *services) {
    const nlohmann::json& labels = s["Spec"]["Labels"];
    const std::string job = labels.is_object() ? labels.value("berth.job", std::string()) : "";
    job_of[s.value("ID", std::string())] = job;
    out.services_by_job[job].push_back(s["Spec"].value("Name", std::string()));
  }
  // Tasks of removed services linger in Docker 20.10 (moby#44312): only
  // those of live services count (the filter ORs service ids).
  if (job_of.empty()) return out;
  nlohmann::json ids = nlohmann::json::array();
  for (const auto& [id, job] : job_of) ids.push_back(id);
  const nlohmann::json filter = {{"service", ids}};
  absl::StatusOr<nlohmann::json> tasks =
      ManagerGet(http, "/tasks?filters=" + SwarmQueryEscape(filter.dump()));
  if (!tasks.ok()) return tasks.status();
  for (const nlohmann::json& t : *tasks) {
    auto job = job_of.find(t.value("ServiceID", std::string()));
    if (job == job_of.end()) continue;
    if (IsTerminalTaskState(t["Status"].value("State", std::string()))) continue;
    const std::string node = t.value("NodeID", std::string());
    if (node.empty()) continue;  // not placed yet
    const nlohmann::json& res = t["Spec"]["Resources"]["Reservations"];
    out.reserved_by_node[node] += res.is_object() ? res.value("MemoryBytes", int64_t{0}) : 0;
    out.live_nodes_by_job[job->second].push_back(node);
  }
  return out;
}

}  // namespace
absl::StatusOr<TaskStart> RunningTaskStart(const std::string& instance,
                                           const std::string& job_id) {
  absl::StatusOr<std::unique_ptr<DockerHttp>> http = Http(SwarmManagerUrl());
  if (!http.ok()) return http.status();
  absl::StatusOr<nlohmann::json> services = ManagerGet(**http, InstanceServicesPath(instance));
  if (!services.ok()) return services.status();
  for (const nlohmann::json& s : *services) {
    const nlohmann::json& labels = s["Spec"]["Labels"];
    if (!labels.is_object() || labels.value("berth.job", std::string()) != job_id) continue;
    const nlohmann::json filter = {{"service", {s.value("ID", std::string())}}};
    absl::StatusOr<nlohmann::json> tasks =
        ManagerGet(**http, "/tasks?filters=" + SwarmQueryEscape(filter.dump()));
    if (!tasks.ok()) return tasks.status();
    for (const nlohmann::json& t : *tasks) {
      if (t["Status"].value("State", std::string()) != "running") continue;
      TaskStart out;
      out.node_id = t.value("NodeID", std::string());
      out.container_id = t["Status"]["ContainerStatus"].value("ContainerID", std::string());
      std::optional<absl::Time> created = ParseDockerTime(s.value("CreatedAt", std::string()));
      if (!created.has_value() || out.container_id.empty()) continue;
      out.service_created_at = *created;
      // The container lives on one node: ask each node's own engine.
      for (const char* node : {"mgr", "w1", "w2", "w3", "w4"}) {
        absl::StatusOr<std::unique_ptr<DockerHttp>> n =
            Http(absl::StrCat("unix:///run/berth-swarm/", node, "/docker.sock"));
        if (!n.ok()) continue;
        absl::StatusOr<nlohmann::json> c =
            ManagerGet(**n, absl::StrCat("/containers/", out.container_id, "/json"));
        if (!c.ok()) continue;
        std::optional<absl::Time> started =
            ParseDockerTime((*c)["State"].value("StartedAt", std::string()));
        if (!started.has_value()) continue;
        out.container_started_at = *started;
        return out;
      }
    }
  }
  return absl::NotFoundError(absl::StrCat("no running task of job ", job_id, " on any node"));
}

absl::StatusOr<NodeProcesses> SampleNodeProcesses(const std::string& instance,
                                                  bool skip_unreachable) {
  NodeProcesses out;
  const nlohmann::json filter = {{"label", {absl::StrCat("berth.instance=", instance)}}};
  for (const char* node : {"mgr", "w1", "w2", "w3", "w4"}) {
    const std::string sock = absl::StrCat("/run/berth-swarm/", node, "/docker.sock");
    if (access(sock.c_str(), F_OK) != 0) continue;
    absl::StatusOr<std::unique_ptr<DockerHttp>> http = Http("unix://" + sock);
    if (!http.ok()) return http.status();
    absl::StatusOr<nlohmann::json> info = ManagerGet(**http, "/info");
    if (!info.ok() && skip_unreachable) {
      out.unreachable.push_back(node);
      continue;
    }
    if (!info.ok()) return info.status();
    out.node_ids[node] = (*info)["Swarm"].value("NodeID", std::string());
    absl::StatusOr<nlohmann::json> list =
        ManagerGet(**http, "/containers/json?filters=" + SwarmQueryEscape(filter.dump()));
    if (!list.ok()) return list.status();
    for (const nlohmann::json& c : *list) {
      const nlohmann::json& labels = c["Labels"];
      const std::string job = labels.is_object() ? labels.value("berth.job", std::string()) : "";
      out.nodes_by_job[job].push_back(node);
      absl::StatusOr<nlohmann::json> inspected = ManagerGet(
          **http, absl::StrCat("/containers/", c.value("Id", std::string()), "/json"));
      if (!inspected.ok()) continue;  // ended between the two calls
      out.memory_by_node[node] += (*inspected)["HostConfig"].value("Memory", int64_t{0});
    }
  }
  return out;
}

}  // namespace testing
}  // namespace berth
