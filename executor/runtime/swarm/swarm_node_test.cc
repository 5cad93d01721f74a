// Node handling against the real swarm: a drained node and a node whose
// dockerd is killed, as SwarmRuntime observes them. Takes a worker down and
// brings it back (through the keeper of tools/swarm_cluster.sh), so it runs
// alone ("exclusive") and outside the sandbox ("local": it signals the node's
// dockerd by pid).
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "executor/runtime/swarm/swarm_runtime.h"
#include "executor/runtime/swarm/testing/swarm_test_util.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using testing::WaitFor;

void SetAvailability(const std::string& node, const std::string& a) {
  absl::Status s = testing::SetNodeAvailability(node, a);
  ASSERT_TRUE(s.ok()) << s;
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

TEST_F(SwarmNodeTest, KilledWorkersTaskIsHeldUntilTheNodeIsBackAndItEnded) {
  std::vector<NodeInfo> workers = testing::ReadyWorkers(*rt_);
  ASSERT_GE(workers.size(), 1u);
  // Which worker daemon is which node: ask each worker's own socket.
  std::string victim_name, victim_id;
  for (const auto& [name, id] : testing::WorkerNodeIds()) {
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
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE(testing::KillWorkerDaemon(victim_name).ok());
  ASSERT_TRUE(WaitFor([&] { return Node(victim_id).state == NodeState::kDown; },
                      absl::Seconds(60)));
  const absl::Duration to_down = absl::Now() - t0;
  // Its container still runs under the node's containerd: held as running,
  // the reason naming the node; nothing to classify.
  EXPECT_TRUE(StateIs("on-victim", ContainerState::kRunning));
  absl::StatusOr<ContainerObservation> held = rt_->Inspect("on-victim");
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_FALSE(held->lost);
  EXPECT_NE(held->error.find(victim_id), std::string::npos) << held->error;
  EXPECT_FALSE(ClassifyExit(*held, StopIntent::kNone).has_value());
  // The node comes back; its dockerd (no live-restore) ends the container;
  // after the settle the attempt counts as ended: lost, requeued.
  const absl::Time back = absl::Now();
  absl::Status restored = testing::RestoreCluster(absl::Seconds(60));
  ASSERT_TRUE(restored.ok()) << restored;
  ASSERT_TRUE(WaitFor([&] { return StateIs("on-victim", ContainerState::kDead); },
                      absl::Seconds(60)));
  const absl::Duration to_lost = absl::Now() - back;
  absl::StatusOr<ContainerObservation> obs = rt_->Inspect("on-victim");
  ASSERT_TRUE(obs.ok()) << obs.status();
  EXPECT_TRUE(obs->lost) << obs->error;
  EXPECT_NE(obs->error.find("came back"), std::string::npos) << obs->error;
  EXPECT_EQ(ClassifyExit(*obs, StopIntent::kNone)->kind, ExitKind::kRequeued);
  EXPECT_TRUE(rt_->Remove("on-victim").ok());
  std::printf("worker %s Down %s after its dockerd was killed; task lost %s after the node "
              "was let back\n",
              victim_id.c_str(), absl::FormatDuration(to_down).c_str(),
              absl::FormatDuration(to_lost).c_str());
}

}  // namespace
}  // namespace berth
