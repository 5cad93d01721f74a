// /ui/jobs.csv through a real Dashboard on 127.0.0.1: streamed in chunks,
// the whole file is every match, each once, in the list's order.
#include <algorithm>
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
#include "executor/reconcile/testing/bench_queue.h"
#include "server/core/executor_core.h"
#include "server/web/dashboard.h"

namespace berth {
namespace {

constexpr char kToken[] = "csv-test-token-0123456789abcdef";

TEST(CsvExportTest, StreamedExportIsEveryMatchOnce) {
  SimulatedClock clock;
  MemoryStore store;
  std::vector<std::string> ids;
  // 3,000 jobs of 20 workspaces, 8 running, 1,000 finished.
  ASSERT_TRUE(FillBenchQueue(store, {3000, 8, 1000}, clock.Now(), &ids).ok());
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
  web::Dashboard dashboard(*auth, core, store, plans, logs, ring, web::DashboardOptions());
  httplib::Server server;
  dashboard.Register(server);
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread serving([&] { server.listen_after_bind(); });
  // Stopped and joined however the test ends (a failed ASSERT returns).
  struct Stop {
    web::Dashboard& dashboard;
    httplib::Server& server;
    std::thread& serving;
    ~Stop() {
      dashboard.Stop();
      server.stop();
      serving.join();
    }
  } stop{dashboard, server, serving};
  httplib::Client client("127.0.0.1", port);
  const httplib::Headers reader = {{"Authorization", absl::StrCat("Bearer ", kToken)}};
  const auto rows = [](const std::string& csv) {
    std::vector<std::string> lines = absl::StrSplit(csv, "\r\n", absl::SkipEmpty());
    if (!lines.empty()) lines.erase(lines.begin());  // the header
    return lines;
  };

  // Every job (3,000: three chunks of 1,000 rows), each once.
  auto all = client.Get("/ui/jobs.csv?sort=id", reader);
  ASSERT_TRUE(all);
  ASSERT_EQ(all->status, 200) << all->body;
  EXPECT_TRUE(absl::StartsWith(all->body, "id,state,workspace,")) << all->body.substr(0, 80);
  const std::vector<std::string> every = rows(all->body);
  ASSERT_EQ(every.size(), ids.size());
  std::vector<std::string> got;
  for (const std::string& line : every) got.push_back(line.substr(0, line.find(',')));
  std::vector<std::string> want = ids;
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);  // sort=id: the list's order, nothing twice or lost
  // A filter: only its matches (1,000 finished, every 4th failed).
  auto finished = client.Get("/ui/jobs.csv?state=succeeded", reader);
  auto failed = client.Get("/ui/jobs.csv?state=failed", reader);
  ASSERT_TRUE(finished && failed);
  EXPECT_EQ(rows(finished->body).size() + rows(failed->body).size(), 1000u);
  EXPECT_EQ(rows(failed->body).size(), 250u);
  for (const std::string& line : rows(failed->body)) {
    EXPECT_TRUE(absl::StrContains(line, ",failed,")) << line;
  }
  // A bad filter: an error naming it, no file.
  auto bad = client.Get("/ui/jobs.csv?priority=high", reader);
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
}

}  // namespace
}  // namespace berth
