// The reconciler with a node inventory in its budgets (a Swarm backend): the
// planner's node reaches the runtime (ContainerSpec::node, with the attempt)
// and the store (Job.node), and running jobs hold their node in later plans.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/reconcile/held_jobs.h"
#include "executor/reconcile/node_budgets.h"
#include "executor/reconcile/plan_snapshot.h"
#include "executor/reconcile/reconciler.h"
#include "executor/reconcile/testing/test_jobs.h"
#include "executor/runtime/fake_runtime.h"
#include "executor/runtime/faulty_runtime.h"
#include "executor/store/memory_store.h"
#include "gtest/gtest.h"
#include "planner/base/simulated_clock.h"

namespace berth {
namespace {

using testing::kGiB;

v1::Budgets TwoNodes() {
  v1::Budgets b;  // cluster-wide fields 0: the nodes' sums
  for (const char* id : {"n1", "n2"}) {
    v1::Node* n = b.add_nodes();
    n->set_id(id);
    n->set_memory_bytes(16 * kGiB);
    n->set_cpu_millis(8000);
  }
  return b;
}

class ReconcilerNodesTest : public ::testing::Test {
 protected:
  ReconcilerNodesTest()
      : plans_(store_, clock_, TwoNodes(), planner::Policy()),
        reconciler_(store_, runtime_, clock_, plans_, WithHeld(&held_)) {}

  static ReconcilerOptions WithHeld(HeldJobs* held) {
    ReconcilerOptions o;
    o.held = held;
    return o;
  }

  void Sync(uint64_t generation, std::vector<v1::JobSpec> jobs) {
    SnapshotRequest r;
    r.generation = generation;
    r.jobs = std::move(jobs);
    r.options.allow_mass_cancel = true;
    ASSERT_TRUE(store_.ApplySnapshot(r, clock_.Now()).ok());
  }

  void Pass() {
    absl::StatusOr<PassStats> stats = reconciler_.RunPass();
    ASSERT_TRUE(stats.ok()) << stats.status();
  }

  v1::Job Get(const std::string& id) {
    absl::StatusOr<StoredJob> j = store_.GetJob(id);
    EXPECT_TRUE(j.ok()) << j.status();
    return j.ok() ? j->job : v1::Job();
  }

  SimulatedClock clock_;
  MemoryStore store_;
  HeldJobs held_;
  FakeRuntime runtime_;
  PlanCache plans_;
  Reconciler reconciler_;
};

TEST_F(ReconcilerNodesTest, ThePlannersNodeReachesTheRuntimeAndTheStore) {
  Sync(1, {testing::TestJob("a", 12)});
  Pass();
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Get("a").node(), "n1");  // equal nodes: the first by id
  EXPECT_EQ(runtime_.last_spec("a").node, "n1");
  EXPECT_EQ(runtime_.last_spec("a").attempt, 0);

  // a holds 12 GiB of n1: b (10 GiB) goes to n2, where it fits.
  clock_.Advance(absl::Seconds(2));
  Sync(2, {testing::TestJob("a", 12), testing::TestJob("b", 10)});
  Pass();
  EXPECT_EQ(Get("b").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Get("b").node(), "n2");
  EXPECT_EQ(runtime_.last_spec("b").node, "n2");
}

// A job the runtime holds (its node was lost) stays RUNNING, and every pass
// publishes the hold with the runtime's reason for ExplainJob until the
// runtime releases it.
TEST_F(ReconcilerNodesTest, HeldJobsArePublishedEveryPass) {
  Sync(1, {testing::TestJob("a", 4), testing::TestJob("b", 4)});
  Pass();
  ASSERT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(held_.size(), 0);
  const std::string why = "requeue once the node is back and its attempt has ended: node w1 "
                          "(n1) lost at 2023-11-14 22:13:20 UTC";
  ASSERT_TRUE(runtime_.Hold("a", why).ok());
  clock_.Advance(absl::Seconds(2));
  Pass();
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(held_.Get("a"), std::optional<std::string>(why));
  EXPECT_EQ(held_.Get("b"), std::nullopt);
  EXPECT_EQ(held_.size(), 1);

  ASSERT_TRUE(runtime_.Hold("a", "").ok());
  clock_.Advance(absl::Seconds(2));
  Pass();
  EXPECT_EQ(held_.Get("a"), std::nullopt);
  EXPECT_EQ(held_.size(), 0);
}

TEST_F(ReconcilerNodesTest, AJobLargerThanEveryNodeIsNeverAdmitted) {
  // 32 GiB in all, 16 per node. (Ingest rejects it first in berthd:
  // server/ingest/job_validation.cc; here the store takes it as is.)
  Sync(1, {testing::TestJob("big", 20)});
  Pass();
  EXPECT_EQ(Get("big").state(), v1::JOB_STATE_QUEUED);
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> snap = plans_.Get();
  ASSERT_TRUE(snap.ok());
  ASSERT_EQ((*snap)->result.decisions.size(), 1u);
  EXPECT_EQ((*snap)->result.decisions[0].reason, planner::Reason::kNeverFits);
  EXPECT_TRUE((*snap)->result.placements[0].on_node);
}

NodeInfo Info(const std::string& id, int64_t memory_gib,
              NodeAvailability availability = NodeAvailability::kActive) {
  NodeInfo n;
  n.id = id;
  n.memory_bytes = memory_gib * kGiB;
  n.nano_cpus = int64_t{4} * 1'000'000'000;
  n.state = NodeState::kReady;
  n.availability = availability;
  return n;
}

// A reconciler whose inventory follows the fake runtime's node list, as
// berthd --runtime=swarm builds it.
struct NodeListHarness {
  NodeListHarness() : plans(store, clock, Defaults(), planner::Policy()), nodes(NodeBudgetsOptions{}) {
    plans.set_node_budgets(&nodes);
    ReconcilerOptions o;
    o.node_budgets = &nodes;
    reconciler = std::make_unique<Reconciler>(store, faulty, clock, plans, o);
  }
  static v1::Budgets Defaults() {
    v1::Budgets b;  // sized from the nodes
    b.set_max_workers(10);
    return b;
  }
  void Pass() {
    clock.Advance(absl::Seconds(2));
    absl::StatusOr<PassStats> s = reconciler->RunPass();
    ASSERT_TRUE(s.ok()) << s.status();
  }
  v1::Job Job(const std::string& id) {
    absl::StatusOr<StoredJob> j = store.GetJob(id);
    EXPECT_TRUE(j.ok()) << j.status();
    return j.ok() ? j->job : v1::Job();
  }
  void Sync(std::vector<v1::JobSpec> jobs) {
    SnapshotRequest r;
    r.generation = 1;
    r.jobs = std::move(jobs);
    ASSERT_TRUE(store.ApplySnapshot(r, clock.Now()).ok());
  }
  SimulatedClock clock;
  MemoryStore store;
  FakeRuntime runtime;
  FaultyRuntime faulty{runtime};  // what the reconciler talks to
  PlanCache plans;
  NodeBudgets nodes;
  std::unique_ptr<Reconciler> reconciler;
};

// berthd --runtime=swarm: the inventory follows Runtime::ListNodes() from
// pass to pass, without a restart.
TEST(ReconcilerNodeListTest, JoinedNodesAddCapacityDrainedNodesGetNoJobs) {
  NodeListHarness h;
  FakeRuntime& runtime = h.runtime;
  auto pass = [&] { h.Pass(); };
  auto job = [&](const std::string& id) { return h.Job(id); };

  runtime.set_nodes({Info("w1", 8), Info("w2", 16, NodeAvailability::kDrain)});
  h.Sync({testing::TestJob("a", 6), testing::TestJob("b", 6)});
  pass();
  // w2 is drained: only w1 (8 GiB) takes jobs, one of the two.
  EXPECT_EQ(job("a").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(job("a").node(), "w1");
  EXPECT_EQ(job("b").state(), v1::JOB_STATE_QUEUED);
  pass();  // nothing changed: b still waits
  EXPECT_EQ(job("b").state(), v1::JOB_STATE_QUEUED);

  // w3 joins: b starts there, with no new event in the store.
  runtime.set_nodes({Info("w1", 8), Info("w2", 16, NodeAvailability::kDrain), Info("w3", 8)});
  pass();
  EXPECT_EQ(job("b").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(job("b").node(), "w3");
  EXPECT_EQ(runtime.last_spec("b").node, "w3");
}

// --memory=auto on a swarm, then an operator's SetBudgets memory below the
// nodes' sum: it caps admission as on one host (per-node packing still
// applies); raised above the sum, the nodes bound it again.
TEST(ReconcilerNodeListTest, AnOperatorsMemoryBudgetCapsAutoTotals) {
  NodeListHarness h;
  h.runtime.set_nodes({Info("w1", 8), Info("w2", 8)});
  h.Sync({testing::TestJob("a", 5), testing::TestJob("b", 5)});
  v1::Budgets set = NodeListHarness::Defaults();
  set.set_memory_bytes(6 * kGiB);
  set.set_cpu_millis(8000);
  ASSERT_TRUE(h.store.SetBudgets(set, h.clock.Now()).ok());
  h.Pass();
  h.Pass();
  // 16 GiB of nodes, but the operator allows 6: one 5 GiB job.
  EXPECT_EQ(h.Job("a").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(h.Job("b").state(), v1::JOB_STATE_QUEUED);
  // Node use as of the passes, though no reader asked for a whole plan.
  EXPECT_EQ(h.plans.Latest(), nullptr);
  v1::Budgets with_nodes = set;
  h.plans.ApplyNodes(with_nodes, /*operator_set=*/true);
  int64_t reserved = 0, jobs = 0;
  for (const v1::NodeUse& u : h.plans.NodeUsesNow(with_nodes)) {
    reserved += u.reserved_memory_bytes();
    jobs += u.jobs();
  }
  EXPECT_EQ(jobs, 1);
  EXPECT_EQ(reserved, 5 * kGiB);
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> snap = h.plans.Refresh();
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ((*snap)->budgets.memory_bytes(), 6 * kGiB);
  EXPECT_EQ((*snap)->budgets.nodes_size(), 2);

  set.set_memory_bytes(100 * kGiB);
  ASSERT_TRUE(h.store.SetBudgets(set, h.clock.Now()).ok());
  h.Pass();
  EXPECT_EQ(h.Job("b").state(), v1::JOB_STATE_RUNNING);
  EXPECT_NE(h.Job("b").node(), h.Job("a").node());  // 5 + 5 GiB never on one 8 GiB node
  snap = h.plans.Refresh();
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ((*snap)->budgets.memory_bytes(), 16 * kGiB);
}

// A node drained while it runs jobs: they are requeued (a durable requeue
// decision, then stopped, then QUEUED with a message naming the node), the
// old container is gone before the new attempt starts, and the drained node
// takes nothing new. A job that already ended there keeps its outcome.
TEST(ReconcilerNodeListTest, JobsOnADrainedNodeAreRequeuedAndRunElsewhere) {
  NodeListHarness h;
  FakeRuntime& runtime = h.runtime;
  auto pass = [&] { h.Pass(); };
  auto job = [&](const std::string& id) { return h.Job(id); };

  runtime.set_nodes({Info("w1", 8), Info("w2", 8)});
  h.Sync({testing::TestJob("a", 5), testing::TestJob("b", 5), testing::TestJob("done", 2)});
  pass();
  ASSERT_EQ(job("a").state(), v1::JOB_STATE_RUNNING);
  ASSERT_EQ(job("a").node(), "w1");
  ASSERT_EQ(job("b").node(), "w2");
  ASSERT_EQ(job("done").node(), "w1");  // best fit: 3 GiB left on each, w1 by id

  // w1 is drained; "done" has exited there just before.
  ASSERT_TRUE(runtime.Exit("done", 0).ok());
  runtime.set_nodes({Info("w1", 8, NodeAvailability::kDrain), Info("w2", 8)});
  pass();  // a: requeue recorded, service stopped; done: finalised
  EXPECT_EQ(job("done").state(), v1::JOB_STATE_SUCCEEDED);
  absl::StatusOr<std::vector<Decision>> decisions = h.store.DecisionsForJob("a");
  ASSERT_TRUE(decisions.ok());
  ASSERT_FALSE(decisions->empty());
  EXPECT_EQ(decisions->back().kind, DecisionKind::kRequeue);
  EXPECT_EQ(decisions->back().reason,
            "its node w1 is drained; it goes back to the queue for a node that accepts jobs");
  EXPECT_EQ(decisions->back().requeue_cause, v1::REQUEUE_CAUSE_NODE_DRAINED);
  pass();  // a finalised: QUEUED again; 5 + 5 GiB do not fit w2 (8 GiB)
  EXPECT_EQ(job("a").state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(job("a").requeue_count(), 1);
  EXPECT_EQ(job("a").message(),
            "requeued: its node w1 is drained; it goes back to the queue for a node that "
            "accepts jobs");
  ASSERT_EQ(job("a").attempts_size(), 1);
  EXPECT_EQ(job("a").attempts(0).requeue_cause(), v1::REQUEUE_CAUSE_NODE_DRAINED);
  EXPECT_EQ(job("a").attempts(0).node(), "w1");
  absl::StatusOr<ContainerList> listed = runtime.List();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->count("a"), 0u);  // the old run is gone before any new one
  EXPECT_EQ(job("b").state(), v1::JOB_STATE_RUNNING);  // w2 is not drained

  // The drained node takes nothing new; when b ends, a runs on w2 as attempt 1.
  ASSERT_TRUE(runtime.Exit("b", 0).ok());
  pass();
  pass();
  EXPECT_EQ(job("a").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(job("a").node(), "w2");
  EXPECT_EQ(runtime.last_spec("a").node, "w2");
  EXPECT_EQ(runtime.last_spec("a").attempt, 1);
}

// An admitted job whose start was deferred (a transient engine error) and
// whose node is then drained: requeued without ever starting there, and
// started on another node as attempt 1.
TEST(ReconcilerNodeListTest, AnAdmittedJobNotYetStartedOnADrainedNodeIsRequeued) {
  NodeListHarness h;
  h.runtime.set_nodes({Info("w1", 8), Info("w2", 8)});
  h.faulty.Inject("create", absl::UnavailableError("engine busy"), 1);
  h.Sync({testing::TestJob("a", 5)});
  h.Pass();
  ASSERT_EQ(h.Job("a").state(), v1::JOB_STATE_ADMITTED);
  ASSERT_EQ(h.Job("a").node(), "w1");
  h.runtime.set_nodes({Info("w1", 8, NodeAvailability::kDrain), Info("w2", 8)});
  h.Pass();
  absl::StatusOr<std::vector<Decision>> decisions = h.store.DecisionsForJob("a");
  ASSERT_TRUE(decisions.ok());
  ASSERT_GE(decisions->size(), 2u);
  EXPECT_EQ((*decisions)[1].kind, DecisionKind::kRequeue);
  EXPECT_EQ(h.Job("a").requeue_count(), 1);
  for (int i = 0; i < 10 && h.Job("a").state() != v1::JOB_STATE_RUNNING; ++i) h.Pass();
  EXPECT_EQ(h.Job("a").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(h.Job("a").node(), "w2");
  EXPECT_EQ(h.runtime.last_spec("a").node, "w2");
  EXPECT_EQ(h.runtime.last_spec("a").attempt, 1);
  EXPECT_EQ(h.runtime.creates(), 1);  // never created on w1
}

// A stray task (a runtime's older attempt still running) is reported by one
// STRAY_TASK event naming its job, container and node; a later pass does not
// repeat it while it runs, and a new stray gets its own.
TEST(ReconcilerNodeListTest, AStrayTaskIsReportedOnceByAnEvent) {
  NodeListHarness h;
  auto strays_reported = [&] {
    std::vector<v1::Event> out;
    absl::StatusOr<EventPage> page = h.store.ReadEvents(0, 10000);
    EXPECT_TRUE(page.ok()) << page.status();
    if (!page.ok()) return out;
    for (const v1::Event& e : page->events) {
      if (e.type() == v1::EVENT_TYPE_STRAY_TASK) out.push_back(e);
    }
    return out;
  };
  NodeInfo w1 = Info("w1", 8);
  w1.stray_tasks = 1;
  w1.stray_memory_bytes = kGiB;
  w1.strays.push_back({"task-1", "a", "c1", "older attempt still runs (node w1, task task-1)"});
  h.runtime.set_nodes({w1});
  h.Sync({testing::TestJob("a", 2)});
  h.Pass();
  std::vector<v1::Event> events = strays_reported();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].job_id(), "a");
  EXPECT_EQ(events[0].container(), "c1");
  EXPECT_NE(events[0].message().find("w1"), std::string::npos) << events[0].message();
  h.Pass();
  EXPECT_EQ(strays_reported().size(), 1u) << "a stray still running is reported once";
  // A second stray on the node (its container not known yet: the task names it).
  w1.strays.push_back({"task-2", "b", "", "(node w1, task task-2)"});
  h.runtime.set_nodes({w1});
  h.Pass();
  events = strays_reported();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].job_id(), "b");
  EXPECT_EQ(events[1].container(), "task-2");
}

}  // namespace
}  // namespace berth
