// The real berthd --runtime=swarm planning per node on the real three-node
// swarm (tools/swarm_cluster.sh up), every node sized 256 MiB: jobs spread
// over the nodes and no node's reserved memory ever exceeds its size
// (sampled from the manager's own task list while they run); a job larger
// than every node but smaller than the cluster is NEVER_FITS naming the
// largest node, and one that only waits because the free memory is spread
// over nodes is explained as such; the dashboard's nodes page lists a running
// job in its node's row. Fails without a cluster (tag "swarm").
#include <algorithm>
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
  // The dashboard's nodes page (issue 33) on the real swarm: a job running
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
      const std::string row = absl::StrCat("<tr><td>", before->node(), "</td>");
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
  snap.set_generation(2);
  *snap.add_jobs() = BusyboxJob(p + "frag", "ws", 128 * kMiB, "true");
  synced = c->Sync(snap);
  ASSERT_TRUE(synced.ok()) << synced.status();
  absl::StatusOr<v1::Explanation> frag = c->ExplainJob(p + "frag");
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
  EXPECT_EQ(frag->smallest_change().fits_if_at_most(), 96 * kMiB);
  EXPECT_TRUE(hold_nodes.count(frag->shortfall().node())) << frag->DebugString();
}

}  // namespace
}  // namespace berth
