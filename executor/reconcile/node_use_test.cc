#include "executor/reconcile/node_use.h"

#include "gtest/gtest.h"

namespace berth {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

v1::Node N(const std::string& id, const std::string& host, int64_t memory_mib) {
  v1::Node n;
  n.set_id(id);
  n.set_hostname(host);
  n.set_memory_bytes(memory_mib * kMiB);
  n.set_cpu_millis(2000);
  n.set_reserve_memory_bytes(64 * kMiB);
  return n;
}

planner::RunningJob R(const std::string& id, const std::string& node, int64_t memory_mib) {
  planner::RunningJob r;
  r.id = id;
  r.node = node;
  r.resources.memory_bytes = memory_mib * kMiB;
  r.resources.cpu_millis = 100;
  return r;
}

TEST(NodeUseTest, ReservedFromThePlanObservedFromTheEngine) {
  v1::Budgets b;
  *b.add_nodes() = N("id-a", "mgr", 256);
  *b.add_nodes() = N("id-b", "w1", 256);
  planner::State s;
  // a1, a2 on node a; b1 on b; gone on a node no longer in the inventory.
  s.running = {R("a1", "id-a", 64), R("a2", "id-a", 32), R("b1", "id-b", 128),
               R("gone", "id-x", 16)};
  // The engine: a1 and b1 live, a2 not yet placed; "old" (a requeued
  // job's attempt still stopping) on b; a task on a node Berth does not
  // plan with.
  NodeBudgets::LiveJobs live = {{"id-a", {"a1"}}, {"id-b", {"b1", "old"}}, {"id-x", {"gone"}}};
  const std::vector<v1::NodeUse> u = NodeUses(b, s, live);
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[0].node().hostname(), "mgr");
  EXPECT_EQ(u[0].node().reserve_memory_bytes(), 64 * kMiB);
  EXPECT_EQ(u[0].reserved_memory_bytes(), 96 * kMiB);
  EXPECT_EQ(u[0].reserved_cpu_millis(), 200);
  EXPECT_EQ(u[0].jobs(), 2);
  EXPECT_TRUE(u[0].observed());
  EXPECT_EQ(u[0].observed_jobs(), 1);
  EXPECT_EQ(u[0].observed_memory_bytes(), 64 * kMiB);
  EXPECT_EQ(u[1].jobs(), 1);
  EXPECT_EQ(u[1].reserved_memory_bytes(), 128 * kMiB);
  EXPECT_EQ(u[1].observed_jobs(), 2);
  EXPECT_EQ(u[1].observed_memory_bytes(), 128 * kMiB);  // "old"'s is unknown
  EXPECT_EQ(u[1].observed_cpu_millis(), 100);
}

TEST(NodeUseTest, NotObservedYetAndOneHost) {
  v1::Budgets b;
  *b.add_nodes() = N("id-a", "mgr", 256);
  planner::State s;
  s.running = {R("a1", "id-a", 64)};
  const std::vector<v1::NodeUse> u = NodeUses(b, s, std::nullopt);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_FALSE(u[0].observed());
  EXPECT_EQ(u[0].observed_jobs(), 0);
  EXPECT_EQ(u[0].jobs(), 1);
  EXPECT_TRUE(NodeUses(v1::Budgets(), s, NodeBudgets::LiveJobs{}).empty());
}

}  // namespace
}  // namespace berth
