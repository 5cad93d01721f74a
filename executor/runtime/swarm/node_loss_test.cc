#include "executor/runtime/swarm/node_loss.h"

#include <optional>
#include <string>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'800'000'000);

SwarmTask TaskOn(const std::string& node, const std::string& state) {
  SwarmTask t;
  t.id = "t1";
  t.service_id = "s1";
  t.node_id = node;
  t.state = state;
  return t;
}

NodeInfo Node(const std::string& id, NodeState state) {
  NodeInfo n;
  n.id = id;
  n.hostname = "host-" + id;
  n.state = state;
  return n;
}

TEST(NodeLossTrackerTest, RecordsLossReturnAndRemoval) {
  NodeLossTracker tr;
  tr.Update({Node("a", NodeState::kReady), Node("b", NodeState::kReady)}, kT0);
  EXPECT_EQ(tr.Find("a"), nullptr);
  tr.Update({Node("a", NodeState::kDown), Node("b", NodeState::kReady)}, kT0 + absl::Seconds(1));
  ASSERT_NE(tr.Find("a"), nullptr);
  EXPECT_EQ(tr.Find("a")->lost_at, kT0 + absl::Seconds(1));
  EXPECT_EQ(tr.Find("a")->hostname, "host-a");
  EXPECT_EQ(tr.Lost().size(), 1u);
  // Still down: the loss keeps its first time.
  tr.Update({Node("a", NodeState::kDown)}, kT0 + absl::Seconds(5));
  EXPECT_EQ(tr.Find("a")->lost_at, kT0 + absl::Seconds(1));
  tr.Update({Node("a", NodeState::kReady)}, kT0 + absl::Seconds(9));
  ASSERT_TRUE(tr.Find("a")->back_at.has_value());
  EXPECT_EQ(*tr.Find("a")->back_at, kT0 + absl::Seconds(9));
  EXPECT_TRUE(tr.Lost().empty());
  // Lost again after it was back: a new loss, timed from now (the grace
  // counts from it, not from the first loss).
  tr.Update({Node("a", NodeState::kDown)}, kT0 + absl::Seconds(20));
  EXPECT_EQ(tr.Find("a")->lost_at, kT0 + absl::Seconds(20));
  EXPECT_FALSE(tr.Find("a")->back_at.has_value());
  EXPECT_EQ(tr.Lost().size(), 1u);
  tr.Update({Node("a", NodeState::kDown)}, kT0 + absl::Seconds(25));
  EXPECT_EQ(tr.Find("a")->lost_at, kT0 + absl::Seconds(20));
  tr.Update({Node("b", NodeState::kReady)}, kT0 + absl::Seconds(30));
  EXPECT_TRUE(tr.Find("a")->removed);
  tr.UpdateOne("c", Node("c", NodeState::kUnknown), kT0);
  EXPECT_NE(tr.Find("c"), nullptr);
  tr.UpdateOne("c", std::nullopt, kT0);
  EXPECT_TRUE(tr.Find("c")->removed);
}

struct FenceCase {
  const char* name;
  std::string task_state;
  std::string container_id;
  std::optional<NodeState> node;  // nullopt: removed from the swarm
  bool lost_before = true;        // the tracker saw the node lost at kT0
  std::optional<absl::Duration> back_after;
  absl::Duration now_after;
  absl::Duration grace;
  FenceVerdict want;
  ContainerState want_state;
};

TEST(FenceTaskTest, Table) {
  const absl::Duration s = absl::Seconds(1);
  const FenceCase cases[] = {
      {"running on ready node", "running", "c", NodeState::kReady, false, {}, s, {},
       FenceVerdict::kAsObserved, ContainerState::kRunning},
      {"complete on down node: the agent said so", "complete", "c", NodeState::kDown, true, {},
       s, {}, FenceVerdict::kAsObserved, ContainerState::kExited},
      {"running on down node: held", "running", "c", NodeState::kDown, true, {}, 600 * s, {},
       FenceVerdict::kHold, ContainerState::kRunning},
      {"assigned on down node: held, not running", "assigned", "", NodeState::kDown, true, {},
       s, {}, FenceVerdict::kHold, ContainerState::kCreated},
      {"rejected by the manager while down: held", "rejected", "c", NodeState::kDown, true, {},
       s, {}, FenceVerdict::kHold, ContainerState::kRunning},
      {"down past the grace", "running", "c", NodeState::kDown, true, {}, 61 * s, 60 * s,
       FenceVerdict::kRequeue, ContainerState::kDead},
      {"down within the grace", "running", "c", NodeState::kDown, true, {}, 59 * s, 60 * s,
       FenceVerdict::kHold, ContainerState::kRunning},
      {"removed from the swarm", "running", "c", std::nullopt, true, {}, s, {},
       FenceVerdict::kRequeue, ContainerState::kDead},
      {"back, ended, still settling", "shutdown", "c", NodeState::kReady, true, 10 * s, 20 * s,
       {}, FenceVerdict::kHold, ContainerState::kRunning},
      {"back, ended, settled", "shutdown", "c", NodeState::kReady, true, 10 * s, 26 * s, {},
       FenceVerdict::kRequeue, ContainerState::kDead},
      {"back and still running: runs on", "running", "c", NodeState::kReady, true, 10 * s,
       11 * s, {}, FenceVerdict::kAsObserved, ContainerState::kRunning},
      {"ended by swarm, node never lost", "shutdown", "c", NodeState::kReady, false, {}, s, {},
       FenceVerdict::kRequeue, ContainerState::kDead},
      {"failed (killed by the restarted dockerd) after the loss, settled", "failed", "c",
       NodeState::kReady, true, 10 * s, 26 * s, {}, FenceVerdict::kRequeue,
       ContainerState::kDead},
      {"failed after the loss, still settling", "failed", "c", NodeState::kReady, true, 10 * s,
       12 * s, {}, FenceVerdict::kHold, ContainerState::kRunning},
      {"failed on a node never lost", "failed", "c", NodeState::kReady, false, {}, s, {},
       FenceVerdict::kAsObserved, ContainerState::kExited},
      {"start refused on ready node", "rejected", "", NodeState::kReady, false, {}, s, {},
       FenceVerdict::kAsObserved, ContainerState::kDead},
  };
  NodeLossOptions o;
  o.rejoin_settle = absl::Seconds(15);
  for (const FenceCase& c : cases) {
    SCOPED_TRACE(c.name);
    SwarmTask t = TaskOn("n1", c.task_state);
    t.container_id = c.container_id;
    t.exit_code = c.task_state == "failed" ? 137 : 0;
    t.status_at = kT0 + absl::Seconds(3);
    std::optional<NodeInfo> node;
    if (c.node.has_value()) node = Node("n1", *c.node);
    NodeLoss loss;
    loss.hostname = "host-n1";
    loss.lost_at = kT0;
    if (c.back_after.has_value()) loss.back_at = kT0 + *c.back_after;
    o.lost_grace = c.grace;
    const Fence f = FenceTask(t, node, c.lost_before ? &loss : nullptr, kT0 + c.now_after, o);
    EXPECT_EQ(f.verdict, c.want) << f.reason;
    const ContainerObservation obs = ObserveFencedTask(t, f);
    EXPECT_EQ(obs.state, c.want_state);
    if (f.verdict != FenceVerdict::kAsObserved) {
      EXPECT_NE(f.reason.find("n1"), std::string::npos) << f.reason;
      EXPECT_EQ(obs.error, f.reason);
      EXPECT_EQ(obs.held, f.verdict == FenceVerdict::kHold ? f.reason : "");
      EXPECT_EQ(obs.lost, f.verdict == FenceVerdict::kRequeue);
    }
  }
}

// Berth never saw the node lost (berthd was down through the loss), but the
// manager ended the task without its node: settle from the node record's
// last change (its return), as from a loss Berth saw come back.
TEST(FenceTaskTest, AnUnseenLossSettlesFromTheNodeRecordsChange) {
  NodeLossOptions o;
  o.rejoin_settle = absl::Seconds(15);
  SwarmTask t = TaskOn("n1", "shutdown");
  t.container_id = "c";
  NodeInfo n = Node("n1", NodeState::kReady);
  n.updated_at = kT0;
  const Fence settling = FenceTask(t, n, nullptr, kT0 + absl::Seconds(5), o);
  EXPECT_EQ(settling.verdict, FenceVerdict::kHold) << settling.reason;
  EXPECT_TRUE(absl::StrContains(settling.reason, "requeue after")) << settling.reason;
  EXPECT_TRUE(absl::StrContains(settling.reason, "host-n1")) << settling.reason;
  EXPECT_EQ(ObserveFencedTask(t, settling).state, ContainerState::kRunning);
  const Fence settled = FenceTask(t, n, nullptr, kT0 + absl::Seconds(16), o);
  EXPECT_EQ(settled.verdict, FenceVerdict::kRequeue) << settled.reason;
}

// berthd was down (kill -9) through a worker's loss and return: the node's
// restarted dockerd killed the job's container (SIGTERM: exit 143) and the
// agent reported the task failed -- the same record as a job that killed
// itself. Killed by signal around the node record's change (its return) is
// the loss, requeued; any other failure is the job's own.
TEST(FenceTaskTest, KilledWhenItsNodeCameBackWhileBerthdWasDownIsTheLoss) {
  NodeLossOptions o;
  o.rejoin_settle = absl::Seconds(15);
  NodeInfo n = Node("n1", NodeState::kReady);
  n.updated_at = kT0;
  struct Case {
    const char* name;
    int exit_code;
    absl::Duration failed_after_change;  // task's Status.Timestamp - node's UpdatedAt
    FenceVerdict want;
  };
  const absl::Duration s = absl::Seconds(1);
  const Case cases[] = {
      {"SIGTERM by the restored dockerd, just before the agent re-registered", 143,
       -absl::Milliseconds(27), FenceVerdict::kRequeue},
      {"SIGKILL after the stop grace, 12 s before", 137, -12 * s,
       FenceVerdict::kRequeue},
      {"stopped by the agent after its return", 143, 10 * s,
       FenceVerdict::kRequeue},
      {"the job's own exit code at the return", 1, -s,
       FenceVerdict::kAsObserved},
      {"SIGTERM long after the node changed: the job's own", 143, absl::Minutes(20),
       FenceVerdict::kAsObserved},
      {"SIGTERM long before the node changed: the job's own", 143, -absl::Minutes(2),
       FenceVerdict::kAsObserved},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    SwarmTask t = TaskOn("n1", "failed");
    t.container_id = "c";
    t.exit_code = c.exit_code;
    t.err = absl::StrCat("task: non-zero exit (", c.exit_code, ")");
    t.status_at = kT0 + c.failed_after_change;
    // berthd (re)started after the failure: its tracker never saw the loss.
    const absl::Time now = std::max(kT0, *t.status_at) + absl::Seconds(30);
    const Fence f = FenceTask(t, n, nullptr, now, o);
    EXPECT_EQ(f.verdict, c.want) << f.reason;
    const ContainerObservation obs = ObserveFencedTask(t, f);
    if (c.want == FenceVerdict::kRequeue) {
      EXPECT_EQ(obs.state, ContainerState::kDead);
      EXPECT_TRUE(obs.lost);
      EXPECT_EQ(obs.exit_code, 0) << "a lost attempt has no exit code of its own";
      EXPECT_TRUE(absl::StrContains(f.reason, "host-n1 (n1)")) << f.reason;
      EXPECT_TRUE(absl::StrContains(f.reason, "not the job's failure")) << f.reason;
    } else {
      EXPECT_EQ(obs.state, ContainerState::kExited);
      EXPECT_FALSE(obs.lost);
      EXPECT_EQ(obs.exit_code, c.exit_code);
    }
  }
}

// The same from the manager's own answers, recorded on the test swarm (a
// worker's dockerd killed -9 for 50 s, then let back; berthd not running):
// the task and its node as GET /tasks and GET /nodes/{id} gave them.
TEST(FenceTaskTest, RecordedAnswersOfAnUnseenLossReadAsLostNotFailed) {
  const char* kTask = R"json([{"ID": "0vl52211lmfq38n70z7dskvcd",
    "ServiceID": "spwmp2cvq2v6od28hlu0mephn", "NodeID": "ujrgqdbgzbs3fizfc7ds8qxan",
    "Status": {"Timestamp": "2026-11-27T11:15:25.116861559Z", "State": "failed",
               "Message": "started", "Err": "task: non-zero exit (143)",
               "ContainerStatus": {"ContainerID": "14940e8e53d5", "PID": 0, "ExitCode": 143}},
    "DesiredState": "shutdown"}])json";
  const char* kNode = R"({"ID": "ujrgqdbgzbs3fizfc7ds8qxan",
    "UpdatedAt": "2026-11-27T11:15:25.143197148Z",
    "Spec": {"Labels": {}, "Role": "worker", "Availability": "active"},
    "Description": {"Hostname": "vm",
                    "Resources": {"NanoCPUs": 2000000000, "MemoryBytes": 25276026880}},
    "Status": {"State": "ready", "Addr": "10.231.0.3"}})";
  absl::StatusOr<std::vector<SwarmTask>> tasks = ParseTaskList(kTask);
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  ASSERT_EQ(tasks->size(), 1u);
  absl::StatusOr<NodeInfo> node = ParseNode(kNode);
  ASSERT_TRUE(node.ok()) << node.status();
  NodeLossOptions o;
  o.rejoin_settle = absl::Seconds(12);  // --stop_grace=2s + the 10 s margin
  // berthd back a minute later: a fresh tracker, the node Ready.
  NodeLossTracker tracker;
  const absl::Time now = absl::FromUnixSeconds(1'795'778'185);  // 11:16:25 UTC
  tracker.Update({*node}, now);
  const SwarmTask& t = tasks->front();
  const Fence f = FenceTask(t, *node, tracker.Find(t.node_id), now, o);
  EXPECT_EQ(f.verdict, FenceVerdict::kRequeue) << f.reason;
  const ContainerObservation obs = ObserveFencedTask(t, f);
  EXPECT_EQ(obs.state, ContainerState::kDead);
  EXPECT_TRUE(obs.lost);
  EXPECT_EQ(obs.exit_code, 0);
  EXPECT_EQ(f.reason,
            "the task on node vm (ujrgqdbgzbs3fizfc7ds8qxan) was killed by signal (143) at "
            "2026-11-27 11:15:25 UTC, when the node came back (its record changed at "
            "2026-11-27 11:15:25 UTC; berthd did not see the loss): counted as the node's "
            "loss, not the job's failure");
  // Without the node's return beside it (the node record changed long
  // before), the same task is the job's own failure.
  NodeInfo steady = *node;
  steady.updated_at = *steady.updated_at - absl::Hours(1);
  EXPECT_EQ(FenceTask(t, steady, nullptr, now, o).verdict, FenceVerdict::kAsObserved);
}

TEST(FenceTaskTest, ReasonsNameTheNodeAndWhy) {
  NodeLossOptions o;
  o.lost_grace = absl::Minutes(5);
  NodeLoss loss;
  loss.hostname = "w1";
  loss.lost_at = kT0;
  const Fence held = FenceTask(TaskOn("n1", "running"), Node("n1", NodeState::kDown), &loss,
                               kT0 + absl::Seconds(1), o);
  EXPECT_EQ(held.reason,
            "requeue after 2027-01-15 08:05:00 UTC (--swarm_node_lost_grace): node host-n1 (n1) "
            "lost at 2027-01-15 08:00:00 UTC; sooner if it comes back and its attempt ends. If "
            "the node is known dead, `docker node rm --force n1` requeues now");
  o.lost_grace = absl::ZeroDuration();
  const Fence untimed = FenceTask(TaskOn("n1", "running"), Node("n1", NodeState::kDown), &loss,
                                  kT0 + absl::Seconds(1), o);
  EXPECT_EQ(untimed.reason,
            "requeue once the node is back and its attempt has ended: node host-n1 (n1) lost "
            "at 2027-01-15 08:00:00 UTC. If the node is known dead, `docker node rm --force n1` "
            "requeues now");
  loss.back_at = kT0 + absl::Seconds(30);
  const Fence settling =
      FenceTask(TaskOn("n1", "shutdown"), Node("n1", NodeState::kReady), &loss,
                kT0 + absl::Seconds(31), o);
  EXPECT_EQ(settling.verdict, FenceVerdict::kHold);
  EXPECT_EQ(settling.reason,
            "requeue after 2027-01-15 08:00:45 UTC: node host-n1 (n1) lost at 2027-01-15 "
            "08:00:00 UTC is back since 2027-01-15 08:00:30 UTC; its agent stops the old "
            "attempt meanwhile");
  const Fence gone = FenceTask(TaskOn("n1", "running"), std::nullopt, &loss, kT0, o);
  EXPECT_EQ(gone.reason,
            "node w1 (n1) lost at 2027-01-15 08:00:00 UTC was removed from the swarm: its "
            "attempt counts as ended");
}

// A task that ended by itself on a node lost while it ran keeps its own
// outcome, with a note that its log may lack what it wrote meanwhile; a task
// that ran wholly before the loss or after the return gets none.
TEST(FenceTaskTest, ATaskThatRanThroughItsNodesLossCarriesALogNote) {
  NodeLoss loss;
  loss.hostname = "vm";
  loss.lost_at = kT0;
  loss.back_at = kT0 + absl::Seconds(30);
  const NodeInfo ready = Node("n1", NodeState::kReady);
  SwarmTask t = TaskOn("n1", "complete");
  t.created_at = kT0 - absl::Seconds(10);
  t.status_at = kT0 + absl::Seconds(31);
  const Fence f = FenceTask(t, ready, &loss, kT0 + absl::Minutes(1), NodeLossOptions());
  EXPECT_EQ(f.verdict, FenceVerdict::kAsObserved);
  EXPECT_EQ(f.log_note,
            "ran while node host-n1 (n1) was lost (from 2027-01-15 08:00:00 UTC to 2027-01-15 "
            "08:00:30 UTC): output written while its engine was unreachable may be missing "
            "from the log");
  const ContainerObservation obs = ObserveFencedTask(t, f);
  EXPECT_EQ(obs.state, ContainerState::kExited);
  EXPECT_EQ(obs.exit_code, 0);
  EXPECT_FALSE(obs.lost);
  EXPECT_EQ(obs.log_note, f.log_note);

  SwarmTask before = t;  // ended over a minute before the loss was seen
  before.status_at = kT0 - absl::Minutes(2);
  EXPECT_TRUE(FenceTask(before, ready, &loss, kT0 + absl::Minutes(1), NodeLossOptions())
                  .log_note.empty());
  SwarmTask after = t;  // created once the node was back
  after.created_at = kT0 + absl::Seconds(40);
  after.status_at = kT0 + absl::Seconds(50);
  EXPECT_TRUE(FenceTask(after, ready, &loss, kT0 + absl::Minutes(1), NodeLossOptions())
                  .log_note.empty());
  EXPECT_TRUE(FenceTask(t, ready, nullptr, kT0 + absl::Minutes(1), NodeLossOptions())
                  .log_note.empty());
}

}  // namespace
}  // namespace berth
