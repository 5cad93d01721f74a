#include "executor/runtime/swarm/testing/swarm_test_util.h"

#include <cstdlib>
#include <memory>

#include "absl/strings/str_cat.h"
#include "executor/runtime/docker/docker_http.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
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

absl::StatusOr<int> RemoveInstanceServices(const std::string& instance) {
  DockerEndpoint e;
  e.url = SwarmManagerUrl();
  absl::StatusOr<std::unique_ptr<DockerHttp>> http = DockerHttp::Create(e);
  if (!http.ok()) return http.status();
  const nlohmann::json filter = {
      {"label", {absl::StrCat("berth.instance=", instance)}}};
  HttpRequest list;
  std::string escaped;
  for (unsigned char c : filter.dump()) {
    escaped += isalnum(c) ? std::string(1, static_cast<char>(c))
                          : absl::StrCat("%", absl::Hex(c, absl::kZeroPad2));
  }
  list.path = "/services?filters=" + escaped;
  absl::StatusOr<HttpResponse> resp = (*http)->Do(list);
  if (!resp.ok()) return resp.status();
  const nlohmann::json services =
      nlohmann::json::parse(resp->body, nullptr, /*allow_exceptions=*/false);
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

}  // namespace testing
}  // namespace berth
