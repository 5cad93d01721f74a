// berthd down through a node loss, on the real three-node swarm
// (tools/swarm_cluster.sh up), every node sized 256 MiB: berthd is killed
// (kill -9) while its jobs run, then a worker's dockerd is killed (kill -9)
// and let back; the node's restarted dockerd (no live-restore) kills the
// jobs' containers (SIGTERM: exit 143) and the manager records their tasks
// failed (or it had rejected them while the node was away) -- before
// berthd is back. Restarted, berthd must requeue those jobs
// as lost to the node (they then succeed elsewhere or there), never record
// them FAILED with exit 143; the other jobs are untouched. The target runs
// alone ("exclusive") and outside the sandbox ("local": it signals a node's
// dockerd by pid).
#include <cstdio>
#include <map>
#include <optional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "executor/runtime/swarm/swarm_runtime.h"
#include "executor/runtime/swarm/testing/swarm_test_util.h"
#include "executor/store/store.h"  // IsTerminal
#include "gtest/gtest.h"
#include "tests/swarm_berthd.h"

namespace berth {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kNode = 256 * kMiB;

// The manager's view of one node (by id); nullopt when it does not answer.
std::optional<NodeInfo> ManagerNode(SwarmRuntime& rt, const std::string& id) {
  absl::StatusOr<std::vector<NodeInfo>> nodes = rt.ListNodes();
  if (!nodes.ok()) return std::nullopt;
  for (const NodeInfo& n : *nodes) {
    if (n.id == id) return n;
  }
  return std::nullopt;
}

class BerthdSwarmNodeLossRestart : public ::testing::Test {
 protected:
  void TearDown() override {
    absl::Status s = testing::RestoreCluster(absl::Seconds(90));
    EXPECT_TRUE(s.ok()) << "cluster not restored: " << s;
    if (b_ != nullptr) (void)testing::RemoveInstanceServices(b_->instance());
  }
  std::unique_ptr<BerthdProcess> b_;
};

TEST_F(BerthdSwarmNodeLossRestart, TasksKilledByTheNodesReturnWhileBerthdWasDownAreRequeued) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> started = StartSwarmBerthd(kNode);
  ASSERT_TRUE(started.ok()) << started.status();
  b_ = *std::move(started);
  std::unique_ptr<BerthClient> c = b_->Client(Role::kPusher);
  const std::string p = UniqueJobPrefix() + "r";
  std::vector<std::string> ids;
  v1::Snapshot snap;
  snap.set_generation(1);
  for (int i = 0; i < 4; ++i) {
    ids.push_back(absl::StrCat(p, i));
    // Long enough to still run when the killed node comes back.
    *snap.add_jobs() = BusyboxJob(ids.back(), "ws", 96 * kMiB, "sleep 50; echo done");
  }
  ASSERT_TRUE(c->Sync(snap).ok());
  // RUNNING (berthd's view) once the task runs on a node: pick a worker
  // that runs at least one of them.
  const std::map<std::string, std::string> workers = testing::WorkerNodeIds();
  std::string victim_name, victim_id;
  std::set<std::string> on_victim;
  for (const std::string& id : ids) {
    absl::StatusOr<v1::Job> j = WaitJob(
        *c, id, [](const v1::Job& j) { return j.state() == v1::JOB_STATE_RUNNING; },
        absl::Seconds(60));
    ASSERT_TRUE(j.ok()) << j.status() << b_->Log();
    for (const auto& [name, node_id] : workers) {
      if (j->node() != node_id) continue;
      if (victim_id.empty()) {
        victim_name = name;
        victim_id = node_id;
      }
      if (node_id == victim_id) on_victim.insert(id);
    }
  }
  ASSERT_FALSE(on_victim.empty()) << "no job on a worker";

  // berthd goes away first; then the worker's dockerd.
  b_->Kill9();
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE(testing::KillWorkerDaemon(victim_name).ok());
  std::unique_ptr<SwarmRuntime> rt =
      *SwarmRuntime::Create(testing::SwarmTestOptions(b_->instance()));
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        std::optional<NodeInfo> n = ManagerNode(*rt, victim_id);
        return n.has_value() && n->state != NodeState::kReady;
      },
      absl::Seconds(60)))
      << "the manager never saw " << victim_name << " down";
  const absl::Duration to_down = absl::Now() - t0;
  // The node comes back: its dockerd kills the old containers and the
  // manager records their tasks failed (exit 143) -- berthd still down.
  ASSERT_TRUE(testing::RestoreCluster(absl::Seconds(90)).ok());
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        absl::StatusOr<testing::ClusterSample> s = testing::SampleCluster(b_->instance());
        if (!s.ok()) return false;
        for (const std::string& id : on_victim) {
          if (s->live_nodes_by_job.count(id)) return false;
        }
        return true;
      },
      absl::Seconds(60)))
      << "the lost node's tasks never ended";
  const absl::Time back = absl::Now();

  ASSERT_TRUE(b_->Restart().ok()) << b_->Log();
  c = b_->Client(Role::kPusher);
  for (const std::string& id : ids) {
    absl::StatusOr<v1::Job> j = WaitTerminal(*c, id, absl::Seconds(180));
    ASSERT_TRUE(j.ok()) << j.status() << b_->Log();
    EXPECT_EQ(j->state(), v1::JOB_STATE_SUCCEEDED) << id << ": " << j->message();
    EXPECT_EQ(j->requeue_count(), on_victim.count(id) ? 1 : 0) << id;
  }
  absl::StatusOr<std::vector<v1::Event>> events = EventsUntilTerminal(*c, ids);
  ASSERT_TRUE(events.ok()) << events.status();
  int requeues = 0;
  for (const v1::Event& e : *events) {
    if (!absl::StartsWith(e.job_id(), p)) continue;
    EXPECT_NE(e.state(), v1::JOB_STATE_FAILED) << e.job_id() << ": " << e.message();
    if (e.state() != v1::JOB_STATE_QUEUED || e.previous_state() != v1::JOB_STATE_RUNNING) {
      continue;
    }
    ++requeues;
    EXPECT_TRUE(on_victim.count(e.job_id())) << e.job_id() << " requeued: " << e.message();
    EXPECT_TRUE(absl::StrContains(e.message(), absl::StrCat(victim_id, ")"))) << e.message();
    // Killed by the node's return (the restarted dockerd's SIGTERM), or --
    // when the manager rejected the task while the node was away ("assigned
    // node no longer meets constraints") -- ended by swarm: a loss either way.
    EXPECT_TRUE(absl::StrContains(e.message(), "not the job's failure") ||
                absl::StrContains(e.message(), "swarm ended the task on"))
        << e.message();
    EXPECT_FALSE(e.has_exit_code()) << e.exit_code();
    std::printf("berthd down through the loss of %s: %s requeued %s after berthd came back "
                "(%s)\n",
                victim_name.c_str(), e.job_id().c_str(),
                absl::FormatDuration(absl::FromUnixSeconds(e.time().seconds()) +
                                          absl::Nanoseconds(e.time().nanos()) - back)
                    .c_str(),
                e.message().c_str());
  }
  EXPECT_EQ(requeues, static_cast<int>(on_victim.size()));
  std::printf("node %s seen down by the manager %s after its dockerd was killed\n",
              victim_name.c_str(), absl::FormatDuration(to_down).c_str());
}

}  // namespace
}  // namespace berth
