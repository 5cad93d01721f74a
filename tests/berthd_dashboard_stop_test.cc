// berthd stops promptly while its dashboard readies a plan: a
// SIGTERM during a background ETA forecast (server/web/ready_plans.h)
// cancels it instead of waiting for it. A live berthd on the real Docker
// engine, real RocksDB, real gRPC and HTTP on 127.0.0.1.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "tests/berthd_process.h"
#include "tools/base/subprocess.h"

namespace berth {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

TEST(BerthdDashboardStopTest, SigtermDuringABackgroundForecastStopsPromptly) {
  BerthdProcessOptions o;
  o.memory = "2Gi";
  o.cpus = "2";
  o.max_workers = 1;
  o.stop_grace = "1s";
  absl::StatusOr<std::unique_ptr<BerthdProcess>> started = BerthdProcess::Start(o);
  ASSERT_TRUE(started.ok()) << started.status();
  BerthdProcess& b = **started;
  // One worker and 4,000 one-minute jobs of 100 distinct priorities (more
  // than the incremental planner ranks lazily, planner/plan/incremental.h,
  // so every forecast plan is a whole-queue plan): each forecast plan starts
  // one job, so the bounded forecast makes ~1,000 plans of ~4,000 jobs —
  // seconds of CPU in small steps, as a 100k queue's forecast is.
  const std::string prefix = UniqueJobPrefix();
  v1::Snapshot s;
  s.set_generation(1);
  for (int i = 0; i < 4000; ++i) {
    v1::JobSpec j = BusyboxJob(absl::StrCat(prefix, "j", i), "ws", 16 * kMiB, "sleep 600");
    j.mutable_expected_duration()->set_seconds(60);
    j.set_priority(i % 100);
    *s.add_jobs() = std::move(j);
  }
  absl::StatusOr<v1::SyncSnapshotResponse> synced = b.Client(Role::kPusher)->Sync(s);
  ASSERT_TRUE(synced.ok()) << synced.status();

  std::unique_ptr<BerthClient> reader_client = b.Client(Role::kReader);
  ASSERT_TRUE(WaitFor(
      [&] {  // a plan of the synced queue is made (the head row only)
        absl::StatusOr<v1::Plan> p = reader_client->GetPlan(1);
        return p.ok() && p->queued_count() >= 3999;
      },
      absl::Seconds(60)));

  httplib::Client http("127.0.0.1", b.metrics_port());
  http.set_read_timeout(120, 0);
  const httplib::Headers reader = {{"Authorization", "Bearer " + TokenFor(Role::kReader)}};
  // Nothing is ready yet: the first page readies the plan itself, the whole
  // forecast: how long one takes here.
  absl::Time a = absl::Now();
  auto first = http.Get("/ui", reader);
  const absl::Duration forecast = absl::Now() - a;
  ASSERT_TRUE(first && first->status == 200) << (first ? first->body : "no answer");
  ASSERT_GT(forecast, absl::Seconds(2))
      << "the forecast is too quick to tell a cancelled one from a finished one";

  // A change: its plan's forecast goes to the background, and the page
  // shows the previous plan meanwhile.
  v1::SetBudgetsRequest change;
  change.mutable_budgets()->set_memory_bytes(int64_t{3} << 30);
  change.mutable_update_mask()->add_paths("memory_bytes");
  ASSERT_TRUE(b.Client(Role::kOperator)->SetBudgets(change).ok());
  uint64_t revision = 0;
  ASSERT_TRUE(WaitFor(
      [&] {  // the changed plan is made (the head row only: no forecast)
        absl::StatusOr<v1::Plan> p = reader_client->GetPlan(1);
        if (!p.ok() || p->budgets().memory_bytes() != (int64_t{3} << 30)) return false;
        revision = p->revision();
        return true;
      },
      absl::Seconds(60)));
  auto during = http.Get("/ui", reader);
  ASSERT_TRUE(during && during->status == 200);
  ASSERT_EQ(during->body.find(absl::StrCat("plan revision ", revision, ",")), std::string::npos)
      << "the changed plan was ready at once: nothing left for the background";

  a = absl::Now();
  const int status = b.Terminate(absl::Seconds(60));
  const absl::Duration stop = absl::Now() - a;
  ASSERT_NE(status, -1) << "berthd did not stop";
  const std::string log = b.Log();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << log;
  // The dashboard's part of the stop (berthd logs it; the rest of the stop,
  // gRPC's and the store's, is not the dashboard's): the forecast was
  // cancelled, not waited for — well under a whole forecast.
  const size_t line = log.find("\"msg\":\"dashboard stopped\"");
  ASSERT_NE(line, std::string::npos) << log;
  const size_t field = log.find("\"seconds\":", line);
  ASSERT_NE(field, std::string::npos) << log.substr(line);
  const absl::Duration dashboard_stop =
      absl::Seconds(std::strtod(log.c_str() + field + std::strlen("\"seconds\":"), nullptr));
  EXPECT_LT(dashboard_stop, forecast / 4)
      << "the dashboard took " << dashboard_stop << " to stop, a forecast " << forecast;
  std::printf("forecast %s; berthd stopped in %s, the dashboard's part %s\n",
              absl::FormatDuration(forecast).c_str(), absl::FormatDuration(stop).c_str(),
              absl::FormatDuration(dashboard_stop).c_str());
}

}  // namespace
}  // namespace berth
