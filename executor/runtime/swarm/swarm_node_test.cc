// Node handling against the real swarm: a drained node and a node whose
// dockerd is killed, as SwarmRuntime observes them. Takes a worker down and
// brings it back (tools/swarm_cluster.sh up), so it runs alone ("exclusive")
// and outside the sandbox ("local": it signals the node's dockerd by pid).
#include <signal.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "executor/runtime/docker/docker_http.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "executor/runtime/swarm/swarm_runtime.h"
#include "executor/runtime/swarm/testing/swarm_test_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace berth {
namespace {

using testing::WaitFor;

// POST /nodes/{id}/update with availability `a` (the manager's API).
void SetAvailability(const std::string& node, const std::string& a) {
  DockerEndpoint e;
  e.url = testing::SwarmManagerUrl();
  std::unique_ptr<DockerHttp> http = *DockerHttp::Create(e);
  HttpRequest get;
  get.path = "/nodes/" + node;
  absl::StatusOr<HttpResponse> r = http->Do(get);
  ASSERT_TRUE(r.ok() && r->status == 200);
  nlohmann::json n = nlohmann::json::parse(r->body);
  nlohmann::json spec = n["Spec"];
  spec["Availability"] = a;
  HttpRequest upd;
  upd.method = "POST";
  upd.path = absl::StrCat("/nodes/", node, "/update?version=",
                          n["Version"]["Index"].get<int64_t>());
  upd.body = spec.dump();
  r = http->Do(upd);
  ASSERT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : r.status().ToString());
}

class SwarmNodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::SwarmAvailable()) {
      FAIL() << "no swarm manager at " << testing::SwarmManagerUrl()
             << "; run: bash tools/swarm_cluster.sh up (or leave the swarm tests out"
             << " with --test_tag_filters=-swarm)";
    }
    instance_ = testing::UniqueName("swarmnode");
    rt_ = *SwarmRuntime::Create(testing::SwarmTestOptions(instance_));
  }
  void TearDown() override {
    if (!instance_.empty()) (void)testing::RemoveInstanceServices(instance_);
  }
  NodeInfo Node(const std::string& id) {
    absl::StatusOr<std::vector<NodeInfo>> nodes = rt_->ListNodes();
    if (!nodes.ok()) return NodeInfo{};
    for (const NodeInfo& n : *nodes) {
      if (n.id == id) return n;
    }
    return NodeInfo{};
  }
  ContainerSpec Pinned(const std::string& job, const std::string& node,
                       std::vector<std::string> argv) {
    ContainerSpec s = testing::TestSpec(job, std::move(argv));
    s.memory_bytes = 32 << 20;
    s.node = node;
    return s;
  }
  bool StateIs(const std::string& job, ContainerState want) {
    absl::StatusOr<ContainerList> l = rt_->List();
    return l.ok() && l->count(job) && l->at(job).state == want;
  }
  std::string instance_;
  std::unique_ptr<SwarmRuntime> rt_;
};

TEST_F(SwarmNodeTest, DrainedNodeIsObservedAndTakesNoNewJob) {
  std::vector<NodeInfo> workers = testing::ReadyWorkers(*rt_);
  ASSERT_GE(workers.size(), 1u);
  const std::string w = workers[0].id;
  ASSERT_TRUE(rt_->Start(Pinned("before-drain", w, {"sleep", "3"})).ok());
  ASSERT_TRUE(WaitFor([&] { return StateIs("before-drain", ContainerState::kRunning); },
                      absl::Seconds(30)));
  SetAvailability(w, "drain");
  EXPECT_EQ(Node(w).availability, NodeAvailability::kDrain);
  EXPECT_FALSE(AcceptsJobs(Node(w)));
  // A job placed there now waits (Swarm will not schedule on a drained node).
  ASSERT_TRUE(rt_->Start(Pinned("after-drain", w, {"true"})).ok());
  // Swarm lets a running job finish on a drained node (it does not move
  // jobs): the reconciler decides whether to requeue it.
  absl::StatusOr<ContainerObservation> first =
      testing::WaitFinished(*rt_, "before-drain", absl::Seconds(30));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(ClassifyExit(*first, StopIntent::kNone)->kind, ExitKind::kSucceeded);
  EXPECT_TRUE(StateIs("after-drain", ContainerState::kCreated));
  SetAvailability(w, "active");
  absl::StatusOr<ContainerObservation> second =
      testing::WaitFinished(*rt_, "after-drain", absl::Seconds(30));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->node_id, w);
}

TEST_F(SwarmNodeTest, KilledWorkerIsDownAndItsTaskLost) {
  std::vector<NodeInfo> workers = testing::ReadyWorkers(*rt_);
  ASSERT_GE(workers.size(), 1u);
  // Which worker daemon is which node: ask each worker's own socket.
  std::string victim_name, victim_id;
  for (const char* name : {"w1", "w2", "w3"}) {
    DockerEndpoint e;
    e.url = absl::StrCat("unix:///run/berth-swarm/", name, "/docker.sock");
    std::unique_ptr<DockerHttp> http = *DockerHttp::Create(e);
    HttpRequest info;
    info.path = "/info";
    absl::StatusOr<HttpResponse> r = http->Do(info);
    if (!r.ok() || r->status != 200) continue;
    const std::string id =
        nlohmann::json::parse(r->body)["Swarm"].value("NodeID", std::string());
    if (AcceptsJobs(Node(id))) {
      victim_name = name;
      victim_id = id;
      break;
    }
  }
  ASSERT_FALSE(victim_id.empty());
  ASSERT_TRUE(rt_->Start(Pinned("on-victim", victim_id, {"sleep", "300"})).ok());
  ASSERT_TRUE(WaitFor([&] { return StateIs("on-victim", ContainerState::kRunning); },
                      absl::Seconds(30)));
  std::ifstream pidfile(absl::StrCat("/run/berth-swarm/", victim_name, "/docker.pid"));
  int pid = 0;
  ASSERT_TRUE(pidfile >> pid);
  const absl::Time t0 = absl::Now();
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  ASSERT_TRUE(WaitFor([&] { return Node(victim_id).state == NodeState::kDown; },
                      absl::Seconds(60)));
  const absl::Duration to_down = absl::Now() - t0;
  EXPECT_TRUE(StateIs("on-victim", ContainerState::kDead));
  absl::StatusOr<ContainerObservation> obs = rt_->Inspect("on-victim");
  ASSERT_TRUE(obs.ok()) << obs.status();
  EXPECT_TRUE(obs->lost) << obs->error;
  EXPECT_EQ(ClassifyExit(*obs, StopIntent::kNone)->kind, ExitKind::kRequeued);
  EXPECT_TRUE(rt_->Remove("on-victim").ok());  // the manager forgets it
  std::printf("worker %s Down %s after its dockerd was killed\n", victim_id.c_str(),
              absl::FormatDuration(to_down).c_str());
  // Bring the worker back for the next tests.
  const char* script = std::getenv("SWARM_CLUSTER_SH");
  ASSERT_NE(script, nullptr);
  ASSERT_EQ(std::system(absl::StrCat("PATH=/usr/sbin:/sbin:$PATH bash ", script, " up >/dev/null 2>&1").c_str()), 0);
  EXPECT_TRUE(WaitFor([&] { return Node(victim_id).state == NodeState::kReady; },
                      absl::Seconds(60)));
}

}  // namespace
}  // namespace berth
