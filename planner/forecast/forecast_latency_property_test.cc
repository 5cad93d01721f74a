// ETAs against the executor's start latency: a forecast made with the
// executor's start model (ForecastOptions::executor) gives each waiting job
// a start within max(60 s, 5% of its time from now) of the start the
// simulator gives it under that model (berth-plan's default executor: 250
// ms starts, 70 ms of them shared, 4 at once, 50 ms to see an end,
// planning at container starts), on generated workloads with pools,
// workspace caps, dependency chains and DAGs, FIFO and DRF, aging on and
// off, with and without backfill. The same workloads forecast without the
// model are the measured "before".
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
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

// berth-plan's default executor model (tools/plan/common.h).
ExecutorModel DefaultExecutor() {
  ExecutorModel m;
  m.start_latency = absl::Milliseconds(250);
  m.start_contention = absl::Milliseconds(70);
  m.start_parallelism = 4;
  m.finish_latency = absl::Milliseconds(50);
  m.plan_at_starts = true;
  return m;
}

SimOptions SimOf(const Policy& policy, const ExecutorModel& m) {
  SimOptions o;
  o.policy = policy;
  o.start_latency = m.start_latency;
  o.start_contention = m.start_contention;
  o.start_parallelism = m.start_parallelism;
  o.finish_latency = m.finish_latency;
  o.plan_at_starts = m.plan_at_starts;
  return o;
}

struct Case {
  SimInput in;
  Policy policy;
  State state;
};

// Everything queued at kStart with exact estimates (the forecast's premise),
// durations in whole minutes so that many jobs end at the same instant
// (where a shift of a few hundred ms reorders a greedy backfill).
Case Make(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Case c;
  const int jobs = static_cast<int>(pick(100, 500));
  c.in.start = kStart;
  c.in.budgets = testing::MakeBudgets(pick(32, 256) * kGi, pick(8, 64) * 1000,
                                      static_cast<int32_t>(pick(4, 32)));
  c.in.budgets.pool_max_workers["database"] = static_cast<int32_t>(pick(1, 3));
  c.in.budgets.pool_max_workers["gpu"] = static_cast<int32_t>(pick(1, 4));
  c.in.budgets.workspace_max_workers = static_cast<int32_t>(pick(0, 1) ? pick(2, 8) : 0);
  const int workspaces = static_cast<int>(pick(2, 20));
  const bool dags = pick(0, 1) == 1;
  for (int i = 0; i < jobs; ++i) {
    SimJob j = testing::Job(absl::StrCat("j", i),
                            pick(1, c.in.budgets.memory_bytes / kGi / 2) * kGi,
                            absl::Minutes(pick(1, 180)), absl::ZeroDuration(),
                            absl::StrCat("ws", pick(0, workspaces - 1)));
    j.job.resources.cpu_millis = 250 * pick(1, c.in.budgets.cpu_millis / 500);
    j.job.priority = static_cast<int32_t>(pick(0, 2));
    j.job.created_at = kStart - absl::Seconds(pick(0, 1) ? pick(0, 7200) : 0);
    j.job.queued_at = kStart;  // as the simulator dates its arrival (aging counts from it)
    const int64_t p = pick(0, 9);
    if (p == 0) j.job.pool = "database";
    if (p == 1) j.job.pool = "gpu";
    if (i > 0 && pick(0, dags ? 2 : 8) == 0) {
      j.job.depends_on.push_back(absl::StrCat("j", pick(std::max(0, i - 20), i - 1)));
      if (dags && i > 1 && pick(0, 2) == 0) {
        const std::string other = absl::StrCat("j", pick(0, i - 1));
        if (other != j.job.depends_on[0]) j.job.depends_on.push_back(other);
      }
    }
    c.in.jobs.push_back(std::move(j));
  }
  c.policy.ranking = pick(0, 3) == 0 ? &FifoRanking() : &DrfRanking();
  c.policy.aging_interval = pick(0, 2) == 0 ? absl::ZeroDuration() : absl::Minutes(pick(20, 240));
  c.policy.backfill = pick(0, 5) != 0;
  for (const SimJob& j : c.in.jobs) c.state.queued.push_back(j.job);
  return c;
}

bool Started(const SimJobResult& r) {
  return r.outcome == SimOutcome::kSucceeded || r.outcome == SimOutcome::kFailed;
}

struct Held {
  int waiting = 0;  // waiting jobs with a forecast start
  int held = 0;     // within max(60 s, 5%)
};

Held Compare(const Case& c, const PlanResult& plan, const Forecast& f, const SimResult& sim) {
  absl::flat_hash_map<std::string, const SimJobResult*> by_id;
  for (size_t i = 0; i < c.in.jobs.size(); ++i) by_id[c.in.jobs[i].job.id] = &sim.jobs[i];
  Held h;
  for (size_t k = 0; k < f.starts.size(); ++k) {
    const StartEstimate& e = f.starts[k];
    if (plan.decisions[k].verdict != Verdict::kWait || e.kind == EtaKind::kUnknown ||
        e.kind == EtaKind::kBeyondForecast) {
      continue;
    }
    const SimJobResult& s = *by_id.at(c.state.queued[plan.decisions[k].job].id);
    ++h.waiting;
    if (!Started(s)) continue;
    const double error = std::abs(absl::ToDoubleSeconds(e.time - s.start));
    if (error <= std::max(60.0, 0.05 * absl::ToDoubleSeconds(s.start - kStart))) ++h.held;
  }
  return h;
}

TEST(ForecastLatencyPropertyTest, EtasHoldAgainstTheExecutorsStartModel) {
  const ExecutorModel model = DefaultExecutor();
  Held with_model, without;
  double worst = 1;
  // BERTH_TEST_SEED=N explores other workloads; the default repeats.
  const char* env = std::getenv("BERTH_TEST_SEED");
  const uint64_t first = env != nullptr ? std::strtoull(env, nullptr, 10) : 0;
  uint64_t worst_seed = first;
  for (uint64_t seed = first; seed < first + 24; ++seed) {
    const Case c = Make(seed);
    const PlanResult plan = Plan(c.state, c.in.budgets, c.policy, kStart);
    const SimResult sim = Simulate(c.in, SimOf(c.policy, model));
    ForecastOptions options;
    options.executor = model;
    const Held h = Compare(c, plan, ForecastStarts(c.state, c.in.budgets, c.policy, plan, options),
                           sim);
    const Held b = Compare(c, plan, ForecastStarts(c.state, c.in.budgets, c.policy, plan), sim);
    with_model.waiting += h.waiting;
    with_model.held += h.held;
    without.waiting += b.waiting;
    without.held += b.held;
    const double share = h.waiting > 0 ? 1.0 * h.held / h.waiting : 1;
    if (share < worst) {
      worst = share;
      worst_seed = seed;
    }
    EXPECT_GE(share, 0.9) << "seed " << seed << ": " << h.held << " of " << h.waiting
                          << " ETAs held";
  }
  ASSERT_GT(with_model.waiting, 2000) << "seeds from " << first;
  std::cout << "seeds " << first << "..+24: with the executor model " << with_model.held << "/"
            << with_model.waiting << " ETAs held (worst workload " << worst << ", seed "
            << worst_seed << "); without it " << without.held << "/" << without.waiting << "\n";
}

}  // namespace
}  // namespace berth::planner
