#include "tools/plan/right_size.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace berth {
namespace plan {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;

// `n` jobs of one action asking 8 GiB for an hour, arriving every 10
// minutes, each really peaking at `peak`; 16 GiB: two run at once.
PlanInput Workload(int n, int64_t peak) {
  PlanInput in;
  in.path = "test";
  in.sim.budgets.memory_bytes = 16 * kGiB;
  in.sim.budgets.cpu_millis = 64000;
  in.sim.budgets.max_workers = 100;
  for (int i = 0; i < n; ++i) {
    planner::SimJob j;
    j.job.id = absl::StrCat("j", i);
    j.job.workspace = "w";
    j.job.resources.memory_bytes = 8 * kGiB;
    j.job.resources.cpu_millis = 1000;
    j.job.expected_duration = absl::Hours(1);
    j.arrival_offset = absl::Minutes(10 * i);
    j.job.created_at = in.sim.start + j.arrival_offset;
    in.sim.jobs.push_back(j);
    in.actuals.push_back({"extract", peak});
  }
  return in;
}

TEST(RightSizeTest, JobsArrivingAfterFiveRunsGetTheSuggestedEstimate) {
  const PlanInput in = Workload(40, 1 * kGiB);
  const planner::SimResult before = planner::Simulate(in.sim, planner::SimOptions());
  RightSized sized = RightSize(in, before);
  EXPECT_GT(sized.re_estimated, 0);
  EXPECT_LT(sized.re_estimated, 40) << "the first jobs have nothing to learn from";
  EXPECT_EQ(sized.above_new_estimate, 0);
  for (size_t i = 0; i < in.sim.jobs.size(); ++i) {
    const int64_t m = sized.input.jobs[i].job.resources.memory_bytes;
    EXPECT_TRUE(m == 8 * kGiB || m == 1280 * kMiB) << i << ": " << m;  // 1 GiB + 25%
  }
  EXPECT_EQ(sized.input.jobs[0].job.resources.memory_bytes, 8 * kGiB);
  EXPECT_LT(sized.reserved_gib_hours_after, sized.reserved_gib_hours_before);
  // Smaller estimates let more run at once: the workload ends sooner.
  sized.input.budgets = in.sim.budgets;
  const planner::SimResult after = planner::Simulate(sized.input, planner::SimOptions());
  EXPECT_LT(after.makespan(), before.makespan());
}

TEST(RightSizeTest, UnknownPeaksTeachNothingAndEstimatesAreNeverRaised) {
  PlanInput in = Workload(20, 0);
  RightSized sized = RightSize(in, planner::Simulate(in.sim, planner::SimOptions()));
  EXPECT_EQ(sized.re_estimated, 0);
  in = Workload(20, 12 * kGiB);  // used more than asked: no lower estimate
  sized = RightSize(in, planner::Simulate(in.sim, planner::SimOptions()));
  EXPECT_EQ(sized.re_estimated, 0);
  for (const planner::SimJob& j : sized.input.jobs) {
    EXPECT_EQ(j.job.resources.memory_bytes, 8 * kGiB);
  }
}

}  // namespace
}  // namespace plan
}  // namespace berth
