#include "planner/simulator/simulator.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/simulator/simulator_test_inputs.h"

namespace berth::planner {
namespace {

using testing::Job;
using testing::kGi;
using testing::kStart;
using testing::MakeBudgets;
using testing::RandomWorkload;
using testing::Running;

TEST(Simulate, JobsThatFitTogetherStartAtOnce) {
  SimInput in;
  in.start = kStart;
  in.budgets = MakeBudgets(256 * kGi, 32000, 24);
  in.jobs = {Job("a", 4 * kGi, absl::Minutes(10)),
             Job("b", 4 * kGi, absl::Minutes(30))};
  SimResult r = Simulate(in, SimOptions());
  ASSERT_EQ(r.jobs.size(), 2u);
  EXPECT_EQ(r.jobs[0].outcome, SimOutcome::kSucceeded);
  EXPECT_EQ(r.jobs[0].start, kStart);
  EXPECT_EQ(r.jobs[0].end, kStart + absl::Minutes(10));
  EXPECT_EQ(r.jobs[1].end, kStart + absl::Minutes(30));
  EXPECT_EQ(r.makespan(), absl::Minutes(30));
  EXPECT_EQ(r.peak_memory_bytes, 8 * kGi);
  EXPECT_GE(r.plan_calls, 1);
}

TEST(Simulate, MemoryBindsAndTheThirdJobWaitsForTheFirstToEnd) {
  SimInput in;
  in.start = kStart;
  in.budgets = MakeBudgets(256 * kGi, 32000, 24);
  in.jobs = {Job("a", 100 * kGi, absl::Minutes(10)),
             Job("b", 100 * kGi, absl::Minutes(20)),
             Job("c", 100 * kGi, absl::Minutes(5), absl::Seconds(1))};
  SimResult r = Simulate(in, SimOptions());
  EXPECT_EQ(r.jobs[2].outcome, SimOutcome::kSucceeded);
  EXPECT_EQ(r.jobs[2].arrival, kStart + absl::Seconds(1));
  EXPECT_EQ(r.jobs[2].start, kStart + absl::Minutes(10));
  EXPECT_EQ(r.jobs[2].wait(), absl::Minutes(10) - absl::Seconds(1));
  EXPECT_EQ(r.jobs[2].main_wait_reason, Reason::kWaitingForMemory);
  EXPECT_EQ(r.jobs[2].main_wait_time, absl::Minutes(10) - absl::Seconds(1));
  EXPECT_EQ(r.makespan(), absl::Minutes(20));
  EXPECT_EQ(r.peak_memory_bytes, 200 * kGi);
  EXPECT_EQ(r.peak_memory_over_budget, 0);
}

// The executor's latencies: the container runs start_latency
// after admission, the capacity comes back finish_latency after it ends, and
// the next job is admitted only then.
TEST(Simulate, ExecutorLatenciesHoldCapacityAroundTheRun) {
  SimInput in;
  in.start = kStart;
  in.budgets = MakeBudgets(256 * kGi, 32000, 24);
  in.jobs = {Job("a", 200 * kGi, absl::Minutes(10)), Job("b", 200 * kGi, absl::Minutes(5))};
  SimOptions opt;
  opt.start_latency = absl::Seconds(2);
  opt.finish_latency = absl::Seconds(1);
  SimResult r = Simulate(in, opt);
  ASSERT_EQ(r.jobs.size(), 2u);
  EXPECT_EQ(r.jobs[0].start, kStart);
  EXPECT_EQ(r.jobs[0].run_start, kStart + absl::Seconds(2));
  EXPECT_EQ(r.jobs[0].run_end, kStart + absl::Seconds(2) + absl::Minutes(10));
  EXPECT_EQ(r.jobs[0].end, kStart + absl::Seconds(3) + absl::Minutes(10));
  EXPECT_EQ(r.jobs[1].start, r.jobs[0].end);
  EXPECT_EQ(r.makespan(), absl::Minutes(15) + absl::Seconds(6));

  SimResult plain = Simulate(in, SimOptions());
  EXPECT_EQ(plain.jobs[0].run_start, plain.jobs[0].start);
  EXPECT_EQ(plain.jobs[0].run_end, plain.jobs[0].end);
  EXPECT_EQ(plain.makespan(), absl::Minutes(15));
}

// Bounded start parallelism: with one start slot, jobs admitted together
// start one after the other.
TEST(Simulate, StartsQueueForTheExecutorsStartSlots) {
  SimInput in;
  in.start = kStart;
  in.budgets = MakeBudgets(256 * kGi, 32000, 24);
  in.jobs = {Job("a", kGi, absl::Minutes(10)), Job("b", kGi, absl::Minutes(10)),
             Job("c", kGi, absl::Minutes(10))};
  SimOptions opt;
  opt.start_latency = absl::Seconds(2);
  opt.start_parallelism = 2;
  SimResult r = Simulate(in, opt);
  std::vector<absl::Time> starts;
  for (const SimJobResult& j : r.jobs) {
    EXPECT_EQ(j.start, kStart);
    starts.push_back(j.run_start);
  }
  std::sort(starts.begin(), starts.end());
  EXPECT_EQ(starts, (std::vector<absl::Time>{kStart + absl::Seconds(2), kStart + absl::Seconds(2),
                                             kStart + absl::Seconds(4)}));
  EXPECT_EQ(r.makespan(), absl::Minutes(10) + absl::Seconds(4));
}

TEST(Simulate, ActualDurationsDifferFromEstimates) {
  SimInput in;
  in.start = kStart;
  in.budgets = MakeBudgets(256 * kGi, 32000, 1);
  SimJob a = Job("a", kGi, absl::Hours(1));
  a.actual_duration = absl::Minutes(5);
  in.jobs = {a, Job("b", kGi, absl::Minutes(10))};
  SimResult r = Simulate(in, SimOptions());
  EXPECT_EQ(r.jobs[0].end, kStart + absl::Minutes(5));
  EXPECT_EQ(r.jobs[1].start, kStart + absl::Minutes(5));
  EXPECT_EQ(r.jobs[1].main_wait_reason, Reason::kWaitingForWorkerSlot);
}

TEST(Simulate, JobsRunningPastTheirMaxDurationAreStoppedAndFail) {
  SimInput in;
  in.start = kStart;
  in.budgets = MakeBudgets(256 * kGi, 32000, 24);
  SimJob a = Job("a", kGi, absl::Minutes(10));
  a.actual_duration = absl::Hours(3);
  a.max_duration = absl::Hours(1);
  SimJob b = Job("b", kGi, absl::Minutes(10));
  b.job.depends_on = {"a"};
  SimJob c = Job("c", kGi, absl::Minutes(10));
  c.max_duration = absl::Hours(1);  // ends in time
  in.jobs = {a, b, c};
  SimResult r = Simulate(in, SimOptions());
  EXPECT_EQ(r.jobs[0].outcome, SimOutcome::kFailed);
  EXPECT_TRUE(r.jobs[0].timed_out);
  EXPECT_EQ(r.jobs[0].end, kStart + absl::Hours(1));
  EXPECT_EQ(r.jobs[1].outcome, SimOutcome::kDependencyFailed);
  EXPECT_EQ(r.jobs[2].outcome, SimOutcome::kSucceeded);
  EXPECT_FALSE(r.jobs[2].timed_out);
}

TEST(Simulate, FailuresFailTheirDependantsTransitively) {
  SimInput in;
  in.start = kStart;
  in.budgets = MakeBudgets(256 * kGi, 32000, 24);
  SimJob a = Job("a", kGi, absl::Minutes(10));
  a.fails = true;
  SimJob b = Job("b", kGi, absl::Minutes(10));
  b.job.depends_on = {"a"};
  SimJob c = Job("c", kGi, absl::Minutes(10));
  c.job.depends_on = {"b"};
  SimJob d = Job("d", kGi, absl::Minutes(10));
  in.jobs = {a, b, c, d};
  SimResult r = Simulate(in, SimOptions());
  EXPECT_EQ(r.jobs[0].outcome, SimOutcome::kFailed);
  EXPECT_EQ(r.jobs[1].outcome, SimOutcome::kDependencyFailed);
  EXPECT_EQ(r.jobs[1].end, kStart + absl::Minutes(10));
  // Waiting for a dependency is not waiting for capacity.
  EXPECT_EQ(r.jobs[1].main_wait_reason, Reason::kUnspecified);
  EXPECT_EQ(r.jobs[2].outcome, SimOutcome::kDependencyFailed);
  EXPECT_EQ(r.jobs[3].outcome, SimOutcome::kSucceeded);
}

TEST(Simulate, DependantsRunAfterTheirDependencySucceeds) {
  SimInput in;
  in.start = kStart;
  in.budgets = MakeBudgets(256 * kGi, 32000, 24);
  SimJob b = Job("b", kGi, absl::Minutes(10));
  b.job.depends_on = {"a"};
  // The dependency arrives after its dependant: b enters the queue with a.
  in.jobs = {b, Job("a", kGi, absl::Minutes(7), absl::Minutes(3))};
  SimResult r = Simulate(in, SimOptions());
  EXPECT_EQ(r.jobs[0].arrival, kStart + absl::Minutes(3));
  EXPECT_EQ(r.jobs[0].start, kStart + absl::Minutes(10));
  EXPECT_EQ(r.jobs[0].ready, kStart + absl::Minutes(10));
  EXPECT_EQ(r.jobs[0].wait(), absl::ZeroDuration());
  EXPECT_EQ(r.jobs[0].outcome, SimOutcome::kSucceeded);
}

TEST(Simulate, JobsLargerThanTheBudgetAreReportedAsNeverFitting) {
  SimInput in;
  in.start = kStart;
  in.budgets = MakeBudgets(256 * kGi, 32000, 24);
  in.jobs = {Job("ok", kGi, absl::Minutes(1)), Job("huge", 300 * kGi, absl::Minutes(1))};
  SimResult r = Simulate(in, SimOptions());
  EXPECT_EQ(r.jobs[1].outcome, SimOutcome::kRejected);
  EXPECT_EQ(r.jobs[1].problem, Problem::kExceedsBudget);
  EXPECT_THAT(r.never_fits, ::testing::ElementsAre(1u));
  EXPECT_EQ(r.jobs[0].outcome, SimOutcome::kSucceeded);
}

TEST(Simulate, RunningJobsHoldResourcesUntilTheirExpectedEnd) {
  SimInput in;
  in.start = kStart;
  in.budgets = MakeBudgets(100 * kGi, 32000, 24);
  in.running = {Running("r", 80 * kGi, kStart - absl::Minutes(20), absl::Minutes(30))};
  in.jobs = {Job("a", 40 * kGi, absl::Minutes(10))};
  SimResult r = Simulate(in, SimOptions());
  EXPECT_EQ(r.jobs[0].start, kStart + absl::Minutes(10));
  EXPECT_EQ(r.timeline.front().memory_bytes, 80 * kGi);
}

// The main wait reason is the one a job waited longest under; a later
// reason must exceed that wait, not equal it. c waits for a worker slot
// until a ends at 10 min, then for memory until b ends.
TEST(Simulate, AMainWaitReasonTiedByALaterOneStaysTheFirst) {
  struct Case {
    absl::Duration b_runs;
    Reason reason;
    absl::Duration time;
  };
  for (const Case& c : {Case{absl::Minutes(20), Reason::kWaitingForWorkerSlot, absl::Minutes(10)},
                        Case{absl::Minutes(21), Reason::kWaitingForMemory, absl::Minutes(11)}}) {
    SimInput in;
    in.start = kStart;
    in.budgets = MakeBudgets(200 * kGi, 32000, 2);
    in.jobs = {Job("a", 10 * kGi, absl::Minutes(10)), Job("b", 150 * kGi, c.b_runs),
               Job("c", 100 * kGi, absl::Minutes(5))};
    SimResult r = Simulate(in, SimOptions());
    SCOPED_TRACE(absl::FormatDuration(c.b_runs));
    EXPECT_EQ(r.jobs[2].start, kStart + c.b_runs);
    EXPECT_EQ(r.jobs[2].main_wait_reason, c.reason);
    EXPECT_EQ(r.jobs[2].main_wait_time, c.time);
  }
}

// Waits are summed exactly however long: 80 years and a quarter of a
// nanosecond (absl::Duration's resolution) is more quarter nanoseconds
// than an int64 holds.
TEST(Simulate, AnEightyYearWaitIsSummedExactly) {
  const absl::Duration eighty_years = absl::Hours(24 * 365 * 80) + absl::Nanoseconds(1) / 4;
  SimInput in;
  in.start = kStart;
  in.budgets = MakeBudgets(100 * kGi, 32000, 1);
  in.running = {Running("r", kGi, kStart, eighty_years)};
  in.jobs = {Job("a", kGi, absl::Minutes(10))};
  SimResult r = Simulate(in, SimOptions());
  EXPECT_EQ(r.jobs[0].start, kStart + eighty_years);
  EXPECT_EQ(r.jobs[0].main_wait_reason, Reason::kWaitingForWorkerSlot);
  EXPECT_EQ(r.jobs[0].main_wait_time, eighty_years);
}

// The old backend's rule on a hand-computed case: 64 GiB, MAX_WORKERS=4,
// four 24 GiB jobs and one 1 GiB job arriving together. FIFO by arrival
// (then created_at, id): a, b, c, d start at once and commit 96 GiB, 32 GiB
// above the budget; e waits for a worker. Berth runs at most two 24 GiB jobs
// at a time (48 GiB) plus e.
TEST(Simulate, CountBaselineOvercommitOnAHandComputedCase) {
  SimInput in;
  in.start = kStart;
  in.budgets = MakeBudgets(64 * kGi, 32000, 4);
  for (const char* id : {"a", "b", "c", "d"}) {
    in.jobs.push_back(Job(id, 24 * kGi, absl::Minutes(10)));
  }
  in.jobs.push_back(Job("e", kGi, absl::Minutes(10), absl::Seconds(1)));
  SimOptions baseline;
  baseline.mode = SimMode::kCountBaseline;
  SimResult b = Simulate(in, baseline);
  EXPECT_EQ(b.peak_memory_bytes, 96 * kGi);
  EXPECT_EQ(b.peak_memory_over_budget, 32 * kGi);
  EXPECT_EQ(b.peak_memory_at, kStart);
  EXPECT_EQ(b.plan_calls, 0);
  EXPECT_EQ(b.jobs[4].start, kStart + absl::Minutes(10));
  EXPECT_EQ(b.makespan(), absl::Minutes(20));

  SimResult p = Simulate(in, SimOptions());
  EXPECT_EQ(p.peak_memory_over_budget, 0);
  EXPECT_EQ(p.peak_memory_bytes, 49 * kGi);
  EXPECT_EQ(p.makespan(), absl::Minutes(20));

  // A different count: MAX_WORKERS=2 commits 48 GiB, within the budget.
  baseline.baseline_max_workers = 2;
  SimResult b2 = Simulate(in, baseline);
  EXPECT_EQ(b2.peak_memory_bytes, 48 * kGi);
  EXPECT_EQ(b2.peak_memory_over_budget, 0);
}

TEST(Simulate, ProgressIsReportedUpToOne) {
  SimInput in = RandomWorkload(3, 100);
  std::vector<double> seen;
  SimOptions opt;
  opt.progress = [&seen](double f) { seen.push_back(f); };
  SimResult r = Simulate(in, opt);
  EXPECT_EQ(r.jobs.size(), 100u);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), 1.0);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
}

// On a node inventory the simulator places every job on a node Plan() chose,
// and the running jobs it passes to the next plan carry it: no node is ever
// asked for more memory than it has, though the cluster total would allow it.
TEST(Simulate, OnNodesEveryPlanSeesRunningJobsOnTheirNodes) {
  SimInput in;
  in.start = kStart;
  in.budgets = MakeBudgets(0, 0, 0);  // the nodes' sums
  for (const char* id : {"a", "b"}) {
    Node n;
    n.id = id;
    n.memory_bytes = 16 * kGi;
    n.cpu_millis = 8000;
    in.budgets.nodes.push_back(n);
  }
  for (int i = 0; i < 12; ++i) {
    in.jobs.push_back(Job(absl::StrCat("j", i), (6 + i % 5) * kGi,
                          absl::Minutes(10 + 7 * i), absl::Minutes(i)));
  }
  int plans = 0;
  SimOptions o;
  o.on_plan = [&](const State& s, const PlanResult& r) {
    ++plans;
    absl::flat_hash_map<std::string, int64_t> used;
    for (const RunningJob& j : s.running) {
      EXPECT_FALSE(j.node.empty()) << j.id;
      used[j.node] += j.resources.memory_bytes;
    }
    for (size_t k = 0; k < r.decisions.size(); ++k) {
      if (r.decisions[k].verdict != Verdict::kAdmit) continue;
      used[r.nodes[r.placements[k].node]] += s.queued[r.decisions[k].job].resources.memory_bytes;
    }
    for (const auto& [node, bytes] : used) EXPECT_LE(bytes, 16 * kGi) << node;
  };
  SimResult r = Simulate(in, o);
  EXPECT_GT(plans, 5);
  for (const SimJobResult& j : r.jobs) EXPECT_EQ(j.outcome, SimOutcome::kSucceeded);
  EXPECT_LE(r.peak_memory_bytes, 32 * kGi);
}

}  // namespace
}  // namespace berth::planner
