// Invariants of Berth's policy on every example workload, under the
// example's budgets and under tighter ones: usage never above any budget at
// any instant (rebuilt from the per-job results, not the simulator's own
// accounting), and every job either completes or is reported (never fits,
// dependency failed). The count-only baseline, by contrast, overcommits.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "planner/simulator/simulator.h"
#include "tools/plan/input.h"

namespace berth::plan {
namespace {

struct Interval {
  absl::Time start, end;
  const std::string* pool;
  const std::string* workspace;
  planner::Resources resources;
};

void CheckInvariants(const PlanInput& input, const planner::SimInput& in,
                     const planner::SimResult& r) {
  ASSERT_EQ(r.jobs.size(), in.jobs.size());
  std::vector<Interval> held;
  for (const planner::RunningJob& j : in.running) {
    absl::Duration d = j.expected_duration > absl::ZeroDuration() ? j.expected_duration
                                                                  : absl::Hours(1);
    held.push_back({in.start, std::max(j.started_at + d, in.start), &j.pool, &j.workspace,
                    j.resources});
  }
  int64_t reported = 0;
  for (size_t i = 0; i < in.jobs.size(); ++i) {
    const planner::SimJobResult& j = r.jobs[i];
    ASSERT_NE(j.outcome, planner::SimOutcome::kNotRun) << input.path << " " << in.jobs[i].job.id;
    if (j.outcome == planner::SimOutcome::kSucceeded ||
        j.outcome == planner::SimOutcome::kFailed) {
      EXPECT_GE(j.start, j.ready);
      EXPECT_GT(j.end, j.start);
      held.push_back({j.start, j.end, &in.jobs[i].job.pool, &in.jobs[i].job.workspace,
                      in.jobs[i].job.resources});
    } else {
      ++reported;
    }
  }
  EXPECT_EQ(static_cast<size_t>(r.jobs.size() - reported), held.size() - in.running.size());
  // Usage only grows at a start: checking every start instant covers all.
  int64_t peak = 0;
  for (const Interval& at : held) {
    absl::Time t = at.start;
    int64_t mem = 0, cpu = 0, workers = 0;
    absl::flat_hash_map<std::string, int64_t> pools, workspaces;
    for (const Interval& h : held) {
      if (!(h.start <= t && t < h.end)) continue;
      mem += h.resources.memory_bytes;
      cpu += h.resources.cpu_millis;
      ++workers;
      ++pools[*h.pool];
      ++workspaces[*h.workspace];
    }
    peak = std::max(peak, mem);
    ASSERT_LE(mem, in.budgets.memory_bytes) << input.path << " at " << t;
    ASSERT_LE(cpu, in.budgets.cpu_millis) << input.path << " at " << t;
    ASSERT_LE(workers, in.budgets.max_workers) << input.path << " at " << t;
    for (const auto& [pool, max] : in.budgets.pool_max_workers) {
      if (max > 0) {
        ASSERT_LE(pools[pool], max) << input.path << " pool " << pool;
      }
    }
    if (in.budgets.workspace_max_workers > 0) {
      for (const auto& [ws, n] : workspaces) {
        ASSERT_LE(n, in.budgets.workspace_max_workers) << input.path << " " << ws;
      }
    }
  }
  EXPECT_EQ(r.peak_memory_bytes, peak) << input.path;
  EXPECT_EQ(r.peak_memory_over_budget, 0);
}

class ExamplesTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ExamplesTest, BerthNeverExceedsABudgetAndEveryJobIsAccountedFor) {
  auto input = LoadPlanInput(GetParam());
  ASSERT_TRUE(input.ok()) << input.status();
  planner::SimInput in = input->sim;
  for (int variant = 0; variant < 3; ++variant) {
    SCOPED_TRACE(absl::StrCat("variant ", variant));
    in.budgets = input->file_budgets;
    if (variant == 1) {  // tighter: half the memory, 8 workers, database <= 1
      in.budgets.memory_bytes /= 2;
      in.budgets.max_workers = 8;
      in.budgets.pool_max_workers["database"] = 1;
    } else if (variant == 2) {  // a workspace cap and fewer cores
      in.budgets.workspace_max_workers = 3;
      in.budgets.cpu_millis = 12000;
    }
    planner::SimResult r = planner::Simulate(in, planner::SimOptions());
    CheckInvariants(*input, in, r);
  }
}

TEST_P(ExamplesTest, CountBaselineIgnoresMemoryButKeepsItsCount) {
  auto input = LoadPlanInput(GetParam());
  ASSERT_TRUE(input.ok()) << input.status();
  planner::SimInput in = input->sim;
  in.budgets = input->file_budgets;
  planner::SimOptions opt;
  opt.mode = planner::SimMode::kCountBaseline;
  planner::SimResult r = planner::Simulate(in, opt);
  for (const planner::SimUsagePoint& p : r.timeline) {
    ASSERT_LE(p.workers, in.budgets.max_workers);
  }
  EXPECT_EQ(r.plan_calls, 0);
}

INSTANTIATE_TEST_SUITE_P(Examples, ExamplesTest,
                         ::testing::Values("examples/burst.json", "examples/week.json",
                                           "examples/starvation.json"));

// The burst example is the old backend's failure: the count-only limit
// commits more memory than the host has.
TEST(Examples, BurstOvercommitsUnderTheCountOnlyBaseline) {
  auto input = LoadPlanInput("examples/burst.json");
  ASSERT_TRUE(input.ok()) << input.status();
  planner::SimInput in = input->sim;
  in.budgets = input->file_budgets;
  planner::SimOptions opt;
  opt.mode = planner::SimMode::kCountBaseline;
  planner::SimResult r = planner::Simulate(in, opt);
  EXPECT_GT(r.peak_memory_over_budget, 0);
  EXPECT_EQ(r.peak_memory_bytes - in.budgets.memory_bytes, r.peak_memory_over_budget);
}

}  // namespace
}  // namespace berth::plan
