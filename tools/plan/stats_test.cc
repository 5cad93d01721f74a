#include "tools/plan/stats.h"

#include "gtest/gtest.h"

namespace berth::plan {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'800'000'000);

TEST(Percentile, RankFloorQNPlusOne) {
  std::vector<absl::Duration> v;
  for (int i = 1; i <= 20; ++i) v.push_back(absl::Seconds(i));
  EXPECT_EQ(Percentile(v, 50), absl::Seconds(11));
  EXPECT_EQ(Percentile(v, 90), absl::Seconds(19));
  EXPECT_EQ(Percentile(v, 95), absl::Seconds(20));
  EXPECT_EQ(Percentile(v, 100), absl::Seconds(20));
  EXPECT_EQ(Percentile({}, 95), absl::ZeroDuration());
  EXPECT_EQ(Percentile({absl::Seconds(7)}, 50), absl::Seconds(7));
}

TEST(Summarise, TimeWeightedMeansAndPeaks) {
  planner::SimResult r;
  r.start = kT0;
  r.end = kT0 + absl::Hours(4);
  // 100% memory for 1 h, 50% for 1 h, 0 for 2 h: mean 37.5%.
  r.timeline = {{kT0, 100, 10, 4, 3},
                {kT0 + absl::Hours(1), 50, 5, 2, 1},
                {kT0 + absl::Hours(2), 0, 0, 0, 0}};
  planner::Budgets b;
  b.memory_bytes = 100;
  b.cpu_millis = 10;
  b.max_workers = 4;
  UsageSummary s = Summarise(r, b);
  EXPECT_DOUBLE_EQ(s.memory.mean, 0.375);
  EXPECT_DOUBLE_EQ(s.memory.peak, 1.0);
  EXPECT_DOUBLE_EQ(s.cpu.mean, 0.375);
  EXPECT_DOUBLE_EQ(s.workers.mean, 0.375);
  EXPECT_DOUBLE_EQ(s.mean_queue, 1.0);
  EXPECT_EQ(s.peak_queue, 3);
}

TEST(Waits, OnlyJobsThatStartedCount) {
  planner::SimInput in;
  planner::SimResult r;
  for (int i = 0; i < 3; ++i) {
    planner::SimJob j;
    j.job.id = std::to_string(i);
    j.job.workspace = i == 0 ? "a" : "b";
    j.job.priority = i;
    in.jobs.push_back(j);
    planner::SimJobResult jr;
    jr.arrival = jr.ready = kT0;
    jr.start = kT0 + absl::Minutes(10 * i);
    jr.outcome = i == 2 ? planner::SimOutcome::kRejected : planner::SimOutcome::kSucceeded;
    r.jobs.push_back(jr);
  }
  WaitStats all = AllWaits(r);
  EXPECT_EQ(all.jobs, 2);
  EXPECT_EQ(all.max, absl::Minutes(10));
  EXPECT_EQ(LongestWaiting(r), 1);
  auto by_prio = WaitsByPriority(in, r);
  ASSERT_EQ(by_prio.size(), 2u);
  EXPECT_EQ(by_prio[0].priority, 1);  // highest first
  auto by_ws = WaitsByWorkspace(in, r);
  ASSERT_EQ(by_ws.size(), 2u);
  EXPECT_EQ(by_ws[0].key, "b");  // worst p95 first
}

}  // namespace
}  // namespace berth::plan
