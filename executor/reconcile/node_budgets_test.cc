#include "executor/reconcile/node_budgets.h"

#include "gtest/gtest.h"

namespace berth {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

NodeInfo Info(const std::string& id, int64_t memory_gib, int cpus,
              NodeState state = NodeState::kReady,
              NodeAvailability availability = NodeAvailability::kActive) {
  NodeInfo n;
  n.id = id;
  n.hostname = "host-" + id;
  n.memory_bytes = memory_gib * kGiB;
  n.nano_cpus = int64_t{cpus} * 1'000'000'000;
  n.state = state;
  n.availability = availability;
  return n;
}

TEST(NodeBudgetsTest, ReadyActiveNodesMinusTheReserveFollowTheNodeList) {
  NodeBudgetsOptions o;
  o.reserve_memory_bytes = 1 * kGiB;
  o.reserve_cpu_millis = 500;
  NodeBudgets nb(o);
  v1::Budgets b;
  nb.ApplyTo(b);
  EXPECT_EQ(b.nodes_size(), 0);  // nothing known yet
  EXPECT_EQ(nb.version(), 0u);

  nb.Update({Info("w2", 8, 2), Info("w1", 16, 4),
             Info("down", 16, 4, NodeState::kDown),
             Info("drained", 16, 4, NodeState::kReady, NodeAvailability::kDrain)});
  const uint64_t v1 = nb.version();
  EXPECT_GT(v1, 0u);
  nb.ApplyTo(b);
  ASSERT_EQ(b.nodes_size(), 2);
  EXPECT_EQ(b.nodes(0).id(), "w1");
  EXPECT_EQ(b.nodes(0).memory_bytes(), 15 * kGiB);
  EXPECT_EQ(b.nodes(0).cpu_millis(), 3500);
  // Each node says its hostname and the reserve kept back on it.
  EXPECT_EQ(b.nodes(0).hostname(), "host-w1");
  EXPECT_EQ(b.nodes(0).reserve_memory_bytes(), 1 * kGiB);
  EXPECT_EQ(b.nodes(0).reserve_cpu_millis(), 500);
  EXPECT_EQ(b.memory_bytes(), 22 * kGiB);
  EXPECT_EQ(b.cpu_millis(), 5000);

  // The same list again changes nothing; a joining node does.
  nb.Update({Info("w1", 16, 4), Info("w2", 8, 2)});
  EXPECT_EQ(nb.version(), v1);
  nb.Update({Info("w1", 16, 4), Info("w2", 8, 2), Info("w3", 32, 8)});
  EXPECT_GT(nb.version(), v1);
  v1::Budgets c;
  nb.ApplyTo(c);
  EXPECT_EQ(c.nodes_size(), 3);
  EXPECT_EQ(c.memory_bytes(), 53 * kGiB);
}

// A stray task (leaked or orphaned) holds its reservation on its node: plans
// get that much less there, and a node it fills is not planned with.
TEST(NodeBudgetsTest, StrayTasksAreKeptBackFromTheirNode) {
  NodeBudgetsOptions o;
  o.reserve_memory_bytes = 1 * kGiB;
  NodeBudgets nb(o);
  NodeInfo w1 = Info("w1", 8, 4);
  w1.stray_tasks = 2;
  w1.stray_memory_bytes = 3 * kGiB;
  w1.stray_cpu_millis = 1500;
  NodeInfo full = Info("full", 4, 2);
  full.stray_tasks = 1;
  full.stray_memory_bytes = 3 * kGiB;
  nb.Update({w1, full, Info("w2", 8, 4)});
  const uint64_t before = nb.version();
  v1::Budgets b;
  nb.ApplyTo(b);
  ASSERT_EQ(b.nodes_size(), 2);
  EXPECT_EQ(b.nodes(0).id(), "w1");
  EXPECT_EQ(b.nodes(0).memory_bytes(), 4 * kGiB);
  EXPECT_EQ(b.nodes(0).cpu_millis(), 2500);
  EXPECT_EQ(b.nodes(0).stray_tasks(), 2);
  EXPECT_EQ(b.nodes(0).stray_memory_bytes(), 3 * kGiB);
  EXPECT_EQ(b.nodes(1).stray_tasks(), 0);
  EXPECT_EQ(b.nodes(1).memory_bytes(), 7 * kGiB);
  EXPECT_EQ(b.memory_bytes(), 11 * kGiB);
  // The strays end: the capacity comes back, and plans are redone.
  nb.Update({Info("w1", 8, 4), Info("full", 4, 2), Info("w2", 8, 4)});
  EXPECT_GT(nb.version(), before);
  v1::Budgets after;
  nb.ApplyTo(after);
  ASSERT_EQ(after.nodes_size(), 3);
  EXPECT_EQ(after.memory_bytes(), 17 * kGiB);
}

TEST(NodeBudgetsTest, ExplicitTotalsStayAndStoredNodesWin) {
  NodeBudgetsOptions o;
  o.auto_memory = false;
  NodeBudgets nb(o);
  nb.Update({Info("w1", 16, 4)});
  v1::Budgets b;
  b.set_memory_bytes(4 * kGiB);
  nb.ApplyTo(b);
  EXPECT_EQ(b.memory_bytes(), 4 * kGiB);
  EXPECT_EQ(b.nodes_size(), 1);
  v1::Budgets stored;
  stored.add_nodes()->set_id("mine");
  nb.ApplyTo(stored);
  ASSERT_EQ(stored.nodes_size(), 1);
  EXPECT_EQ(stored.nodes(0).id(), "mine");
}

// --memory=auto / --cpus=auto on a swarm: the totals follow the nodes, but an
// operator's SetBudgets value (stored: operator_set) below their sum caps
// them as on one host; one above it leaves the sum (the nodes bound it);
// the start-up defaults never cap (a node that joins adds capacity).
TEST(NodeBudgetsTest, AnOperatorsBudgetCapsTheAutoTotals) {
  NodeBudgets nb(NodeBudgetsOptions{});
  nb.Update({Info("w1", 16, 4), Info("w2", 8, 2)});
  v1::Budgets set;
  set.set_memory_bytes(10 * kGiB);
  set.set_cpu_millis(3000);
  nb.ApplyTo(set, /*operator_set=*/true);
  EXPECT_EQ(set.memory_bytes(), 10 * kGiB);
  EXPECT_EQ(set.cpu_millis(), 3000);
  EXPECT_EQ(set.nodes_size(), 2);  // per-node packing still applies
  v1::Budgets above;
  above.set_memory_bytes(100 * kGiB);
  above.set_cpu_millis(100'000);
  nb.ApplyTo(above, /*operator_set=*/true);
  EXPECT_EQ(above.memory_bytes(), 24 * kGiB);
  EXPECT_EQ(above.cpu_millis(), 6000);
  v1::Budgets defaults;  // the sum when berthd started, before w3 joined
  defaults.set_memory_bytes(24 * kGiB);
  defaults.set_cpu_millis(6000);
  nb.Update({Info("w1", 16, 4), Info("w2", 8, 2), Info("w3", 8, 2)});
  nb.ApplyTo(defaults, /*operator_set=*/false);
  EXPECT_EQ(defaults.memory_bytes(), 32 * kGiB);
  EXPECT_EQ(defaults.cpu_millis(), 8000);
}

TEST(NodeBudgetsTest, ObservedTasksAreTheLiveOnesByNodeAndKeepTheVersion) {
  NodeBudgets nb(NodeBudgetsOptions{});
  EXPECT_FALSE(nb.live_jobs().has_value());
  nb.Update({Info("w1", 16, 4)});
  const uint64_t v = nb.version();
  ContainerList list;
  list["a"] = ContainerSummary{"a", "c-a", ContainerState::kRunning, "w1"};
  list["b"] = ContainerSummary{"b", "c-b", ContainerState::kCreated, "w1"};
  list["done"] = ContainerSummary{"done", "c-d", ContainerState::kExited, "w1"};
  list["pending"] = ContainerSummary{"pending", "c-p", ContainerState::kCreated, ""};
  list["c"] = ContainerSummary{"c", "c-c", ContainerState::kRunning, "w2"};
  nb.ObserveTasks(list);
  EXPECT_EQ(nb.version(), v);
  const std::optional<NodeBudgets::LiveJobs> live = nb.live_jobs();
  ASSERT_TRUE(live.has_value());
  EXPECT_EQ(*live, (NodeBudgets::LiveJobs{{"w1", {"a", "b"}}, {"w2", {"c"}}}));
}

}  // namespace
}  // namespace berth
