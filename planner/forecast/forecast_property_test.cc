// The ETA promise (eta.h): with exact estimates and nothing arriving, every
// job's forecast start is the start the simulator (the same planner, played
// forward event by event) gives it, on generated workloads with pools,
// workspace caps, priorities, aging, dependencies, rejections, jobs running
// at the start and nodes; and a bounded forecast never gives a wrong
// number, only "beyond the forecast" for jobs the simulation starts later.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "planner/forecast/eta.h"
#include "planner/plan/plan.h"
#include "planner/ranking/ranking.h"
#include "planner/simulator/simulator.h"
#include "planner/simulator/simulator_test_inputs.h"

namespace berth::planner {
namespace {

using testing::kGi;
using testing::kStart;

// Everything queued at kStart with exact estimates; a few jobs running.
SimInput AllQueued(uint64_t seed, int jobs, bool nodes) {
  SimInput in = testing::RandomWorkload(seed, jobs);
  uint64_t x = seed * 7919 + 17;
  auto next = [&x]() {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x >> 33;
  };
  for (SimJob& j : in.jobs) {
    j.arrival_offset = absl::ZeroDuration();
    j.actual_duration = absl::ZeroDuration();  // exact estimates
    j.fails = false;
    // Some created_at values shared (fair turns), some distinct (aging).
    j.job.created_at = kStart - absl::Minutes(seed % 2 == 0 ? next() % 600 : 60);
    j.job.queued_at = kStart;  // as the simulator dates its arrival
    if (next() % 8 == 0) j.job.expected_duration = absl::ZeroDuration();  // the default
  }
  for (int i = 0; i < static_cast<int>(next() % 4); ++i) {
    RunningJob r;
    r.id = absl::StrCat("r", i);
    r.workspace = absl::StrCat("ws", i);
    r.resources = {1000, static_cast<int64_t>(1 + next() % 12) * kGi};
    r.started_at = kStart - absl::Minutes(static_cast<int64_t>(next() % 30));
    r.expected_duration = absl::Minutes(31 + static_cast<int64_t>(next() % 90));
    if (nodes) r.node = i % 2 == 0 ? "n1" : "n2";
    in.running.push_back(r);
  }
  if (nodes) {
    in.budgets.nodes = {Node{"n1", 24 * kGi, 8000, 0, {}}, Node{"n2", 40 * kGi, 8000, 0, {}}};
  }
  return in;
}

struct Case {
  SimInput in;
  Policy policy;
  State state;
  PlanResult plan;
  absl::flat_hash_map<std::string, SimJobResult> simulated;  // by job id
};

Case Make(uint64_t seed, int jobs) {
  Case c;
  // Seeds from 40: drf without aging, worker slots to spare: the
  // forecast's walks pass over the jobs larger than what is left, their
  // shares added in bulk.
  const bool drf_spare = seed >= 40;
  c.in = AllQueued(seed, jobs, !drf_spare && seed % 3 == 1);
  c.policy.aging_interval = seed % 4 == 0 || drf_spare ? absl::ZeroDuration()
                                                       : absl::Minutes(30 + 30 * (seed % 5));
  c.policy.backfill = seed % 7 != 6;
  if (drf_spare) {
    c.in.budgets.max_workers = 32;
    c.in.budgets.workspace_max_workers = 0;
  } else if (seed % 3 == 2) {
    // fifo with worker slots to spare: cpu and memory bind, and the
    // forecast's walks pass over the jobs larger than what is left.
    c.policy.ranking = &FifoRanking();
    c.in.budgets.max_workers = 32;
    c.in.budgets.workspace_max_workers = 0;
  }
  c.state.running = c.in.running;
  for (const SimJob& j : c.in.jobs) c.state.queued.push_back(j.job);
  c.plan = Plan(c.state, c.in.budgets, c.policy, kStart);
  SimOptions options;
  options.policy = c.policy;
  const SimResult sim = Simulate(c.in, options);
  for (size_t i = 0; i < c.in.jobs.size(); ++i) c.simulated[c.in.jobs[i].job.id] = sim.jobs[i];
  return c;
}

bool Started(const SimJobResult& r) {
  return r.outcome == SimOutcome::kSucceeded || r.outcome == SimOutcome::kFailed;
}

TEST(ForecastPropertyTest, EveryEtaIsTheSimulatedStart) {
  int compared = 0;
  for (uint64_t seed = 0; seed < 56; ++seed) {
    const Case c = Make(seed, 20 + static_cast<int>(seed % 5) * 15);
    const Forecast f = ForecastStarts(c.state, c.in.budgets, c.policy, c.plan);
    ASSERT_FALSE(f.bounded) << seed;
    ASSERT_EQ(f.starts.size(), c.plan.decisions.size());
    for (size_t k = 0; k < f.starts.size(); ++k) {
      const std::string& id = c.state.queued[c.plan.decisions[k].job].id;
      const SimJobResult& sim = c.simulated.at(id);
      const StartEstimate& e = f.starts[k];
      if (e.kind == EtaKind::kUnknown) {
        EXPECT_FALSE(Started(sim)) << "seed " << seed << " job " << id;
        continue;
      }
      ASSERT_TRUE(Started(sim)) << "seed " << seed << " job " << id << " "
                                << EtaKindName(e.kind);
      EXPECT_EQ(e.time, sim.start) << "seed " << seed << " job " << id << " "
                                   << EtaKindName(e.kind);
      EXPECT_EQ(e.kind == EtaKind::kNow, sim.start == kStart) << seed << " " << id;
      ++compared;
    }
  }
  EXPECT_GT(compared, 1000);
}

// A forecast bounded by work or by time gives each job its simulated start
// or "beyond the forecast" — then the simulation starts it after `covered`.
TEST(ForecastPropertyTest, ABoundedForecastIsNeverWrong) {
  int beyond = 0;
  for (uint64_t seed = 0; seed < 38; ++seed) {
    const Case c = Make(seed < 30 ? seed : seed + 10, 60);
    ForecastOptions options;
    if (seed % 2 == 0) {
      options.max_planned_jobs = static_cast<int64_t>(60 * (1 + seed % 5));
    } else {
      options.horizon = absl::Minutes(static_cast<int64_t>(30 + 20 * (seed % 6)));
    }
    const Forecast f = ForecastStarts(c.state, c.in.budgets, c.policy, c.plan, options);
    EXPECT_LE(f.planned_jobs, options.max_planned_jobs);
    for (size_t k = 0; k < f.starts.size(); ++k) {
      const std::string& id = c.state.queued[c.plan.decisions[k].job].id;
      const SimJobResult& sim = c.simulated.at(id);
      const StartEstimate& e = f.starts[k];
      if (e.kind == EtaKind::kBeyondForecast) {
        ASSERT_TRUE(f.bounded);
        EXPECT_EQ(e.time, f.covered);
        if (Started(sim)) {
          EXPECT_GT(sim.start, f.covered) << seed << " " << id;
        }
        if (seed % 2 == 1) {
          EXPECT_LE(f.covered, kStart + options.horizon);
        }
        ++beyond;
      } else if (e.kind != EtaKind::kUnknown) {
        ASSERT_TRUE(Started(sim)) << seed << " " << id;
        EXPECT_EQ(e.time, sim.start) << seed << " " << id;
      }
    }
  }
  EXPECT_GT(beyond, 100);
}

TEST(ForecastPropertyTest, NoWorkAllowedLeavesOnlyThePlanItself) {
  const Case c = Make(3, 40);
  ForecastOptions options;
  options.max_planned_jobs = 0;
  const Forecast f = ForecastStarts(c.state, c.in.budgets, c.policy, c.plan, options);
  EXPECT_EQ(f.plans, 0);
  for (size_t k = 0; k < f.starts.size(); ++k) {
    const Decision& d = c.plan.decisions[k];
    if (d.verdict == Verdict::kAdmit) {
      EXPECT_EQ(f.starts[k].kind, EtaKind::kNow);
    }
    if (d.reserved) {
      EXPECT_EQ(f.starts[k].kind, EtaKind::kReserved);
      EXPECT_EQ(f.starts[k].time, c.plan.reservation_start);
    }
    if (d.verdict == Verdict::kWait && !d.reserved) {
      EXPECT_EQ(f.starts[k].kind, EtaKind::kBeyondForecast);
      EXPECT_EQ(f.starts[k].time, kStart);
    }
  }
}

}  // namespace
}  // namespace berth::planner
