// The dashboard against the real berthd --runtime=swarm on the
// real test swarm: every page answers and shows what runs where -- the
// overview's budgets, the plan's waiting job with its reason, the running
// jobs with their nodes, a job's explanation, a finished job's log (whole,
// for operators), each node's row, the chart. (The nodes page's rows are
// checked against sampled placements in berthd_swarm_nodes_test; the real
// browser test runs on one Docker host: tests/web_ui_browser_test.)
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "executor/runtime/swarm/swarm_runtime.h"
#include "executor/runtime/swarm/testing/swarm_test_util.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "tests/swarm_berthd.h"

namespace berth {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

TEST(BerthdSwarmDashboard, EveryPageShowsTheSwarmsJobsAndNodes) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> started = StartSwarmBerthd(256 * kMiB);
  ASSERT_TRUE(started.ok()) << started.status();
  BerthdProcess& b = **started;
  std::unique_ptr<BerthClient> c = b.Client(Role::kPusher);
  const std::string p = UniqueJobPrefix();
  const std::string done = p + "done", runs = p + "runs", waits = p + "waits";
  v1::Snapshot s;
  s.set_generation(1);
  *s.add_jobs() = BusyboxJob(done, "ws-a", 64 * kMiB, "echo hello-from-the-swarm");
  *s.add_jobs() = BusyboxJob(runs, "ws-b", 64 * kMiB, "sleep 120");
  v1::JobSpec w = BusyboxJob(waits, "ws-c", 64 * kMiB, "true");
  w.add_depends_on(runs);  // waits while `runs` runs
  *s.add_jobs() = w;
  ASSERT_TRUE(c->Sync(s).ok());
  absl::StatusOr<v1::Job> d = WaitTerminal(*c, done, absl::Seconds(90));
  ASSERT_TRUE(d.ok()) << d.status() << "\n" << b.Log();
  ASSERT_EQ(d->state(), v1::JOB_STATE_SUCCEEDED) << d->message();
  absl::StatusOr<v1::Job> r = WaitJob(
      *c, runs, [](const v1::Job& j) { return j.state() == v1::JOB_STATE_RUNNING; },
      absl::Seconds(60));
  ASSERT_TRUE(r.ok()) << r.status() << "\n" << b.Log();
  ASSERT_FALSE(r->node().empty());
  // The nodes as the manager lists them, not as berthd says.
  absl::StatusOr<std::unique_ptr<SwarmRuntime>> manager =
      SwarmRuntime::Create(testing::SwarmTestOptions(b.instance()));
  ASSERT_TRUE(manager.ok()) << manager.status();
  absl::StatusOr<std::vector<NodeInfo>> nodes = (*manager)->ListNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 3u);

  httplib::Client http("127.0.0.1", b.metrics_port());
  const httplib::Headers reader = {{"Authorization", "Bearer " + TokenFor(Role::kReader)}};
  const httplib::Headers op = {{"Authorization", "Bearer " + TokenFor(Role::kOperator)}};
  auto get = [&](const std::string& path, const httplib::Headers& h) {
    auto res = http.Get(path.c_str(), h);
    EXPECT_TRUE(res) << path;
    if (!res) return std::string();
    EXPECT_EQ(res->status, 200) << path << "\n" << res->body;
    return res->body;
  };
  const std::string overview = get("/ui", reader);
  EXPECT_TRUE(absl::StrContains(overview, "memory")) << overview;
  const std::string plan = get("/ui/plan", reader);
  EXPECT_TRUE(absl::StrContains(plan, waits)) << plan;
  EXPECT_TRUE(absl::StrContains(plan, runs)) << plan;
  const std::string running = get("/ui/running", reader);
  EXPECT_TRUE(absl::StrContains(running, runs)) << running;
  EXPECT_TRUE(absl::StrContains(running, absl::StrCat("<td>", r->node(), "</td>"))) << running;
  const std::string job = get("/ui/job?id=" + waits, reader);
  EXPECT_TRUE(absl::StrContains(job, runs)) << "the dependency that holds it:\n" << job;
  const std::string finished = get("/ui/job?id=" + done, reader);
  EXPECT_TRUE(absl::StrContains(finished, "hello-from-the-swarm")) << finished;
  const std::string log = get("/ui/log?id=" + done, op);
  EXPECT_TRUE(absl::StrContains(log, "hello-from-the-swarm")) << log;
  auto denied = http.Get(("/ui/log?id=" + done).c_str(), reader);
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->status, 403) << "a reader may not read whole logs by default";
  const std::string nodes_page = get("/ui/nodes", reader);
  for (const NodeInfo& n : *nodes) {
    EXPECT_TRUE(absl::StrContains(nodes_page, absl::StrCat("<tr id=\"node-", n.id, "\">")))
        << n.id << " has no row:\n" << nodes_page;
  }
  const std::string chart = get("/ui/chart", reader);
  EXPECT_TRUE(absl::StrContains(chart, "<svg")) << chart.substr(0, 300);
  (void)testing::RemoveInstanceServices(b.instance());
}

}  // namespace
}  // namespace berth
