// Plan() on a node inventory (Budgets::nodes): placement, node-bound waits,
// NEVER_FITS larger than every node, reservations on a node.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "planner/explain/explain.h"
#include "planner/model/model.h"
#include "planner/plan/plan.h"

namespace berth::planner {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

QueuedJob Q(std::string id, int64_t mem_gib, int64_t cpu_millis,
            absl::Duration d = absl::Hours(1), std::string pool = kDefaultPool) {
  QueuedJob q;
  q.id = std::move(id);
  q.workspace = "ws";
  q.pool = std::move(pool);
  q.resources = {cpu_millis, mem_gib * kGiB};
  q.created_at = kNow - absl::Minutes(10);
  q.expected_duration = d;
  return q;
}

RunningJob R(std::string id, std::string node, int64_t mem_gib,
             int64_t cpu_millis, absl::Duration left) {
  RunningJob r;
  r.id = std::move(id);
  r.workspace = "other";
  r.node = std::move(node);
  r.resources = {cpu_millis, mem_gib * kGiB};
  r.started_at = kNow - absl::Minutes(5);
  r.expected_duration = absl::Minutes(5) + left;
  return r;
}

Node N(std::string id, int64_t mem_gib, int64_t cpu, int32_t slots = 0,
       std::string pool = "") {
  Node n;
  n.id = std::move(id);
  n.memory_bytes = mem_gib * kGiB;
  n.cpu_millis = cpu;
  n.max_workers = slots;
  if (!pool.empty()) n.labels[kPoolLabel] = pool;
  return n;
}

Budgets WithNodes(std::vector<Node> nodes) {
  Budgets b;
  b.nodes = std::move(nodes);
  b.pool_max_workers["database"] = 0;
  return b;
}

struct Out {
  Decision d;
  NodePlacement place;
  std::string node;        // placement.node's id, "" if none
  std::string short_node;  // placement.short_node's id
};

Out Of(const State& s, const PlanResult& r, const std::string& id) {
  for (size_t k = 0; k < r.decisions.size(); ++k) {
    if (s.queued[r.decisions[k].job].id != id) continue;
    Out o;
    o.d = r.decisions[k];
    o.place = r.placements.at(k);
    if (o.place.node >= 0) o.node = r.nodes.at(o.place.node);
    if (o.place.short_node >= 0) o.short_node = r.nodes.at(o.place.short_node);
    return o;
  }
  ADD_FAILURE() << "no decision for " << id;
  return {};
}

struct PlaceCase {
  std::string name;
  std::vector<Node> nodes;
  std::vector<RunningJob> running;
  std::vector<QueuedJob> queued;
  std::string job;  // the job checked
  Verdict verdict;
  Reason reason;
  std::string node;        // expected placement.node
  std::string short_node;  // expected placement.short_node
};

class PlaceTest : public testing::TestWithParam<PlaceCase> {};

TEST_P(PlaceTest, DecidesAndPlaces) {
  const PlaceCase& c = GetParam();
  State s;
  s.running = c.running;
  s.queued = c.queued;
  const PlanResult r = Plan(s, WithNodes(c.nodes), Policy(), kNow);
  const Out o = Of(s, r, c.job);
  EXPECT_EQ(o.d.verdict, c.verdict);
  EXPECT_EQ(o.d.reason, c.reason);
  EXPECT_EQ(o.node, c.node);
  EXPECT_EQ(o.short_node, c.short_node);
}

INSTANTIATE_TEST_SUITE_P(
    Nodes, PlaceTest,
    testing::Values(
        PlaceCase{"best_fit_least_memory_left",
                  {N("a", 64, 16'000), N("b", 16, 16'000), N("c", 32, 16'000)},
                  {}, {Q("j", 12, 1'000)}, "j", Verdict::kAdmit,
                  Reason::kAdmitted, "b", ""},
        PlaceCase{"best_fit_then_cpu",
                  {N("a", 32, 16'000), N("b", 32, 4'000)},
                  {}, {Q("j", 12, 2'000)}, "j", Verdict::kAdmit,
                  Reason::kAdmitted, "b", ""},
        PlaceCase{"ties_by_node_id",
                  {N("z", 32, 8'000), N("m", 32, 8'000), N("q", 32, 8'000)},
                  {}, {Q("j", 4, 1'000)}, "j", Verdict::kAdmit,
                  Reason::kAdmitted, "m", ""},
        PlaceCase{"cpu_rules_out_tighter_node",
                  {N("a", 64, 16'000), N("b", 16, 1'000)},
                  {}, {Q("j", 12, 2'000)}, "j", Verdict::kAdmit,
                  Reason::kAdmitted, "a", ""},
        PlaceCase{"running_jobs_hold_their_node",
                  {N("a", 32, 16'000), N("b", 32, 16'000)},
                  {R("r", "a", 30, 1'000, absl::Hours(1))},
                  {Q("j", 8, 1'000)}, "j", Verdict::kAdmit,
                  Reason::kAdmitted, "b", ""},
        PlaceCase{"node_slots",
                  {N("a", 64, 16'000, 1), N("b", 64, 16'000, 2)},
                  {R("r", "a", 1, 100, absl::Hours(1))},
                  {Q("j", 8, 1'000)}, "j", Verdict::kAdmit,
                  Reason::kAdmitted, "b", ""},
        // Fragmentation: 40 GiB free in the cluster, at most 20 on a node.
        PlaceCase{"fragmented_memory_waits_on_node",
                  {N("a", 64, 16'000), N("b", 64, 16'000)},
                  {R("r1", "a", 44, 1'000, absl::Hours(1)),
                   R("r2", "b", 48, 1'000, absl::Hours(2))},
                  {Q("j", 24, 1'000)}, "j", Verdict::kWait,
                  Reason::kWaitingForMemory, "a", "a"},
        PlaceCase{"larger_than_every_node_never_fits",
                  {N("a", 32, 16'000), N("b", 48, 16'000), N("c", 16, 16'000)},
                  {}, {Q("j", 60, 1'000)}, "j", Verdict::kReject,
                  Reason::kNeverFits, "", "b"},
        PlaceCase{"memory_and_cpu_on_different_nodes_never_fits",
                  {N("a", 64, 2'000), N("b", 16, 32'000)},
                  {}, {Q("j", 32, 8'000)}, "j", Verdict::kReject,
                  Reason::kNeverFits, "", "b"},
        PlaceCase{"dedicated_pool_nodes",
                  {N("a", 16, 16'000), N("db", 64, 16'000, 0, "database")},
                  {}, {Q("j", 8, 1'000, absl::Hours(1), "database")}, "j",
                  Verdict::kAdmit, Reason::kAdmitted, "db", ""},
        PlaceCase{"other_pools_avoid_dedicated_nodes",
                  {N("a", 16, 16'000), N("db", 64, 16'000, 0, "database")},
                  {}, {Q("j", 32, 1'000)}, "j", Verdict::kReject,
                  Reason::kNeverFits, "", "a"}),
    [](const testing::TestParamInfo<PlaceCase>& i) { return i.param.name; });

TEST(NodesTest, FragmentationIsExplainedOnTheNode) {
  State s;
  s.running = {R("r1", "a", 44, 1'000, absl::Hours(1)),
               R("r2", "b", 48, 1'000, absl::Hours(2))};
  s.queued = {Q("j", 24, 1'000)};
  const PlanResult r =
      Plan(s, WithNodes({N("a", 64, 16'000), N("b", 64, 16'000)}), Policy(), kNow);
  const Out o = Of(s, r, "j");
  EXPECT_EQ(o.d.dimension, Dimension::kMemory);
  EXPECT_TRUE(o.place.on_node);
  EXPECT_EQ(o.d.needed, 24 * kGiB);
  EXPECT_EQ(o.d.free, 20 * kGiB);
  EXPECT_EQ(o.d.capacity, 64 * kGiB);
  EXPECT_EQ(o.place.cluster_free, 36 * kGiB);
  EXPECT_EQ(o.d.fits_memory_bytes, 20 * kGiB);
  // Reserved on the node that frees 24 GiB first: a, in an hour.
  EXPECT_TRUE(o.d.reserved);
  EXPECT_EQ(o.node, "a");
  EXPECT_EQ(r.reservation_start, kNow + absl::Hours(1));
}

TEST(NodesTest, ExplainsFragmentationWithTheNodeAndACounterfactual) {
  State s;
  s.running = {R("r1", "node-a", 48, 1'000, absl::Hours(1)),
               R("r2", "node-b", 44, 1'000, absl::Hours(2)),
               R("r3", "node-c", 52, 1'000, absl::Hours(3)),
               R("r4", "node-d", 52, 1'000, absl::Hours(3))};
  s.queued = {Q("big", 48, 1'000)};
  const Budgets b = WithNodes({N("node-a", 64, 16'000), N("node-b", 64, 16'000),
                               N("node-c", 64, 16'000), N("node-d", 64, 16'000)});
  const PlanResult r = Plan(s, b, Policy(), kNow);
  EXPECT_EQ(DecisionSummary(s, r, 0),
            "needs 48 GiB memory; the most free on one node is 20 GiB "
            "(node-b), 60 GiB free in the cluster");
  const Explanation e = Explain(s, b, Policy(), r, 0);
  EXPECT_TRUE(e.on_node);
  EXPECT_EQ(e.short_node, "node-b");
  EXPECT_EQ(e.node, "node-a");  // reserved where 48 GiB frees first
  EXPECT_EQ(e.cluster_free, 60 * kGiB);
  ASSERT_TRUE(e.smallest_change.has_value());
  EXPECT_EQ(e.smallest_change->text, "fits now on node-b if memory estimate <= 20 GiB");
  EXPECT_NE(e.summary.find("Waiting for memory: needs 48 GiB memory; the most "
                           "free on one node is 20 GiB (node-b), 60 GiB free in "
                           "the cluster."),
            std::string::npos)
      << e.summary;
  EXPECT_NE(e.summary.find("on node-a."), std::string::npos) << e.summary;
}

TEST(NodesTest, ExplainsNeverFitsAndAdmission) {
  State s;
  s.queued = {Q("huge", 48, 1'000), Q("small", 4, 1'000)};
  const Budgets b = WithNodes({N("node-a", 32, 16'000), N("node-b", 40, 16'000)});
  const PlanResult r = Plan(s, b, Policy(), kNow);
  for (size_t k = 0; k < r.decisions.size(); ++k) {
    const std::string& id = s.queued[r.decisions[k].job].id;
    if (id == "huge") {
      EXPECT_EQ(DecisionSummary(s, r, k),
                "needs 48 GiB memory, more than any node has: the largest is "
                "node-b (40 GiB), 72 GiB free in the cluster");
      const Explanation e = Explain(s, b, Policy(), r, k);
      ASSERT_TRUE(e.smallest_change.has_value());
      EXPECT_EQ(e.smallest_change->text, "fits on node-b if memory estimate <= 40 GiB");
    } else {
      EXPECT_EQ(DecisionSummary(s, r, k), "admitted on node-a");
      EXPECT_EQ(Explain(s, b, Policy(), r, k).node, "node-a");
    }
  }
}

TEST(NodesTest, NeverFitsNamesTheLargestNode) {
  State s;
  s.queued = {Q("j", 48, 1'000)};
  const PlanResult r = Plan(
      s, WithNodes({N("node-a", 32, 16'000), N("node-b", 40, 16'000)}),
      Policy(), kNow);
  const Out o = Of(s, r, "j");
  EXPECT_EQ(o.d.problem, Problem::kExceedsBudget);
  EXPECT_EQ(o.d.dimension, Dimension::kMemory);
  EXPECT_EQ(o.short_node, "node-b");
  EXPECT_EQ(o.d.capacity, 40 * kGiB);
  EXPECT_EQ(o.d.fits_memory_bytes, 40 * kGiB);
  EXPECT_EQ(o.place.cluster_free, 72 * kGiB);
}

TEST(NodesTest, FreeInTheClusterCountsOnlyThePoolsNodes) {
  // 64 GiB free on a node only the database pool may use: not the job's.
  State s;
  s.running = {R("r", "a", 12, 1'000, absl::Hours(1))};
  s.queued = {Q("j", 8, 1'000)};
  const PlanResult r =
      Plan(s, WithNodes({N("a", 16, 16'000), N("db", 64, 16'000, 0, "database")}), Policy(),
           kNow);
  const Out o = Of(s, r, "j");
  EXPECT_EQ(o.d.verdict, Verdict::kWait);
  EXPECT_EQ(o.short_node, "a");
  EXPECT_EQ(o.place.cluster_free, 4 * kGiB);
}

TEST(NodesTest, CounterfactualIsBoundedByOneNode) {
  // 4 GiB free, split 2 + 2: "fits now if <= 4 GiB" would still wait; the
  // answer is what one node has.
  State s;
  s.running = {R("r1", "a", 14, 1'000, absl::Hours(1)),
               R("r2", "b", 14, 1'000, absl::Hours(2))};
  s.queued = {Q("j", 8, 1'000)};
  const Budgets b = WithNodes({N("a", 16, 16'000), N("b", 16, 16'000)});
  const PlanResult r = Plan(s, b, Policy(), kNow);
  const Out o = Of(s, r, "j");
  EXPECT_EQ(o.d.verdict, Verdict::kWait);
  EXPECT_EQ(o.d.fits_memory_bytes, 2 * kGiB);
  // The advice says where: a node with that much free (ties by id).
  EXPECT_EQ(o.place.fits_node, 0);
  const Explanation e = Explain(s, b, Policy(), r, 0);
  ASSERT_TRUE(e.smallest_change.has_value());
  EXPECT_EQ(e.smallest_change->text, "fits now on a if memory estimate <= 2 GiB");
}

TEST(NodesTest, AdviceIsTheLargestThatFitsANodeOfItsPoolByHostname) {
  // The case: the cluster has 7.5 GiB free for the job's pool in
  // total (and 64 GiB more on a database node), no node of its pool more
  // than 2.5 GiB: the advice is 2.5 GiB on that node, named by hostname.
  State s;
  s.running = {R("r1", "id-a", 14, 1'000, absl::Hours(1)),
               R("r2", "id-b", 13, 1'000, absl::Hours(1)),
               R("r3", "id-c", 13, 1'000, absl::Hours(1))};
  s.queued = {Q("j", 7, 1'000)};
  s.running[1].resources.memory_bytes = 13 * kGiB + kGiB / 2;
  std::vector<Node> nodes = {N("id-a", 16, 16'000), N("id-b", 16, 16'000),
                             N("id-c", 16, 16'000), N("id-db", 64, 16'000, 0, "database")};
  nodes[0].name = "w1";
  nodes[1].name = "w2";
  nodes[2].name = "w3";
  nodes[3].name = "db1";
  const Budgets b = WithNodes(nodes);
  const PlanResult r = Plan(s, b, Policy(), kNow);
  const Out o = Of(s, r, "j");
  EXPECT_EQ(o.d.verdict, Verdict::kWait);
  EXPECT_EQ(o.place.cluster_free, 7 * kGiB + kGiB / 2);  // 2 + 2.5 + 3... of its pool
  EXPECT_EQ(o.d.fits_memory_bytes, 3 * kGiB);
  EXPECT_EQ(o.short_node, "id-c");
  const Explanation e = Explain(s, b, Policy(), r, 0);
  ASSERT_TRUE(e.smallest_change.has_value());
  EXPECT_EQ(e.smallest_change->text, "fits now on w3 if memory estimate <= 3 GiB");
  EXPECT_EQ(e.short_node, "id-c");  // structured fields keep the id
  EXPECT_NE(e.summary.find("the most free on one node is 3 GiB (w3), 7.5 GiB free in the "
                           "cluster"),
            std::string::npos)
      << e.summary;
  // Shrunk to the advice, it is admitted on that node.
  s.queued[0].resources.memory_bytes = e.smallest_change->fits_if_at_most;
  const PlanResult again = Plan(s, b, Policy(), kNow);
  const Out now = Of(s, again, "j");
  EXPECT_EQ(now.d.verdict, Verdict::kAdmit);
  EXPECT_EQ(now.node, "id-c");
}

// Nodes cloned from one image share a hostname: sentences add the start of
// the id so that they name one node.
TEST(NodesTest, NodesSharingAHostnameAreNamedWithTheirIds) {
  State s;
  s.queued = {Q("j", 4, 1'000)};
  std::vector<Node> nodes = {N("aaaaaaaaaaaaZZZ", 2, 16'000), N("bbbbbbbbbbbbZZZ", 8, 16'000),
                             N("c", 2, 16'000)};
  nodes[0].name = "vm";
  nodes[1].name = "vm";
  nodes[2].name = "w3";
  const Budgets b = WithNodes(nodes);
  const PlanResult r = Plan(s, b, Policy(), kNow);
  ASSERT_EQ(Of(s, r, "j").node, "bbbbbbbbbbbbZZZ");
  EXPECT_EQ(DecisionSummary(s, r, 0), "admitted on vm (bbbbbbbbbbbb)");
  nodes[1].name = "w2";  // unique again: the hostname alone
  const PlanResult unique = Plan(s, WithNodes(nodes), Policy(), kNow);
  EXPECT_EQ(DecisionSummary(s, unique, 0), "admitted on w2");
}

TEST(NodesTest, BackfillDoesNotTakeTheReservedNode) {
  // The head (60 GiB) is reserved on "a" when r1 ends in 1h, leaving 4 GiB
  // spare there. "c" has the memory but not the cpu. A long job that fits
  // only a's free memory now would delay the head: it waits; a short one
  // that ends before the reservation runs on "a".
  State s;
  s.running = {R("r1", "a", 40, 1'000, absl::Hours(1)),
               R("r2", "b", 50, 1'000, absl::Hours(3))};
  s.queued = {Q("head", 60, 1'000), Q("long", 20, 1'000, absl::Hours(5)),
              Q("short", 20, 1'000, absl::Minutes(30))};
  s.queued[1].created_at += absl::Seconds(1);
  s.queued[2].created_at += absl::Seconds(2);
  Policy fifo;
  fifo.ranking = *FindRankingPolicy("fifo");
  const PlanResult r = Plan(
      s, WithNodes({N("a", 64, 16'000), N("b", 64, 16'000), N("c", 64, 500)}),
      fifo, kNow);
  const Out head = Of(s, r, "head");
  EXPECT_TRUE(head.d.reserved);
  EXPECT_EQ(head.node, "a");
  EXPECT_EQ(r.reservation_start, kNow + absl::Hours(1));
  const Out long_job = Of(s, r, "long");
  EXPECT_EQ(long_job.d.verdict, Verdict::kWait);
  EXPECT_EQ(long_job.d.reason, Reason::kWaitingForPriority);
  EXPECT_EQ(long_job.short_node, "a");
  EXPECT_EQ(long_job.d.free, 4 * kGiB);
  const Out short_job = Of(s, r, "short");
  EXPECT_EQ(short_job.d.verdict, Verdict::kAdmit);
  EXPECT_EQ(short_job.node, "a");  // ends before the reservation
}

TEST(NodesTest, ClusterLimitsStillApply) {
  State s;
  s.queued = {Q("j1", 4, 1'000), Q("j2", 4, 1'000)};
  Budgets b = WithNodes({N("a", 64, 16'000), N("b", 64, 16'000)});
  b.max_workers = 1;
  const PlanResult r = Plan(s, b, Policy(), kNow);
  EXPECT_EQ(r.admitted_count, 1);
}

TEST(NodesTest, WithoutNodesNoPlacements) {
  State s;
  s.queued = {Q("j", 4, 1'000)};
  Budgets b;
  b.memory_bytes = 64 * kGiB;
  b.cpu_millis = 16'000;
  b.max_workers = 4;
  const PlanResult r = Plan(s, b, Policy(), kNow);
  EXPECT_TRUE(r.nodes.empty());
  EXPECT_TRUE(r.placements.empty());
  EXPECT_EQ(r.admitted_count, 1);
}

}  // namespace
}  // namespace berth::planner
