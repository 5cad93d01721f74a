// SimOptions::start_contention: starts that slow each other (processor
// sharing of the last start_contention of each start).
#include <vector>

#include "gtest/gtest.h"
#include "planner/simulator/simulator.h"
#include "planner/simulator/simulator_test_inputs.h"

namespace berth::planner {
namespace {

using testing::Job;
using testing::kGi;
using testing::kStart;
using testing::MakeBudgets;

SimInput Input(std::vector<SimJob> jobs) {
  SimInput in;
  in.start = kStart;
  in.budgets = MakeBudgets(256 * kGi, 32000, 24);
  in.jobs = std::move(jobs);
  return in;
}

SimJob ArrivingAt(SimJob job, absl::Duration offset) {
  job.arrival_offset = offset;
  return job;
}

std::vector<absl::Duration> Latencies(const SimResult& r) {
  std::vector<absl::Duration> out;
  for (const SimJobResult& j : r.jobs) out.push_back(j.run_start - j.start);
  return out;
}

// k starts that begin together each take start_latency + (k - 1) *
// start_contention; the run and the finish latency follow as before.
TEST(SimulateStarts, StartsBegunTogetherShareTheContendedPart) {
  SimInput in = Input({Job("a", kGi, absl::Minutes(10)), Job("b", kGi, absl::Minutes(10)),
                       Job("c", kGi, absl::Minutes(10))});
  SimOptions opt;
  opt.start_latency = absl::Seconds(2);
  opt.start_contention = absl::Milliseconds(500);
  opt.finish_latency = absl::Seconds(1);
  SimResult r = Simulate(in, opt);
  const absl::Duration three = absl::Seconds(3);
  EXPECT_EQ(Latencies(r), (std::vector<absl::Duration>{three, three, three}));
  for (const SimJobResult& j : r.jobs) {
    EXPECT_EQ(j.run_end, j.run_start + absl::Minutes(10));
    EXPECT_EQ(j.end, j.run_end + absl::Seconds(1));
  }

  opt.start_contention = absl::ZeroDuration();
  const absl::Duration two = absl::Seconds(2);
  EXPECT_EQ(Latencies(Simulate(in, opt)), (std::vector<absl::Duration>{two, two, two}));
}

// A start that overlaps another only in part is slowed only while both
// share: a's work runs alone from 1 s to 1.5 s (0.5 s left), then shared
// with b's, so a ends at 2.5 s and b, with 0.5 s left, alone at 3 s.
TEST(SimulateStarts, APartialOverlapSlowsOnlyWhileShared) {
  SimInput in = Input({Job("a", kGi, absl::Minutes(10)),
                       ArrivingAt(Job("b", kGi, absl::Minutes(10)), absl::Milliseconds(500))});
  SimOptions opt;
  opt.start_latency = absl::Seconds(2);
  opt.start_contention = absl::Seconds(1);
  SimResult r = Simulate(in, opt);
  EXPECT_EQ(r.jobs[0].run_start, kStart + absl::Milliseconds(2500));
  EXPECT_EQ(r.jobs[1].run_start, kStart + absl::Seconds(3));

  // Begun after a's work is done: b is not slowed at all.
  in.jobs[1].arrival_offset = absl::Seconds(2);
  r = Simulate(in, opt);
  EXPECT_EQ(Latencies(r), (std::vector<absl::Duration>{absl::Seconds(2), absl::Seconds(2)}));
}

// With start slots, a start waiting for one begins when a start ends, and
// only the starts in flight share.
TEST(SimulateStarts, OnlyStartsInASlotShare) {
  SimInput in = Input({Job("a", kGi, absl::Minutes(10)), Job("b", kGi, absl::Minutes(10)),
                       Job("c", kGi, absl::Minutes(10))});
  SimOptions opt;
  opt.start_latency = absl::Seconds(2);
  opt.start_contention = absl::Milliseconds(500);
  opt.start_parallelism = 2;
  SimResult r = Simulate(in, opt);
  EXPECT_EQ(Latencies(r), (std::vector<absl::Duration>{absl::Milliseconds(2500),
                                                       absl::Milliseconds(2500),
                                                       absl::Milliseconds(4500)}));
  EXPECT_EQ(r.makespan(), absl::Minutes(10) + absl::Milliseconds(4500));
}

// The contended part is at most the whole start latency.
TEST(SimulateStarts, ContentionIsCappedAtTheStartLatency) {
  SimInput in = Input({Job("a", kGi, absl::Minutes(10)), Job("b", kGi, absl::Minutes(10))});
  SimOptions opt;
  opt.start_latency = absl::Seconds(1);
  opt.start_contention = absl::Seconds(5);
  EXPECT_EQ(Latencies(Simulate(in, opt)),
            (std::vector<absl::Duration>{absl::Seconds(2), absl::Seconds(2)}));
}

// Planning at container starts still happens when starts end by contention,
// and every job runs (the event loop does not stop while starts are in
// flight).
TEST(SimulateStarts, PlansAtStartsAndRunsEveryJob) {
  std::vector<SimJob> jobs;
  for (int k = 0; k < 12; ++k) {
    jobs.push_back(ArrivingAt(Job("j" + std::to_string(k), 100 * kGi, absl::Minutes(1 + k % 3)),
                              absl::Seconds(k * 7)));
  }
  SimInput in = Input(std::move(jobs));
  SimOptions opt;
  opt.start_latency = absl::Seconds(2);
  opt.start_contention = absl::Seconds(1);
  opt.start_parallelism = 2;
  opt.plan_at_starts = true;
  int plans_at_starts = 0;
  SimResult r = Simulate(in, opt);
  for (const SimJobResult& j : r.jobs) {
    EXPECT_EQ(j.outcome, SimOutcome::kSucceeded);
    EXPECT_GE(j.run_start - j.start, absl::Seconds(2));
  }
  opt.on_plan = [&](const State&, const PlanResult& plan) {
    for (const SimJobResult& j : r.jobs) plans_at_starts += plan.now == j.run_start ? 1 : 0;
  };
  SimResult again = Simulate(in, opt);
  EXPECT_EQ(Latencies(again), Latencies(r));
  EXPECT_GT(plans_at_starts, 0);
}

// SimOptions::start_jitter moves each start (without contention: within
// +-start_jitter of the model), the same for the same seed, differently for
// another, in both start models; 0 is the model itself.
TEST(SimulateStarts, JitterMovesEachStartWithinItsBoundAndRepeatsPerSeed) {
  std::vector<SimJob> jobs;
  for (int k = 0; k < 40; ++k) jobs.push_back(Job("j" + std::to_string(k), kGi, absl::Minutes(5)));
  SimInput in = Input(std::move(jobs));
  for (absl::Duration contention : {absl::ZeroDuration(), absl::Milliseconds(100)}) {
    SCOPED_TRACE(absl::FormatDuration(contention));
    SimOptions opt;
    opt.start_latency = absl::Milliseconds(400);
    opt.start_contention = contention;  // 40 starts at once: each takes 400 ms + 39 x 100 ms
    const std::vector<absl::Duration> model = Latencies(Simulate(in, opt));
    opt.start_jitter = absl::Milliseconds(50);
    opt.start_jitter_seed = 1;
    const std::vector<absl::Duration> one = Latencies(Simulate(in, opt));
    opt.start_jitter_seed = 2;
    const std::vector<absl::Duration> two = Latencies(Simulate(in, opt));
    ASSERT_EQ(one.size(), model.size());
    int moved = 0, early = 0, late = 0;
    for (size_t k = 0; k < model.size(); ++k) {
      // With contention a start's share also moves with the others' delays.
      if (contention == absl::ZeroDuration()) {
        EXPECT_LE(absl::AbsDuration(one[k] - model[k]), absl::Milliseconds(50)) << k;
      }
      moved += one[k] != model[k] ? 1 : 0;
      early += one[k] < model[k] ? 1 : 0;
      late += one[k] > model[k] ? 1 : 0;
    }
    EXPECT_EQ(moved, static_cast<int>(model.size()));
    EXPECT_GT(early, 5);
    // Together, the 40 shares end with the last of them, as in the model;
    // staggered, the first ones finish earlier.
    if (contention == absl::ZeroDuration()) {
      EXPECT_GT(late, 5);
    }
    EXPECT_NE(one, two);
    opt.start_jitter_seed = 1;
    EXPECT_EQ(Latencies(Simulate(in, opt)), one);
    opt.start_jitter = absl::ZeroDuration();
    EXPECT_EQ(Latencies(Simulate(in, opt)), model);
  }
}

// A jitter larger than the delay never makes a start take less than no time.
TEST(SimulateStarts, JitterNeverMakesAStartNegative) {
  std::vector<SimJob> jobs;
  for (int k = 0; k < 20; ++k) jobs.push_back(Job("j" + std::to_string(k), kGi, absl::Minutes(1)));
  SimOptions opt;
  opt.start_latency = absl::Milliseconds(10);
  opt.start_jitter = absl::Seconds(1);
  int zero = 0;
  for (absl::Duration d : Latencies(Simulate(Input(std::move(jobs)), opt))) {
    EXPECT_GE(d, absl::ZeroDuration());
    zero += d == absl::ZeroDuration() ? 1 : 0;
  }
  EXPECT_GT(zero, 0);
}

}  // namespace
}  // namespace berth::planner
