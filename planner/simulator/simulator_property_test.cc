// Property tests of Simulate() on seeded random workloads: every budget and
// dependency holds at every start, with and without backfill, and runs repeat.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "planner/simulator/simulator.h"
#include "planner/simulator/simulator_test_inputs.h"

namespace berth::planner {
namespace {

using testing::RandomWorkload;

// Rebuilds usage from the per-job results alone (not the simulator's own
// bookkeeping) and checks every budget at every start instant.
void CheckInvariants(const SimInput& in, const SimResult& r) {
  ASSERT_EQ(r.jobs.size(), in.jobs.size());
  std::vector<absl::Time> instants;
  for (size_t i = 0; i < in.jobs.size(); ++i) {
    const SimJobResult& j = r.jobs[i];
    // Every job either completes or is reported (never fits / dependency).
    EXPECT_NE(j.outcome, SimOutcome::kNotRun) << in.jobs[i].job.id;
    if (j.outcome == SimOutcome::kRejected) {
      EXPECT_TRUE(std::count(r.never_fits.begin(), r.never_fits.end(), i) == 1)
          << in.jobs[i].job.id;
    }
    EXPECT_GE(j.start, j.ready) << in.jobs[i].job.id;
    EXPECT_GE(j.ready, j.arrival) << in.jobs[i].job.id;
    EXPECT_GE(j.end, j.start) << in.jobs[i].job.id;
    EXPECT_LE(j.end, r.end);
    if (j.outcome == SimOutcome::kSucceeded || j.outcome == SimOutcome::kFailed) {
      instants.push_back(j.start);
      // Dependencies finished successfully before it started.
      for (const std::string& dep : in.jobs[i].job.depends_on) {
        for (size_t k = 0; k < in.jobs.size(); ++k) {
          if (in.jobs[k].job.id != dep) continue;
          EXPECT_EQ(r.jobs[k].outcome, SimOutcome::kSucceeded) << in.jobs[i].job.id;
          EXPECT_LE(r.jobs[k].end, j.start) << in.jobs[i].job.id;
        }
      }
    }
  }
  for (absl::Time t : instants) {
    int64_t mem = 0, cpu = 0, workers = 0;
    absl::flat_hash_map<std::string, int64_t> pool, ws;
    for (size_t i = 0; i < in.jobs.size(); ++i) {
      const SimJobResult& j = r.jobs[i];
      if (j.outcome != SimOutcome::kSucceeded && j.outcome != SimOutcome::kFailed) continue;
      if (!(j.start <= t && t < j.end)) continue;
      mem += in.jobs[i].job.resources.memory_bytes;
      cpu += in.jobs[i].job.resources.cpu_millis;
      ++workers;
      ++pool[in.jobs[i].job.pool];
      ++ws[in.jobs[i].job.workspace];
    }
    EXPECT_LE(mem, in.budgets.memory_bytes) << "at " << t;
    EXPECT_LE(cpu, in.budgets.cpu_millis) << "at " << t;
    EXPECT_LE(workers, in.budgets.max_workers) << "at " << t;
    EXPECT_LE(pool["database"], 2) << "at " << t;
    for (const auto& [name, count] : ws) EXPECT_LE(count, 4) << name << " at " << t;
  }
  for (const SimUsagePoint& p : r.timeline) {
    EXPECT_LE(p.memory_bytes, in.budgets.memory_bytes);
    EXPECT_LE(p.cpu_millis, in.budgets.cpu_millis);
    EXPECT_LE(p.workers, in.budgets.max_workers);
  }
  EXPECT_EQ(r.peak_memory_over_budget, 0);
}

TEST(Simulate, InvariantsHoldOnRandomWorkloads) {
  for (uint64_t seed : {1, 2, 3, 4, 5}) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    SimInput in = RandomWorkload(seed, 300);
    SimResult r = Simulate(in, SimOptions());
    CheckInvariants(in, r);
    EXPECT_FALSE(r.never_fits.empty());
  }
}

TEST(Simulate, InvariantsHoldWithoutBackfillAndWithFifoRanking) {
  SimInput in = RandomWorkload(9, 200);
  SimOptions strict;
  strict.policy.backfill = false;
  CheckInvariants(in, Simulate(in, strict));
  SimOptions fifo;
  fifo.policy.ranking = &FifoRanking();
  CheckInvariants(in, Simulate(in, fifo));
}

TEST(Simulate, IsDeterministic) {
  SimInput in = RandomWorkload(11, 200);
  SimResult a = Simulate(in, SimOptions());
  SimResult b = Simulate(in, SimOptions());
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].start, b.jobs[i].start);
    EXPECT_EQ(a.jobs[i].end, b.jobs[i].end);
    EXPECT_EQ(a.jobs[i].outcome, b.jobs[i].outcome);
  }
  EXPECT_EQ(a.timeline.size(), b.timeline.size());
  EXPECT_EQ(a.plan_calls, b.plan_calls);
}

}  // namespace
}  // namespace berth::planner
