// The ETA range promise (eta_range.h): when real run times are the
// estimates times lognormal(0, 0.5) and the ratios are learned from 20 runs
// per workspace (the history berthd keeps), at least 80% of the waiting
// jobs' simulated starts fall inside their forecast [earliest, latest], on
// generated workloads (priorities, pools, workspace caps, aging, backfill
// on and off, dependencies, nodes). Each seed's coverage is printed on
// failure.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "planner/forecast/eta.h"
#include "planner/forecast/eta_range.h"
#include "planner/plan/plan.h"
#include "planner/simulator/simulator.h"
#include "planner/simulator/simulator_test_inputs.h"

namespace berth::planner {
namespace {

using testing::kGi;
using testing::kStart;

struct Coverage {
  int waiting = 0;         // ranged jobs not started now
  int waiting_inside = 0;  // ... whose simulated start is inside the range
  int now = 0;             // ranged jobs admitted now (inside by construction)
  int no_range = 0;        // started jobs without a range
  int plain_held = 0;      // waiting jobs whose plain ETA held (max(60 s, 5%))
};

// One generated case: everything queued at kStart, real durations off the
// estimates by lognormal(0, sigma), ratios learned per workspace from
// `history` draws of the same distribution.
Coverage RunCase(uint64_t seed, int jobs, double sigma, int history) {
  SimInput in = testing::RandomWorkload(seed, jobs);
  std::mt19937_64 rng(seed * 1000003 + 7);
  std::lognormal_distribution<double> error(0.0, sigma);
  Policy policy;
  policy.aging_interval = seed % 4 == 0 ? absl::ZeroDuration() : absl::Minutes(60);
  policy.backfill = seed % 5 != 4;
  if (seed % 3 == 1) {
    in.budgets.nodes = {Node{"n1", 24 * kGi, 8000, 0, {}}, Node{"n2", 48 * kGi, 8000, 0, {}}};
  }
  for (SimJob& j : in.jobs) {
    j.arrival_offset = absl::ZeroDuration();
    j.job.created_at = kStart - absl::Minutes(static_cast<int64_t>(rng() % 600));
    j.job.queued_at = kStart;
    j.fails = false;
    const absl::Duration estimate = j.job.expected_duration > absl::ZeroDuration()
                                        ? j.job.expected_duration
                                        : policy.default_duration;
    j.actual_duration = std::max(absl::Seconds(1), estimate * error(rng));
  }
  // The learned ratios: per workspace, from its own past runs.
  absl::flat_hash_map<std::string, std::optional<DurationRatios>> learned;
  State state;
  for (const SimJob& j : in.jobs) state.queued.push_back(j.job);
  RatioAssignment ratios;
  for (const QueuedJob& q : state.queued) {
    auto [it, added] = learned.try_emplace(q.workspace);
    if (added) {
      std::vector<double> runs;
      for (int i = 0; i < history; ++i) runs.push_back(error(rng));
      it->second = LearnRatios(runs);
    }
    ratios.queued.push_back(it->second);
  }
  const PlanResult plan = Plan(state, in.budgets, policy, kStart);
  const EtaRangeTable table(state, in.budgets, policy, plan, ratios);
  const StartEstimateTable plain(state, in.budgets, policy, plan);
  SimOptions options;
  options.policy = policy;
  const SimResult sim = Simulate(in, options);

  Coverage c;
  for (size_t k = 0; k < plan.decisions.size(); ++k) {
    const uint32_t i = plan.decisions[k].job;
    const SimJobResult& r = sim.jobs[i];
    const bool started = r.outcome == SimOutcome::kSucceeded || r.outcome == SimOutcome::kFailed;
    if (!started) continue;
    const EtaRange range = table[k];
    if (!range.known) {
      ++c.no_range;
      continue;
    }
    EXPECT_LE(range.earliest, range.likely) << "seed " << seed;
    EXPECT_LE(range.likely, range.latest) << "seed " << seed;
    if (plan.decisions[k].verdict == Verdict::kAdmit) {
      ++c.now;
      EXPECT_EQ(range.earliest, kStart) << "seed " << seed;
      EXPECT_EQ(range.latest, kStart) << "seed " << seed;
      continue;
    }
    ++c.waiting;
    if (r.start >= range.earliest && r.start <= range.latest) ++c.waiting_inside;
    const StartEstimate e = plain[k];
    if (e.time != absl::InfiniteFuture()) {
      const absl::Duration slack = std::max(absl::Seconds(60), (e.time - kStart) / 20);
      if (absl::AbsDuration(r.start - e.time) <= slack) ++c.plain_held;
    }
  }
  return c;
}

TEST(EtaRangePropertyTest, EightyPercentOfStartsInsideTheRange) {
  Coverage all;
  int seeds_below = 0;
  double worst = 1;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    const Coverage c = RunCase(seed, 30 + static_cast<int>(seed % 6) * 20, 0.5, 20);
    all.waiting += c.waiting;
    all.waiting_inside += c.waiting_inside;
    all.now += c.now;
    all.no_range += c.no_range;
    all.plain_held += c.plain_held;
    const double share = c.waiting == 0 ? 1.0 : static_cast<double>(c.waiting_inside) / c.waiting;
    worst = std::min(worst, share);
    if (share < 0.6) {
      ++seeds_below;
      ADD_FAILURE() << "seed " << seed << ": " << c.waiting_inside << " of " << c.waiting
                    << " waiting starts inside their range";
    }
  }
  const double share = static_cast<double>(all.waiting_inside) / all.waiting;
  std::printf("waiting starts inside P10-P90: %d of %d (%.1f%%; worst seed %.1f%%); "
              "admitted now: %d; without a range: %d; plain ETA within max(60 s, 5%%): "
              "%d of %d (%.1f%%)\n",
              all.waiting_inside, all.waiting, 100 * share, 100 * worst, all.now, all.no_range,
              all.plain_held, all.waiting, 100.0 * all.plain_held / all.waiting);
  EXPECT_GT(all.waiting, 1000);
  EXPECT_GE(share, 0.80);
  EXPECT_EQ(all.no_range, 0);
  EXPECT_EQ(seeds_below, 0);
}

// Estimates that hold (every ratio 1) make a zero-width range at the ETA.
TEST(EtaRangePropertyTest, ExactHistoryGivesTheEtaItself) {
  for (uint64_t seed = 0; seed < 10; ++seed) {
    SimInput in = testing::RandomWorkload(seed, 40);
    State state;
    for (const SimJob& j : in.jobs) state.queued.push_back(j.job);
    for (QueuedJob& q : state.queued) q.queued_at = kStart;
    RatioAssignment ratios;
    ratios.queued.assign(state.queued.size(), LearnRatios(std::vector<double>(20, 1.0)));
    const PlanResult plan = Plan(state, in.budgets, Policy(), kStart);
    const EtaRangeTable table(state, in.budgets, Policy(), plan, ratios);
    const StartEstimateTable etas(state, in.budgets, Policy(), plan);
    for (size_t k = 0; k < plan.decisions.size(); ++k) {
      const StartEstimate e = etas[k];
      const EtaRange r = table[k];
      const bool timed = e.kind == EtaKind::kNow || e.kind == EtaKind::kReserved ||
                         e.kind == EtaKind::kIfEstimatesHold;
      ASSERT_EQ(r.known, timed) << "seed " << seed << " k " << k;
      if (!timed) continue;
      EXPECT_EQ(r.earliest, e.time) << "seed " << seed << " k " << k;
      EXPECT_EQ(r.latest, e.time) << "seed " << seed << " k " << k;
    }
  }
}

// No history: no range, for any job.
TEST(EtaRangePropertyTest, NoHistoryNoRange) {
  SimInput in = testing::RandomWorkload(5, 40);
  State state;
  for (const SimJob& j : in.jobs) state.queued.push_back(j.job);
  RatioAssignment ratios;
  ratios.queued.assign(state.queued.size(), LearnRatios({1.0, 2.0, 0.5}));  // too few
  const PlanResult plan = Plan(state, in.budgets, Policy(), kStart);
  const EtaRangeTable table(state, in.budgets, Policy(), plan, ratios);
  for (size_t k = 0; k < table.size(); ++k) EXPECT_FALSE(table[k].known) << k;
}

TEST(EtaRangeTest, LearnRatiosNearestRank) {
  std::vector<double> r;
  for (int i = 1; i <= 20; ++i) r.push_back(i / 10.0);
  r.push_back(-1);
  r.push_back(std::nan(""));
  const std::optional<DurationRatios> q = LearnRatios(r);
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->samples, 20);
  EXPECT_DOUBLE_EQ(q->p10, 0.2);
  EXPECT_DOUBLE_EQ(q->p50, 1.0);
  EXPECT_DOUBLE_EQ(q->p90, 1.8);
  EXPECT_FALSE(LearnRatios({1, 1, 1, 1}).has_value());
  EXPECT_TRUE(LearnRatios({1, 1, 1, 1}, 4).has_value());
}

// Only the jobs marked ranged get a range; the others still scale.
TEST(EtaRangeTest, RangedMarksWhichJobsGetOne) {
  SimInput in = testing::RandomWorkload(9, 20);
  State state;
  for (const SimJob& j : in.jobs) state.queued.push_back(j.job);
  RatioAssignment ratios;
  ratios.queued.assign(state.queued.size(), DurationRatios{0.5, 1, 2, 20});
  ratios.ranged.assign(state.queued.size(), false);
  ratios.ranged[3] = true;
  const PlanResult plan = Plan(state, in.budgets, Policy(), kStart);
  const EtaRangeTable table(state, in.budgets, Policy(), plan, ratios);
  const State scaled = ScaledState(state, Policy(), ratios, 2);
  EXPECT_EQ(scaled.queued[0].expected_duration, state.queued[0].expected_duration * 2);
  for (size_t k = 0; k < table.size(); ++k) {
    if (plan.decisions[k].job != 3) {
      EXPECT_FALSE(table[k].known) << k;
    }
  }
}

}  // namespace
}  // namespace berth::planner
