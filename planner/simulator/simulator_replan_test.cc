// The simulator's plans at container starts (SimOptions::
// plan_at_starts): berthd plans at every store change, and recording a job
// RUNNING is one. The capacity is unchanged then, but time has moved: a
// running job past its estimate is re-dated, which can move the
// reservation and let a job backfill that the plans at arrivals and ends
// alone would not admit.
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "planner/simulator/simulator.h"

namespace berth::planner {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1'800'000'000);

SimJob Job(std::string id, int32_t priority, int64_t memory, absl::Duration expected,
           absl::Duration actual, absl::Duration arrival) {
  SimJob j;
  j.job.id = std::move(id);
  j.job.workspace = "ws";
  j.job.priority = priority;
  j.job.resources = {100, memory};
  j.job.expected_duration = expected;
  j.job.created_at = kStart + arrival;
  j.arrival_offset = arrival;
  j.actual_duration = actual;
  return j;
}

// Start latency 0.5 s, one start slot. r1 (3 of 10 units, admitted at 0)
// runs 30 s against an estimate of 12 s; r2 (3 units) is expected to end at
// 15 s. h (8 units, highest priority, from 1 s) needs both ended: its
// reservation, and the start first promised to it, is 15 s. s (3 units,
// 11 s, from 5 s) fits beside them but would not end by 15 s. t (1 unit,
// from 11.5 s) is admitted at once; its container starts at 12 s. At 12 s
// the planner re-dates r1 to 24 s, the reservation moves there, the promise
// has not passed and s ends by it (12 + 11 <= 24): a plan at t's start
// admits s. Without it the next plan is at r2's end (15.5 s), when the
// promise has passed and nothing backfills on its estimate: s waits for h.
SimInput OverrunCase() {
  SimInput in;
  in.start = kStart;
  in.budgets.memory_bytes = 10;
  in.budgets.cpu_millis = 10'000;
  in.budgets.max_workers = 10;
  in.jobs = {Job("r1", 0, 3, absl::Seconds(12), absl::Seconds(30), absl::ZeroDuration()),
             Job("r2", 0, 3, absl::Seconds(15), absl::Seconds(15), absl::ZeroDuration()),
             Job("h", 2, 8, absl::Seconds(10), absl::Seconds(10), absl::Seconds(1)),
             Job("s", 1, 3, absl::Seconds(11), absl::Seconds(11), absl::Seconds(5)),
             Job("t", 3, 1, absl::Seconds(1), absl::Seconds(1), absl::Seconds(11.5))};
  return in;
}

SimOptions WithLatency(bool plan_at_starts) {
  SimOptions opt;
  opt.start_latency = absl::Seconds(0.5);
  opt.start_parallelism = 1;
  opt.plan_at_starts = plan_at_starts;
  return opt;
}

TEST(SimulateReplan, ArrivalsAndEndsAloneMissTheBackfillAfterAnOverrun) {
  SimResult r = Simulate(OverrunCase(), WithLatency(false));
  EXPECT_EQ(r.jobs[4].start, kStart + absl::Seconds(11.5));
  EXPECT_GT(r.jobs[3].start, r.jobs[2].start);  // s after h
}

TEST(SimulateReplan, PlanningAtAStartAdmitsIt) {
  SimResult r = Simulate(OverrunCase(), WithLatency(true));
  EXPECT_EQ(r.jobs[4].run_start, kStart + absl::Seconds(12));
  EXPECT_EQ(r.jobs[3].start, kStart + absl::Seconds(12));
  // h still starts when r1's capacity comes back: the backfill did not
  // delay it.
  EXPECT_EQ(r.jobs[2].start, r.jobs[0].end);
}

TEST(SimulateReplan, WithoutStartLatencyThereIsNothingMoreToPlanAt) {
  SimOptions opt;
  opt.plan_at_starts = true;
  SimResult a = Simulate(OverrunCase(), opt);
  SimResult b = Simulate(OverrunCase(), SimOptions());
  EXPECT_EQ(a.plan_calls, b.plan_calls);
  for (size_t i = 0; i < a.jobs.size(); ++i) EXPECT_EQ(a.jobs[i].start, b.jobs[i].start) << i;
}

}  // namespace
}  // namespace berth::planner
