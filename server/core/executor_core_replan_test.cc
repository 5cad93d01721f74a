// A sync that changed no job keeps the plan (PlanCache::CarryForward), and
// every change to what a plan reads still replans; a dry run plans as the
// next real plan would. ExecutorCore on
// MemoryStore + FakeRuntime with the real reconciler, as executor_core_test.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "executor/reconcile/reconciler.h"
#include "executor/reconcile/testing/test_jobs.h"
#include "executor/runtime/fake_runtime.h"
#include "executor/store/memory_store.h"
#include "gtest/gtest.h"
#include "planner/base/simulated_clock.h"
#include "server/core/executor_core.h"
#include "server/core/testing/test_core_options.h"
#include "server/ingest/test_snapshot.h"

namespace berth {
namespace {

using testing::TestJob;
using testing::TestSnapshot;

// A berthd without gRPC: "a-run" and "b-run" run (3 GiB of 4; ranked first
// by id, as all were created at 0 and aging ranks them alike), "big" waits.
struct World {
  World()
      : plans(store, clock, testing::TestBudgets(4), planner::Policy()),
        reconciler(store, runtime, clock, plans, ReconcilerOptions()),
        core(store, plans, clock, reconciler.admission_mutex(), Options()) {}

  static ExecutorCoreOptions Options() {
    ExecutorCoreOptions o = testing::TestCoreOptions();
    return o;
  }
  static std::vector<v1::JobSpec> Jobs() {
    return {TestJob("a-run", 2), TestJob("b-run", 1), TestJob("big", 3)};
  }
  uint64_t Sync(uint64_t generation, std::vector<v1::JobSpec> jobs) {
    absl::StatusOr<v1::SyncSnapshotResponse> r = core.Sync(TestSnapshot(generation, std::move(jobs)));
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->revision() : 0;
  }
  void Pass() {
    absl::StatusOr<PassStats> s = reconciler.RunPass();
    ASSERT_TRUE(s.ok()) << s.status();
  }
  // GetPlan's revision, which berth-load waits for after a sync.
  uint64_t PlanRevision() {
    absl::StatusOr<v1::Plan> p = core.GetPlan(0);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? p->revision() : 0;
  }

  SimulatedClock clock;
  MemoryStore store;
  FakeRuntime runtime;
  PlanCache plans;
  Reconciler reconciler;
  ExecutorCore core;
};

TEST(ReplanTest, AnUnchangedReSyncKeepsThePlanAtItsRevision) {
  World w;
  w.Sync(1, World::Jobs());
  w.Pass();  // admits "a-run" and "b-run" and plans again after them
  ASSERT_EQ(w.core.GetJob("a-run")->state(), v1::JOB_STATE_RUNNING);
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> before = w.plans.Get();
  ASSERT_TRUE(before.ok());
  const int64_t computed = w.plans.computations();

  const uint64_t revision_before = w.store.CurrentRevision();
  const uint64_t revision = w.Sync(2, World::Jobs());
  EXPECT_EQ(revision, revision_before);  // no event: the event log is about jobs
  EXPECT_EQ(w.store.CurrentRevision(), revision);
  EXPECT_EQ(w.PlanRevision(), revision);  // at once: no wait for a replan
  // job-server still learns the applied generation.
  EXPECT_EQ(w.core.GetPlan(0)->last_applied_generation(), 2u);
  w.Pass();
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> after = w.plans.Get();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->get(), before->get());
  EXPECT_EQ((*after)->revision, revision);
  EXPECT_EQ(w.plans.computations(), computed);

  // Not carried from a revision other than the plan's: a later unchanged
  // sync after another write replans.
  w.plans.CarryForward(revision - 1, revision + 5);
  EXPECT_EQ((*after)->revision, revision);
}

// ExplainJob(id, plan) answers from the plan given (the dashboard's ready
// one, server/web/ready_plans.h), not the latest: with that plan's
// revision, and "not planned yet" for a job queued after it.
TEST(ReplanTest, ExplainJobFromAnOlderPlan) {
  World w;
  w.Sync(1, World::Jobs());
  w.Pass();
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> older = w.plans.Refresh();
  ASSERT_TRUE(older.ok());
  std::vector<v1::JobSpec> jobs = World::Jobs();
  jobs.push_back(TestJob("late", 3));
  w.Sync(2, std::move(jobs));
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> latest = w.plans.Refresh();
  ASSERT_TRUE(latest.ok());
  ASSERT_GT((*latest)->revision, (*older)->revision);

  absl::StatusOr<v1::Explanation> big = w.core.ExplainJob("big", **older);
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(big->revision(), (*older)->revision);
  EXPECT_EQ(big->reason(), v1::WAITING_FOR_MEMORY);
  EXPECT_EQ(big->queue_position(), 1);
  absl::StatusOr<v1::Explanation> late = w.core.ExplainJob("late", **older);
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_EQ(late->revision(), (*older)->revision);
  EXPECT_EQ(late->queue_position(), 0);
  EXPECT_EQ(late->summary(), "Queued; not planned yet. Ask again in a moment.");
  // The latest plan has it.
  absl::StatusOr<v1::Explanation> now = w.core.ExplainJob("late");
  ASSERT_TRUE(now.ok()) << now.status();
  EXPECT_EQ(now->revision(), (*latest)->revision);
  EXPECT_EQ(now->queue_position(), 2);
  EXPECT_EQ(w.core.ExplainJob("nope", **older).status().code(), absl::StatusCode::kNotFound);
}

// After an unchanged re-sync kept the plan, each change to something
// BuildPlanSnapshot reads replans: the queue (added, updated, cancelled,
// rejected jobs), running jobs (a stop intent, an exit), budgets, pause and
// pool maintenance.
TEST(ReplanTest, EveryChangeToWhatAPlanReadsReplans) {
  struct Case {
    const char* name;
    std::function<void(World&)> change;
  };
  auto sync = [](std::function<void(std::vector<v1::JobSpec>&)> edit) {
    return [edit](World& w) {
      std::vector<v1::JobSpec> jobs = World::Jobs();
      edit(jobs);
      w.Sync(3, std::move(jobs));
    };
  };
  const std::vector<Case> cases = {
      {"new job", sync([](auto& j) { j.push_back(TestJob("new", 1)); })},
      {"changed priority", sync([](auto& j) { j[2].set_priority(9); })},
      {"queued job absent (cancelled)", sync([](auto& j) { j.pop_back(); })},
      {"new rejected job", sync([](auto& j) { j.push_back(TestJob("huge", 64)); })},
      {"running job absent (stop intent only)",
       sync([](auto& j) { j.erase(j.begin()); })},
      {"running job ends",
       [](World& w) {
         TransitionRequest t;
         t.job_id = "a-run";
         t.expected_state = v1::JOB_STATE_RUNNING;
         t.new_state = v1::JOB_STATE_SUCCEEDED;
         ASSERT_TRUE(w.store.Transition(t, w.clock.Now()).ok());
       }},
      {"budgets",
       [](World& w) {
         v1::SetBudgetsRequest r;
         r.mutable_budgets()->set_memory_bytes(int64_t{8} << 30);
         r.mutable_update_mask()->add_paths("memory_bytes");
         ASSERT_TRUE(w.core.SetBudgets(r).ok());
       }},
      {"pause", [](World& w) { ASSERT_TRUE(w.core.Pause("test").ok()); }},
      {"pool maintenance",
       [](World& w) {
         v1::SetPoolMaintenanceRequest m;
         m.set_pool("default");
         m.set_in_maintenance(true);
         ASSERT_TRUE(w.core.SetPoolMaintenance(m).ok());
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    World w;
    w.Sync(1, World::Jobs());
    w.Pass();
    ASSERT_EQ(w.core.GetJob("a-run")->state(), v1::JOB_STATE_RUNNING);
    // A reader's plan (passes plan their admissions only).
    ASSERT_TRUE(w.plans.Get().ok());
    w.Sync(2, World::Jobs());
    w.Pass();
    const int64_t computed = w.plans.computations();
    absl::StatusOr<std::shared_ptr<const PlanSnapshot>> kept = w.plans.Get();
    ASSERT_TRUE(kept.ok());
    ASSERT_EQ(w.plans.computations(), computed);  // the unchanged sync was carried

    const uint64_t before = w.store.CurrentRevision();
    c.change(w);
    ASSERT_NE(w.store.CurrentRevision(), before);
    absl::StatusOr<std::shared_ptr<const PlanSnapshot>> now = w.plans.Refresh();
    ASSERT_TRUE(now.ok());
    EXPECT_EQ(w.plans.computations(), computed + 1);
    EXPECT_NE(now->get(), kept->get());
    EXPECT_EQ((*now)->revision, w.store.CurrentRevision());
  }
}

TEST(ReplanTest, ADryRunPlansAsTheSyncWouldWithTheCarriedTurns) {
  // Two identical workspaces (one created_at, a 1 GiB job running in each),
  // one 2 GiB job at a time fits in 4 GiB. Where nothing breaks their tie
  // the ranking's hash picks a workspace (X); X is made the one admitted
  // most recently, so fair turns give the other (Y) the next start. A dry
  // run must plan as the sync of the same snapshot does (Y first), not as a
  // plan without the carried turns would (the hash: X).
  auto job = [](const std::string& id, const std::string& ws, int64_t gib) {
    v1::JobSpec j = TestJob(id, gib);
    j.set_workspace(ws);
    j.mutable_created_at()->set_seconds(1'700'000'000);
    return j;
  };
  auto with_sleepers = [&](std::vector<v1::JobSpec> jobs) {
    jobs.push_back(job("sa", "ws-a", 1));
    jobs.push_back(job("sb", "ws-b", 1));
    return jobs;
  };
  const std::vector<v1::JobSpec> next = with_sleepers({job("a3", "ws-a", 2), job("b3", "ws-b", 2)});
  auto first_big = [](const v1::Plan& plan) {
    for (const v1::PlanDecision& d : plan.decisions()) {
      if (d.job_id() == "a3" || d.job_id() == "b3") return d.job_id();
    }
    return std::string();
  };
  std::string x;  // the hash's pick: a dry run where no plan admitted anything
  {
    World fresh;
    absl::StatusOr<v1::DryRunResponse> d = fresh.core.DryRun(TestSnapshot(1, next));
    ASSERT_TRUE(d.ok()) << d.status();
    x = first_big(d->plan()) == "a3" ? "a" : "b";
  }
  const std::string y = x == "a" ? "b" : "a";

  World w;
  w.Sync(1, with_sleepers({job(x + "1", "ws-" + x, 2)}));
  w.Pass();  // admits the sleepers and x1: X's turn is the latest
  for (const std::string& id : {std::string("sa"), std::string("sb"), x + "1"}) {
    ASSERT_EQ(w.core.GetJob(id)->state(), v1::JOB_STATE_RUNNING) << id;
  }
  ASSERT_TRUE(w.runtime.Exit(x + "1", 0).ok());
  w.Pass();  // finalises it

  absl::StatusOr<v1::DryRunResponse> dry = w.core.DryRun(TestSnapshot(2, next));
  ASSERT_TRUE(dry.ok()) << dry.status();
  w.Sync(2, next);
  absl::StatusOr<v1::Plan> real = w.core.GetPlan(0);
  ASSERT_TRUE(real.ok()) << real.status();
  EXPECT_EQ(first_big(*real), y + "3");  // fair turns
  ASSERT_EQ(dry->plan().decisions_size(), real->decisions_size());
  for (int i = 0; i < real->decisions_size(); ++i) {
    EXPECT_EQ(dry->plan().decisions(i).job_id(), real->decisions(i).job_id()) << i;
    EXPECT_EQ(dry->plan().decisions(i).verdict(), real->decisions(i).verdict()) << i;
  }
}

}  // namespace
}  // namespace berth
