// The state of a run at a moment, written as a workload and planned again,
// continues the run: a seeded generator of workloads (printed on failure)
// checks that the written state reads back as the same state, and measures
// how far a re-plan of it agrees with the run it was taken from — the
// simulation of the state (later arrivals included) against the run's own
// starts, and the ETA forecast of the state against them. The planner's
// memory (reservation holder, fair turns, aging's top priority) is not in
// the state, so ties can go the other way: the agreement is measured and
// printed, and must stay above a floor. Under FIFO ranking without aging or
// dependencies, where that memory changes no order, it must be exact.
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "planner/base/proto_json.h"
#include "planner/forecast/eta.h"
#include "planner/plan/plan.h"
#include "planner/ranking/ranking.h"
#include "planner/simulator/simulator.h"
#include "tools/plan/input.h"
#include "tools/plan/state_at.h"

namespace berth::plan {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;
const absl::Time kStart = absl::FromUnixSeconds(1795000000);

planner::SimInput Generate(uint64_t seed, bool nodes, bool dependencies,
                           absl::Duration arrivals_within) {
  std::mt19937_64 rng(seed);
  auto uni = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  planner::SimInput in;
  in.start = kStart;
  in.budgets.memory_bytes = 64 * kGi;
  in.budgets.cpu_millis = 16000;
  in.budgets.max_workers = 8;
  in.budgets.pool_max_workers["db"] = 2;
  if (nodes) {
    for (int i = 0; i < 2; ++i) {
      planner::Node n;
      n.id = absl::StrCat("node-", i + 1);
      n.memory_bytes = 32 * kGi;
      n.cpu_millis = 8000;
      in.budgets.nodes.push_back(n);
    }
  }
  const int n = static_cast<int>(uni(40, 90));
  for (int i = 0; i < n; ++i) {
    planner::SimJob j;
    j.job.id = absl::StrCat("j", i);
    j.job.workspace = absl::StrCat("ws", uni(0, 3));
    if (uni(0, 9) == 0) j.job.pool = "db";
    j.job.priority = static_cast<int32_t>(uni(0, 2));
    j.job.resources.memory_bytes = uni(1, 24) * kGi;
    j.job.resources.cpu_millis = uni(1, 8) * 500;
    j.job.expected_duration = absl::Minutes(uni(5, 120));
    j.arrival_offset = absl::Seconds(uni(0, absl::ToInt64Seconds(arrivals_within)));
    if (dependencies && i > 0 && uni(0, 7) == 0) j.job.depends_on.push_back(absl::StrCat("j", uni(0, i - 1)));
    in.jobs.push_back(std::move(j));
  }
  return in;
}

// Starts of a run by job id (jobs that ran).
absl::flat_hash_map<std::string, absl::Time> Starts(const planner::SimInput& in,
                                                    const planner::SimResult& r) {
  absl::flat_hash_map<std::string, absl::Time> out;
  for (size_t i = 0; i < in.jobs.size(); ++i) {
    if (r.jobs[i].outcome == planner::SimOutcome::kSucceeded ||
        r.jobs[i].outcome == planner::SimOutcome::kFailed) {
      out[in.jobs[i].job.id] = r.jobs[i].start;
    }
  }
  return out;
}

struct Agreement {
  int64_t jobs = 0, same = 0;
  double fraction() const { return jobs == 0 ? 1 : static_cast<double>(same) / jobs; }
};

struct Measured {
  Agreement continued, forecast;
};

// The first seed: $STATE_AT_SEED to replay a failure, else a fresh one.
uint64_t FirstSeed() {
  const char* fixed = std::getenv("STATE_AT_SEED");
  return fixed != nullptr ? std::strtoull(fixed, nullptr, 10) : std::random_device()();
}

Measured Measure(const planner::Policy& policy, bool dependencies, const char* name) {
  const uint64_t seed0 = FirstSeed();
  Agreement continued, forecast;
  int64_t states = 0, running_at = 0;
  for (uint64_t seed = seed0; seed < seed0 + 60; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    const bool nodes = seed % 2 == 0;
    // Half with arrivals after the moment (the state carries them), half
    // with every job arrived by it (the forecast has nothing to miss).
    const bool later_arrivals = seed % 4 < 2;
    const absl::Duration at = absl::Hours(1);
    planner::SimInput in = Generate(seed, nodes, dependencies, later_arrivals ? absl::Hours(3) : at);
    planner::SimOptions opt;
    opt.policy = policy;
    Placements placements;
    const planner::SimResult run = SimulateRecordingPlacements(in, opt, &placements);
    std::vector<PlanInput::Actual> actuals;
    const planner::SimInput state = ContinuationAt(in, run, placements, kStart + at,
                                                   opt.policy.default_duration, {}, &actuals);
    ++states;
    running_at += static_cast<int64_t>(state.running.size());
    for (const planner::RunningJob& r : state.running) {
      EXPECT_LT(r.started_at, kStart + at) << r.id;
      if (nodes) {
        EXPECT_FALSE(r.node.empty()) << r.id;
      }
    }

    // Written and read back: the same jobs, running on the same nodes.
    auto json = ToJson(WorkloadOf(state, actuals, in.budgets, "state"));
    EXPECT_TRUE(json.ok()) << json.status();
    if (!json.ok()) break;
    const std::string path = absl::StrCat(std::getenv("TEST_TMPDIR"), "/state_", seed, ".json");
    EXPECT_TRUE(WriteFileAtomically(path, *json).ok());
    auto back = LoadPlanInput(path);
    EXPECT_TRUE(back.ok()) << back.status();
    if (!back.ok()) break;
    EXPECT_EQ(back->sim.start, state.start);
    EXPECT_EQ(back->sim.running.size(), state.running.size());
    for (size_t i = 0; i < state.running.size() && i < back->sim.running.size(); ++i) {
      EXPECT_EQ(back->sim.running[i].id, state.running[i].id);
      EXPECT_EQ(back->sim.running[i].node, state.running[i].node);
      EXPECT_EQ(back->sim.running[i].started_at, state.running[i].started_at);
    }
    EXPECT_EQ(back->sim.jobs.size(), state.jobs.size());
    for (size_t i = 0; i < state.jobs.size() && i < back->sim.jobs.size(); ++i) {
      EXPECT_EQ(back->sim.jobs[i].job.id, state.jobs[i].job.id);
      EXPECT_EQ(back->sim.jobs[i].job.created_at, state.jobs[i].job.created_at);
      EXPECT_EQ(back->sim.jobs[i].job.depends_on, state.jobs[i].job.depends_on);
      EXPECT_EQ(back->sim.jobs[i].arrival_offset, state.jobs[i].arrival_offset);
    }
    EXPECT_TRUE(back->has_file_budgets);
    EXPECT_EQ(back->file_budgets.nodes.size(), in.budgets.nodes.size());

    // The state simulated from the moment on, against the run's own starts.
    const auto original = Starts(in, run);
    planner::SimInput again = back->sim;
    again.budgets = back->file_budgets;
    const planner::SimResult cont = planner::Simulate(again, opt);
    const auto resumed = Starts(again, cont);
    for (const planner::SimJob& j : again.jobs) {
      auto o = original.find(j.job.id);
      auto c = resumed.find(j.job.id);
      if (o == original.end() && c == resumed.end()) continue;
      ++continued.jobs;
      const bool same = o != original.end() && c != resumed.end() && o->second == c->second;
      continued.same += same;
      if (!same && std::getenv("STATE_AT_DEBUG")) {
        std::printf("seed %llu: %s started %s, again %s\n", static_cast<unsigned long long>(seed),
                    j.job.id.c_str(),
                    o == original.end() ? "never" : absl::FormatTime(o->second).c_str(),
                    c == resumed.end() ? "never" : absl::FormatTime(c->second).c_str());
      }
    }

    // Every job arrived by the moment: the forecast of the state's plan.
    if (later_arrivals) continue;
    planner::State plan_state;
    plan_state.running = again.running;
    for (const planner::SimJob& j : again.jobs) plan_state.queued.push_back(j.job);
    const planner::PlanResult plan =
        planner::Plan(plan_state, again.budgets, opt.policy, again.start);
    const planner::Forecast f =
        planner::ForecastStarts(plan_state, again.budgets, opt.policy, plan);
    for (size_t k = 0; k < plan.decisions.size(); ++k) {
      const std::string& id = plan_state.queued[plan.decisions[k].job].id;
      auto o = original.find(id);
      const planner::StartEstimate& e = f.starts[k];
      if (o == original.end() && e.kind == planner::EtaKind::kUnknown) continue;
      ++forecast.jobs;
      const absl::Time eta = e.kind == planner::EtaKind::kNow ? plan.now : e.time;
      forecast.same += o != original.end() && e.kind != planner::EtaKind::kUnknown &&
                       e.kind != planner::EtaKind::kBeyondForecast && eta == o->second;
    }
  }
  std::printf(
      "%s: state at +1h of %lld runs (%lld jobs running at it): the state simulated again "
      "starts %lld of %lld later jobs when the run did (%.1f%%); the forecast of its plan gives "
      "%lld of %lld queued jobs the run's start (%.1f%%). Seeds from %llu.\n",
      name, static_cast<long long>(states), static_cast<long long>(running_at),
      static_cast<long long>(continued.same), static_cast<long long>(continued.jobs),
      100 * continued.fraction(), static_cast<long long>(forecast.same),
      static_cast<long long>(forecast.jobs), 100 * forecast.fraction(),
      static_cast<unsigned long long>(seed0));
  EXPECT_GT(continued.jobs, 500) << name << ", seeds from " << seed0;
  EXPECT_GT(forecast.jobs, 200) << name << ", seeds from " << seed0;
  return {continued, forecast};
}

// FIFO without aging or dependencies: the planner's memory changes no order
// (the reservation holder is the head of the FIFO order anyway; with
// dependencies an older job whose dependency is met would rank ahead of a
// holder the run kept; aging's remembered top priority is read by aging
// alone), so the state continues the run exactly: every later start, every
// ETA.
TEST(StateAt, UnderFifoTheStateContinuesTheRunExactly) {
  planner::Policy fifo;
  fifo.ranking = &planner::FifoRanking();
  fifo.aging_interval = absl::ZeroDuration();
  const Measured m = Measure(fifo, /*dependencies=*/false, "fifo");
  EXPECT_EQ(m.continued.same, m.continued.jobs);
  EXPECT_EQ(m.forecast.same, m.forecast.jobs);
}

// DRF: the reservation holder the run kept, fair turns, and when each queued
// job was queued (the workload format has no queued_at: every queued job is
// queued at the state's instant, and equal workspaces go by queued_at) are
// not in the state; a re-plan may pick another head. Measured over 7 runs of
// fresh seeds: 46-59% of later starts and 63-91% of ETAs agree on these
// workloads; the floors catch a state that lost more.
TEST(StateAt, UnderDrfMostOfTheContinuationAgrees) {
  const Measured m = Measure(planner::Policy(), /*dependencies=*/true, "drf");
  EXPECT_GE(m.continued.fraction(), 0.35);
  EXPECT_GE(m.forecast.fraction(), 0.5);
}

}  // namespace
}  // namespace berth::plan
