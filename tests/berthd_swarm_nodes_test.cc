// The real berthd --runtime=swarm planning per node on the real three-node
// swarm (tools/swarm_cluster.sh up), every node sized 256 MiB: jobs spread
// over the nodes and no node's reserved memory ever exceeds its size
// (sampled from the manager's own task list while they run); a job larger
// than every node but smaller than the cluster is NEVER_FITS naming the
// largest node, and one that only waits because the free memory is spread
// over nodes is explained as such, with advice naming a node by hostname; the
// dashboard's nodes page lists a running job in its node's row; budgets,
// plan and /metrics show each node's figures as they run; an operator's
// SetBudgets memory below the nodes' sum caps admission with auto budgets.
// Fails without a cluster (tag "swarm").
#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "executor/runtime/swarm/testing/swarm_test_util.h"
#include "executor/store/store.h"  // IsTerminal
#include "gtest/gtest.h"
#include "httplib.h"
#include "tests/swarm_berthd.h"

namespace berth {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kNode = 256 * kMiB;

struct RemoveServices {
  std::string instance;
  ~RemoveServices() { (void)testing::RemoveInstanceServices(instance); }
};

TEST(BerthdSwarmNodes, JobsSpreadAndNoNodeIsEverOvercommitted) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> started = StartSwarmBerthd(kNode);
  ASSERT_TRUE(started.ok()) << started.status();
  BerthdProcess& b = **started;
  RemoveServices cleanup{b.instance()};

  // 8 jobs of 96 MiB: two fit a node (192 of 256 MiB), so at most 6 run at
  // once on 3 nodes, and the planner must use more than one node.
  const std::string p = UniqueJobPrefix();
  v1::Snapshot snap;
  snap.set_generation(1);
  std::vector<std::string> ids;
  for (int i = 0; i < 8; ++i) {
    ids.push_back(absl::StrCat(p, "spread", i));
    *snap.add_jobs() = BusyboxJob(ids.back(), "ws", 96 * kMiB, "sleep 3");
  }
  std::unique_ptr<BerthClient> c = b.Client(Role::kPusher);
  ASSERT_TRUE(c->Sync(snap).ok());

  std::set<std::string> nodes_used;
  int samples = 0;
  int64_t peak = 0;
  // The dashboard's nodes page on the real swarm: a job running
  // before and after the fetch is listed in its node's row.
  httplib::Client http("127.0.0.1", b.metrics_port());
  const httplib::Headers reader = {{"Authorization", "Bearer " + TokenFor(Role::kReader)}};
  bool page_checked = false;
  auto check_nodes_page = [&] {
    for (const std::string& id : ids) {
      absl::StatusOr<v1::Job> before = c->GetJob(id);
      if (!before.ok() || before->state() != v1::JOB_STATE_RUNNING || before->node().empty()) {
        continue;
      }
      auto page = http.Get("/ui/nodes", reader);
      ASSERT_TRUE(page);
      ASSERT_EQ(page->status, 200) << page->body;
      absl::StatusOr<v1::Job> after = c->GetJob(id);
      if (!after.ok() || after->state() != v1::JOB_STATE_RUNNING) return;  // try again later
      const std::string row = absl::StrCat("<tr id=\"node-", before->node(), "\">");
      const size_t at = page->body.find(row);
      ASSERT_NE(at, std::string::npos) << before->node() << " has no row:\n" << page->body;
      const std::string line = page->body.substr(at, page->body.find("</tr>", at) - at);
      EXPECT_TRUE(absl::StrContains(line, id)) << id << " not in its node's row: " << line;
      EXPECT_TRUE(absl::StrContains(line, " of ")) << line;
      page_checked = true;
      return;
    }
  };
  auto all_done = [&] {
    for (const std::string& id : ids) {
      absl::StatusOr<v1::Job> j = c->GetJob(id);
      if (!j.ok() || !IsTerminal(j->state())) return false;
    }
    return true;
  };
  const absl::Time deadline = absl::Now() + absl::Seconds(90);
  while (!all_done()) {
    ASSERT_LT(absl::Now(), deadline) << "jobs not done in time\n" << b.Log();
    absl::StatusOr<testing::ClusterSample> s = testing::SampleCluster(b.instance());
    ASSERT_TRUE(s.ok()) << s.status();
    ++samples;
    for (const auto& [node, reserved] : s->reserved_by_node) {
      EXPECT_LE(reserved, kNode) << "node " << node << " overcommitted";
      peak = std::max(peak, reserved);
      nodes_used.insert(node);
    }
    for (const auto& [job, nodes] : s->live_nodes_by_job) {
      EXPECT_LE(nodes.size(), 1u) << job << " runs twice at once";
    }
    if (!page_checked) check_nodes_page();
    absl::SleepFor(absl::Milliseconds(200));  // sampling interval, not a wait
  }
  for (const std::string& id : ids) {
    absl::StatusOr<v1::Job> j = c->GetJob(id);
    ASSERT_TRUE(j.ok());
    EXPECT_EQ(j->state(), v1::JOB_STATE_SUCCEEDED) << id << ": " << j->message();
    EXPECT_FALSE(j->node().empty()) << id;
  }
  EXPECT_TRUE(page_checked) << "no job was seen running across a fetch of /ui/nodes";
  EXPECT_GT(nodes_used.size(), 1u) << "the planner put every job on one node";
  EXPECT_EQ(peak, 2 * 96 * kMiB) << "two jobs per node at the busiest";
  std::printf("swarm spread: %d samples, %zu nodes used, peak %lld MiB reserved on one node\n",
              samples, nodes_used.size(), static_cast<long long>(peak / kMiB));
}

// Per-node truth while one 160 MiB job runs on each node of
// `hold_nodes`: GetBudgets, SetBudgets' answer, GetPlan and /metrics show
// every node with its size less the reserve (the reserve once per node),
// its hostname, the jobs' reservations there and what the engine reports
// there -- all agreeing with where the jobs run (GetJob's node).
void CheckPerNodeFigures(BerthdProcess& b, BerthClient& pusher,
                         const std::set<std::string>& hold_nodes) {
  std::unique_ptr<BerthClient> op = b.Client(Role::kOperator);
  // The engine's view arrives with the next pass: await it.
  absl::StatusOr<v1::Budgets> got;
  const absl::Time until = absl::Now() + absl::Seconds(30);
  for (;;) {
    got = op->GetBudgets();
    ASSERT_TRUE(got.ok()) << got.status();
    int seen = 0;
    for (const v1::NodeUse& u : got->node_use()) seen += u.observed() ? u.observed_jobs() : 0;
    if (seen == 3) break;
    ASSERT_LT(absl::Now(), until) << "the engine's tasks never showed: " << got->DebugString();
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_EQ(got->node_use_size(), 3) << got->DebugString();
  EXPECT_EQ(got->memory_bytes(), 3 * kNode) << "the reserve is kept once per node";
  for (const v1::NodeUse& u : got->node_use()) {
    SCOPED_TRACE(u.DebugString());
    EXPECT_EQ(u.node().memory_bytes(), kNode);
    EXPECT_GT(u.node().reserve_memory_bytes(), 0);
    EXPECT_FALSE(u.node().hostname().empty());
    EXPECT_TRUE(hold_nodes.count(u.node().id()));
    EXPECT_EQ(u.jobs(), 1);
    EXPECT_EQ(u.reserved_memory_bytes(), 160 * kMiB);
    EXPECT_TRUE(u.observed());
    EXPECT_EQ(u.observed_jobs(), 1);
    EXPECT_EQ(u.observed_memory_bytes(), 160 * kMiB);
  }
  // (The test swarm's nodes share one hostname, the machine's: the id tells
  // them apart in the structured fields and the metrics' node_id label.)
  // SetBudgets answers with the same figures (what plans use).
  v1::SetBudgetsRequest set;
  set.mutable_budgets()->set_max_workers(got->max_workers());
  set.mutable_update_mask()->add_paths("max_workers");
  absl::StatusOr<v1::Budgets> answer = op->SetBudgets(set);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->memory_bytes(), 3 * kNode);
  ASSERT_EQ(answer->node_use_size(), 3);
  EXPECT_EQ(answer->node_use(0).node().memory_bytes(), kNode);
  EXPECT_EQ(answer->node_use(0).reserved_memory_bytes(), 160 * kMiB);
  absl::StatusOr<v1::Plan> plan = pusher.GetPlan();
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->node_use_size(), 3);
  for (const v1::NodeUse& u : plan->node_use()) {
    EXPECT_EQ(u.jobs(), 1) << u.DebugString();
    EXPECT_EQ(u.reserved_memory_bytes(), 160 * kMiB) << u.DebugString();
  }
  // /metrics: one series per node, labelled by hostname and id.
  absl::StatusOr<std::string> metrics = b.Metrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  for (const v1::NodeUse& u : got->node_use()) {
    const std::string labels =
        absl::StrCat("{node=\"", u.node().hostname(), "\",node_id=\"", u.node().id(), "\"}");
    for (const std::string& line :
         {absl::StrCat("berth_node_memory_bytes", labels, " ", kNode),
          absl::StrCat("berth_node_reserved_memory_bytes", labels, " ", 160 * kMiB),
          absl::StrCat("berth_node_jobs", labels, " 1"),
          absl::StrCat("berth_node_observed_jobs", labels, " 1"),
          absl::StrCat("berth_node_reserve_memory_bytes", labels, " ",
                       u.node().reserve_memory_bytes())}) {
      EXPECT_TRUE(absl::StrContains(*metrics, line + "\n"))
          << "missing " << line << " in\n" << *metrics;
    }
  }
}

TEST(BerthdSwarmNodes, FragmentationIsNeverFitsOrExplainedPerNode) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> started = StartSwarmBerthd(kNode);
  ASSERT_TRUE(started.ok()) << started.status();
  BerthdProcess& b = **started;
  RemoveServices cleanup{b.instance()};
  std::unique_ptr<BerthClient> c = b.Client(Role::kPusher);
  const std::string p = UniqueJobPrefix();

  // Larger than every node (256 MiB), smaller than the cluster (768 MiB).
  v1::Snapshot snap;
  snap.set_generation(1);
  *snap.add_jobs() = BusyboxJob(p + "big", "ws", 400 * kMiB, "true");
  for (int i = 0; i < 3; ++i) {
    *snap.add_jobs() = BusyboxJob(absl::StrCat(p, "hold", i), "ws", 160 * kMiB, "sleep 60");
  }
  absl::StatusOr<v1::SyncSnapshotResponse> synced = c->Sync(snap);
  ASSERT_TRUE(synced.ok()) << synced.status();
  ASSERT_EQ(synced->rejections_size(), 1);
  EXPECT_EQ(synced->rejections(0).reason(), v1::REJECT_REASON_NEVER_FITS);
  absl::StatusOr<v1::Explanation> big = c->ExplainJob(p + "big");
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(big->state(), v1::JOB_STATE_REJECTED);
  EXPECT_TRUE(absl::StrContains(big->summary(), "more than any node has: the largest is "))
      << big->summary();
  EXPECT_TRUE(absl::StrContains(big->summary(), "(256 MiB memory,")) << big->summary();
  EXPECT_TRUE(absl::StrContains(big->summary(), "768 MiB memory")) << big->summary();
  EXPECT_TRUE(absl::StrContains(big->summary(), "if memory estimate <= 256 MiB"))
      << big->summary();

  // One 160 MiB job per node leaves 96 MiB on each, 288 MiB in the cluster:
  // a 128 MiB job fits the cluster but no node, and waits for memory.
  std::set<std::string> hold_nodes;
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<v1::Job> j = WaitJob(
        *c, absl::StrCat(p, "hold", i),
        [](const v1::Job& j) { return j.state() == v1::JOB_STATE_RUNNING; }, absl::Seconds(60));
    ASSERT_TRUE(j.ok()) << j.status() << b.Log();
    hold_nodes.insert(j->node());
  }
  EXPECT_EQ(hold_nodes.size(), 3u) << "160 + 160 MiB do not fit one 256 MiB node";
  CheckPerNodeFigures(b, *c, hold_nodes);
  snap.set_generation(2);
  *snap.add_jobs() = BusyboxJob(p + "frag", "ws", 128 * kMiB, "true");
  synced = c->Sync(snap);
  ASSERT_TRUE(synced.ok()) << synced.status();
  absl::StatusOr<v1::Explanation> frag = WaitPlanned(*c, p + "frag", absl::Seconds(30));
  ASSERT_TRUE(frag.ok()) << frag.status();
  EXPECT_EQ(frag->state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(frag->reason(), v1::WAITING_FOR_MEMORY) << frag->summary();
  EXPECT_TRUE(absl::StrContains(frag->summary(),
                                "needs 128 MiB memory; the most free on one node is 96 MiB ("))
      << frag->summary();
  EXPECT_TRUE(absl::StrContains(frag->summary(), "), 288 MiB free in the cluster"))
      << frag->summary();
  EXPECT_TRUE(absl::StrContains(frag->smallest_change().text(), "if memory estimate <= 96 MiB"))
      << frag->DebugString();
  // The advice says where, by hostname: a node the job may use with 96 MiB
  // free (all three are; the first by id).
  EXPECT_TRUE(absl::StartsWith(frag->smallest_change().text(), "fits now on "))
      << frag->DebugString();
  EXPECT_FALSE(absl::StrContains(frag->smallest_change().text(), frag->shortfall().node()))
      << "named by id, not hostname: " << frag->DebugString();
  EXPECT_EQ(frag->smallest_change().fits_if_at_most(), 96 * kMiB);
  EXPECT_TRUE(hold_nodes.count(frag->shortfall().node())) << frag->DebugString();
}

// --memory=auto on the swarm (768 MiB in three 256 MiB nodes), then an
// operator's SetBudgets memory of 200 MiB: never more than 200 MiB admitted
// across the cluster (two 96 MiB jobs), sampled from the manager's own task
// list, and every job still ends.
TEST(BerthdSwarmNodes, AnOperatorsMemoryBudgetCapsAutoBudgets) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> started = StartSwarmBerthd(kNode);
  ASSERT_TRUE(started.ok()) << started.status();
  BerthdProcess& b = **started;
  RemoveServices cleanup{b.instance()};
  v1::SetBudgetsRequest req;
  req.mutable_budgets()->set_memory_bytes(200 * kMiB);
  req.mutable_update_mask()->add_paths("memory_bytes");
  absl::StatusOr<v1::Budgets> set = b.Client(Role::kOperator)->SetBudgets(req);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->memory_bytes(), 200 * kMiB) << set->DebugString();
  EXPECT_EQ(set->nodes_size(), 3);  // per-node packing still applies

  const std::string p = UniqueJobPrefix();
  v1::Snapshot snap;
  snap.set_generation(1);
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) {
    ids.push_back(absl::StrCat(p, "cap", i));
    *snap.add_jobs() = BusyboxJob(ids.back(), "ws", 96 * kMiB, "sleep 3");
  }
  std::unique_ptr<BerthClient> c = b.Client(Role::kPusher);
  ASSERT_TRUE(c->Sync(snap).ok());
  int64_t peak = 0;
  int samples = 0;
  const absl::Time deadline = absl::Now() + absl::Seconds(120);
  auto all_done = [&] {
    for (const std::string& id : ids) {
      absl::StatusOr<v1::Job> j = c->GetJob(id);
      if (!j.ok() || !IsTerminal(j->state())) return false;
    }
    return true;
  };
  while (!all_done()) {
    ASSERT_LT(absl::Now(), deadline) << "jobs not done\n" << b.Log();
    absl::StatusOr<testing::ClusterSample> s = testing::SampleCluster(b.instance());
    ASSERT_TRUE(s.ok()) << s.status();
    int64_t reserved = 0;
    for (const auto& [node, r] : s->reserved_by_node) reserved += r;
    peak = std::max(peak, reserved);
    ++samples;
    absl::SleepFor(absl::Milliseconds(200));  // sampling interval, not a wait
  }
  for (const std::string& id : ids) {
    absl::StatusOr<v1::Job> j = c->GetJob(id);
    ASSERT_TRUE(j.ok());
    EXPECT_EQ(j->state(), v1::JOB_STATE_SUCCEEDED) << id << ": " << j->message();
  }
  EXPECT_LE(peak, 200 * kMiB) << "the operator's 200 MiB budget was exceeded";
  EXPECT_GT(peak, 0) << "never saw a job run (" << samples << " samples)";
  std::printf("swarm with SetBudgets memory 200 MiB of 768 MiB: peak %lld MiB reserved in %d "
              "samples\n",
              static_cast<long long>(peak / kMiB), samples);
}

}  // namespace
}  // namespace berth
