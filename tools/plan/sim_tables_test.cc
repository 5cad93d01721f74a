#include "tools/plan/sim_tables.h"

#include "gtest/gtest.h"
#include "planner/simulator/simulator.h"
#include "tools/plan/report.h"

namespace berth {
namespace plan {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
const absl::Time kStart = absl::FromUnixSeconds(1'800'000'000);

planner::SimJob Job(std::string id, int64_t mem_gib, absl::Duration run,
                    absl::Duration arrival) {
  planner::SimJob j;
  j.job.id = std::move(id);
  j.job.workspace = "ws";
  j.job.resources = {1000, mem_gib * kGiB};
  j.job.expected_duration = run;
  j.job.created_at = kStart + arrival;
  j.arrival_offset = arrival;
  return j;
}

// "a" fills the budget for 10 min; "b" arrives at 1 min, is reserved for
// 10 min and starts then; the rows say so, and the timeline has the steps.
TEST(SimTablesTest, JobRowsAndTimeline) {
  planner::SimInput in;
  in.start = kStart;
  in.budgets.memory_bytes = 8 * kGiB;
  in.budgets.cpu_millis = 8000;
  in.budgets.max_workers = 4;
  in.jobs = {Job("a", 8, absl::Minutes(10), absl::ZeroDuration()),
             Job("b", 8, absl::Minutes(5), absl::Minutes(1))};
  const planner::SimResult r = planner::Simulate(in, {});
  Report rep;
  rep.tables = {JobsTable(in, r), TimelineTable(r)};
  const std::string json = Render(rep, OutputFormat::kJson);
  EXPECT_NE(json.find(R"({"job": "b", "workspace": "ws", "priority": 0, )"
                      R"("outcome": "SUCCEEDED", "arrival_s": 60, "ready_s": 60, )"
                      R"("admitted_s": 600, "started_s": 600, "finished_s": 900, )"
                      R"("wait_s": 540, "promised_at_s": 60, "promised_s": 600, )"
                      R"("promise_late_s": 0, "promise_kept": true, "main_wait_reason": "WAITING_FOR_MEMORY"})"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"({"job": "a", "workspace": "ws", "priority": 0, )"
                      R"("outcome": "SUCCEEDED", "arrival_s": 0, "ready_s": 0, )"
                      R"("admitted_s": 0, "started_s": 0, "finished_s": 600, )"
                      R"("wait_s": 0, "promised_at_s": null, "promised_s": null, )"
                      R"("promise_late_s": null, "promise_kept": null, "main_wait_reason": null})"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"({"time_s": 60, "memory_bytes": 8589934592, "cpu_millis": 1000, )"
                      R"("workers": 1, "queued": 1})"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"({"time_s": 900, "memory_bytes": 0, "cpu_millis": 0, )"
                      R"("workers": 0, "queued": 0})"),
            std::string::npos)
      << json;
}

// With the executor model's latencies the promise is kept a fraction of a
// second late: kept within ExecutorTolerance, late without it, and the
// lateness is reported to the millisecond.
TEST(SimTablesTest, PromiseKeptToleratesTheExecutorLatency) {
  planner::SimInput in;
  in.start = kStart;
  in.budgets.memory_bytes = 8 * kGiB;
  in.budgets.cpu_millis = 8000;
  in.budgets.max_workers = 4;
  in.jobs = {Job("a", 8, absl::Hours(30), absl::ZeroDuration()),
             Job("b", 8, absl::Minutes(5), absl::Minutes(1))};
  planner::SimOptions opt;
  opt.start_latency = absl::Milliseconds(250);
  opt.finish_latency = absl::Milliseconds(50);
  const planner::SimResult r = planner::Simulate(in, opt);
  EXPECT_EQ(ExecutorTolerance(opt), absl::Milliseconds(300));
  Report kept;
  kept.tables = {JobsTable(in, r, ExecutorTolerance(opt))};
  const std::string json = Render(kept, OutputFormat::kJson);
  // a ends at 30 h + 0.25 s, its capacity is back 0.05 s later.
  EXPECT_NE(json.find(R"("admitted_s": 108000.3, "started_s": 108000.55, )"), std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("promised_s": 108000, "promise_late_s": 0.3, "promise_kept": true)"),
            std::string::npos)
      << json;
  Report strict;
  strict.tables = {JobsTable(in, r)};
  EXPECT_NE(Render(strict, OutputFormat::kJson).find(R"("promise_kept": false)"),
            std::string::npos);
}

}  // namespace
}  // namespace plan
}  // namespace berth
