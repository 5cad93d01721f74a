// berthd's plan input (GetPlanRequest.include_state) read by berth-plan: at
// every moment of a generated run, the exported state, read as `berth-plan
// now` reads a file and planned as it plans, gives berthd's own plan — the
// same jobs in the same order with the same verdicts, reasons and
// reservation. A berthd without gRPC: ExecutorCore on MemoryStore +
// FakeRuntime with the real reconciler, on a simulated clock.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "executor/reconcile/reconciler.h"
#include "executor/reconcile/testing/test_jobs.h"
#include "executor/runtime/fake_runtime.h"
#include "executor/store/memory_store.h"
#include "gtest/gtest.h"
#include "planner/base/proto_json.h"
#include "planner/base/simulated_clock.h"
#include "planner/convert/convert.h"
#include "planner/plan/plan.h"
#include "server/core/executor_core.h"
#include "server/core/testing/test_core_options.h"
#include "server/ingest/test_snapshot.h"
#include "tools/plan/input.h"

namespace berth {
namespace {

using testing::TestJob;
using testing::TestSnapshot;

struct World {
  explicit World(const planner::Policy& policy)
      : plans(store, clock, testing::TestBudgets(16, 6), policy),
        reconciler(store, runtime, clock, plans, ReconcilerOptions()),
        core(store, plans, clock, reconciler.admission_mutex(), Options()) {}

  static ExecutorCoreOptions Options() {
    ExecutorCoreOptions o = testing::TestCoreOptions();
    return o;
  }

  SimulatedClock clock{absl::FromUnixSeconds(1'800'000'000)};
  MemoryStore store;
  FakeRuntime runtime;
  PlanCache plans;
  Reconciler reconciler;
  ExecutorCore core;
};

// `n` jobs of four workspaces with mixed priorities, sizes, durations and
// creation times; one in eight depends on an earlier one.
std::vector<v1::JobSpec> Jobs(std::mt19937& rng, int first, int n, absl::Time now) {
  std::vector<v1::JobSpec> jobs;
  for (int i = first; i < first + n; ++i) {
    v1::JobSpec j = TestJob(absl::StrCat("j", i), 1 + static_cast<int>(rng() % 6),
                            static_cast<int>(rng() % 4));
    j.set_workspace(absl::StrCat("ws", rng() % 4));
    j.mutable_resources()->set_cpu_millis(250 * (1 + static_cast<int>(rng() % 8)));
    j.mutable_expected_duration()->set_seconds(60 + rng() % 3600);
    *j.mutable_created_at() =
        planner::ToProtoTimestamp(now - absl::Seconds(static_cast<int64_t>(rng() % 7200)));
    if (i > 0 && rng() % 8 == 0) j.add_depends_on(absl::StrCat("j", rng() % i));
    jobs.push_back(std::move(j));
  }
  return jobs;
}

// The plan `berth-plan now` makes of `path`, as RunNow assembles it (every
// job of a state has arrived at its start).
planner::PlanResult PlanOfFile(const std::string& path, const planner::Policy& policy,
                               planner::State* state) {
  absl::StatusOr<plan::PlanInput> in = plan::LoadPlanInput(path);
  EXPECT_TRUE(in.ok()) << in.status();
  if (!in.ok()) return {};
  EXPECT_TRUE(in->has_file_budgets);
  state->running = in->sim.running;
  planner::RestoreMemory(in->sim.memory, *state);
  for (planner::SimJob& j : in->sim.jobs) state->queued.push_back(std::move(j.job));
  return planner::Plan(*state, in->file_budgets, policy, in->sim.start);
}

void CheckRun(uint32_t seed, const planner::Policy& policy, const std::string& dir) {
  SCOPED_TRACE(absl::StrCat("seed ", seed, " (replay: BERTH_SEED=", seed, ")"));
  std::mt19937 rng(seed);
  World w(policy);
  std::vector<v1::JobSpec> jobs = Jobs(rng, 0, 30, w.clock.Now());
  uint64_t generation = 1;
  ASSERT_TRUE(w.core.Sync(TestSnapshot(generation, jobs)).ok());
  int compared = 0, with_holder = 0;
  for (int step = 0; step < 12; ++step) {
    ASSERT_TRUE(w.reconciler.RunPass().ok());
    absl::StatusOr<v1::Plan> plan = w.core.GetPlan(0, /*include_state=*/true);
    ASSERT_TRUE(plan.ok()) << plan.status();
    ASSERT_TRUE(plan->has_state());
    const std::string path = absl::StrCat(dir, "/state-", seed, "-", step, ".json");
    absl::StatusOr<std::string> json = ToJson(plan->state());
    ASSERT_TRUE(json.ok()) << json.status();
    ASSERT_TRUE(WriteFileAtomically(path, *json).ok());
    planner::State state;
    const planner::PlanResult again = PlanOfFile(path, policy, &state);
    ASSERT_EQ(again.decisions.size(), static_cast<size_t>(plan->decisions_size()))
        << "step " << step;
    for (size_t i = 0; i < again.decisions.size(); ++i) {
      const planner::Decision& d = again.decisions[i];
      const v1::PlanDecision want = plan->decisions(static_cast<int>(i));
      const v1::PlanDecision got =
          planner::ToProtoDecision(again, d, state, static_cast<int32_t>(i + 1), {});
      EXPECT_EQ(got.job_id(), want.job_id()) << "step " << step << " position " << i + 1;
      EXPECT_EQ(got.verdict(), want.verdict()) << want.job_id() << " step " << step;
      EXPECT_EQ(got.reason(), want.reason()) << want.job_id() << " step " << step;
      EXPECT_EQ(got.reserved(), want.reserved()) << want.job_id() << " step " << step;
      EXPECT_EQ(got.shortfall().DebugString(), want.shortfall().DebugString()) << want.job_id();
    }
    EXPECT_EQ(again.admitted_count, static_cast<size_t>(plan->admitted_count()));
    compared += plan->decisions_size();
    if (plan->state().has_planner_memory() &&
        !plan->state().planner_memory().reservation_holder().empty()) {
      ++with_holder;
    }
    // The world moves: time passes, jobs past their estimate end (one in
    // ten fails), and twice more jobs arrive.
    w.clock.Advance(absl::Seconds(60 + rng() % 900));
    for (const v1::RunningJob& r : plan->state().running()) {
      const absl::Time end = planner::FromProto(r.started_at()) +
                             planner::FromProto(r.spec().expected_duration());
      if (end <= w.clock.Now()) {
        ASSERT_TRUE(w.runtime.Exit(r.spec().id(), rng() % 10 == 0 ? 1 : 0).ok());
      }
    }
    if (step == 3 || step == 7) {
      std::vector<v1::JobSpec> more =
          Jobs(rng, static_cast<int>(jobs.size()), 10, w.clock.Now());
      jobs.insert(jobs.end(), more.begin(), more.end());
      ASSERT_TRUE(w.core.Sync(TestSnapshot(++generation, jobs)).ok());
    }
  }
  std::printf("seed %u: %d decisions compared, %d plans with a reservation holder\n", seed,
              compared, with_holder);
  EXPECT_GT(compared, 0);
}

TEST(BerthdStateTest, BerthPlanPlansTheExportedStateAsBerthdDid) {
  const char* dir = std::getenv("TEST_TMPDIR");
  ASSERT_NE(dir, nullptr);
  uint32_t first = std::random_device()();
  if (const char* s = std::getenv("BERTH_SEED")) first = static_cast<uint32_t>(std::atoll(s));
  planner::Policy plain;
  planner::Policy no_aging;
  no_aging.aging_interval = absl::ZeroDuration();
  for (uint32_t k = 0; k < 10; ++k) {
    CheckRun(first + k, plain, dir);
    CheckRun(first + k, no_aging, dir);
    if (HasFatalFailure()) return;
  }
}

TEST(BerthdStateTest, StateCarriesOnlyWhatPlanningReads) {
  World w{planner::Policy()};
  v1::JobSpec a = TestJob("a", 2);
  (*a.mutable_env())["SECRET"] = "1";
  ASSERT_TRUE(w.core.Sync(TestSnapshot(1, {a, TestJob("b", 15)})).ok());
  ASSERT_TRUE(w.reconciler.RunPass().ok());
  absl::StatusOr<v1::Plan> without = w.core.GetPlan(0);
  ASSERT_TRUE(without.ok());
  EXPECT_FALSE(without->has_state());
  absl::StatusOr<v1::Plan> with = w.core.GetPlan(0, true);
  ASSERT_TRUE(with.ok());
  ASSERT_EQ(with->state().running_size(), 1);
  EXPECT_EQ(with->state().running(0).spec().id(), "a");
  EXPECT_TRUE(with->state().running(0).spec().image().empty());
  EXPECT_EQ(with->state().running(0).spec().argv_size(), 0);
  EXPECT_EQ(with->state().running(0).spec().env_size(), 0);
  ASSERT_EQ(with->state().jobs_size(), 1);
  EXPECT_EQ(with->state().jobs(0).spec().id(), "b");
  EXPECT_TRUE(with->state().jobs(0).has_queued_at());
  EXPECT_EQ(planner::FromProto(with->state().start_time()),
            planner::FromProto(with->computed_at()));
  EXPECT_EQ(with->state().budgets().memory_bytes(), 16 * testing::kGiB);
}

}  // namespace
}  // namespace berth
