// /ui/jobs.csv through a real Dashboard on 127.0.0.1: every match up to
// DashboardOptions::csv_max_rows, and a filter matching more refused with
// the count and what to narrow, never a partial file.
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "executor/logs/job_log_reader.h"
#include "executor/logs/log_archive.h"
#include "executor/reconcile/plan_snapshot.h"
#include "executor/runtime/fake_runtime.h"
#include "executor/store/memory_store.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "planner/base/simulated_clock.h"
#include "server/api/auth.h"
#include "server/core/bench_queue.h"
#include "server/core/executor_core.h"
#include "server/web/dashboard.h"

namespace berth {
namespace {

constexpr char kToken[] = "csv-test-token-0123456789abcdef";

TEST(CsvExportTest, EveryMatchUpToTheCapAndARefusalPastIt) {
  SimulatedClock clock;
  MemoryStore store;
  std::vector<std::string> ids;
  // 300 jobs of 20 workspaces, 8 running, 100 finished.
  ASSERT_TRUE(FillBenchQueue(store, {300, 8, 100}, clock.Now(), &ids).ok());
  const v1::Budgets budgets = BenchBudgets();
  absl::Mutex admission;
  ExecutorCoreOptions options;
  options.image_allowed = [](absl::string_view) { return true; };
  PlanCache plans(store, clock, budgets, planner::Policy());
  ExecutorCore core(store, plans, clock, admission, options);
  absl::StatusOr<std::unique_ptr<LogArchive>> archive =
      LogArchive::Open({absl::StrCat(std::getenv("TEST_TMPDIR"), "/logs"), int64_t{1} << 20});
  ASSERT_TRUE(archive.ok()) << archive.status();
  FakeRuntime runtime;
  JobLogReader logs(store, **archive, runtime);
  absl::StatusOr<Authenticator> auth =
      Authenticator::FromString(absl::StrCat("reader csv ", kToken, "\n"), "test");
  ASSERT_TRUE(auth.ok()) << auth.status();
  web::UsageRing ring;
  web::DashboardOptions wo;
  wo.csv_max_rows = 120;
  web::Dashboard dashboard(*auth, core, store, plans, logs, ring, wo);
  httplib::Server server;
  dashboard.Register(server);
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread serving([&] { server.listen_after_bind(); });
  httplib::Client client("127.0.0.1", port);
  const httplib::Headers reader = {{"Authorization", absl::StrCat("Bearer ", kToken)}};

  // 100 finished jobs: under the cap, every one, one line each.
  auto finished = client.Get("/ui/jobs.csv?state=succeeded", reader);
  ASSERT_TRUE(finished);
  auto failed = client.Get("/ui/jobs.csv?state=failed", reader);
  ASSERT_TRUE(failed);
  EXPECT_EQ(finished->status, 200) << finished->body;
  EXPECT_EQ(failed->status, 200) << failed->body;
  const auto lines = [](const std::string& csv) {
    return std::vector<std::string>(absl::StrSplit(csv, "\r\n", absl::SkipEmpty())).size() - 1;
  };
  EXPECT_EQ(lines(finished->body) + lines(failed->body), 100u);
  // Every job: 300 > 120, refused with the count, not cut.
  auto all = client.Get("/ui/jobs.csv", reader);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->status, 400);
  EXPECT_TRUE(absl::StrContains(all->body, "300 jobs match")) << all->body;
  EXPECT_TRUE(absl::StrContains(all->body, "at most 120 rows")) << all->body;
  EXPECT_FALSE(absl::StrContains(all->body, ids[0])) << all->body;
  // Exactly the cap is fine.
  auto one_ws = client.Get("/ui/jobs.csv?workspace=ws0", reader);
  ASSERT_TRUE(one_ws);
  EXPECT_EQ(one_ws->status, 200) << one_ws->body;
  EXPECT_GT(lines(one_ws->body), 0u);
  EXPECT_LE(lines(one_ws->body), 120u);
  server.stop();
  serving.join();
  dashboard.Stop();
}

}  // namespace
}  // namespace berth
