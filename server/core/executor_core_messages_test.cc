// What ExplainJob and the job's record say to the people reading them:
// a failed job's cause in words, the dependency a
// DEPENDENCY_FAILED job waited for, both a pause and a maintenance; and
// SetBudgets' refusal of budgets no job fits in and warning about budgets
// above the engine.
// ExecutorCore on MemoryStore + FakeRuntime with the real reconciler, as
// executor_core_test.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "executor/reconcile/held_jobs.h"
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

v1::Budgets WithDatabasePool() {
  v1::Budgets b = testing::TestBudgets(16);
  (*b.mutable_pools())["database"].set_max_workers(1);
  return b;
}

class ExecutorCoreMessagesTest : public ::testing::Test {
 protected:
  ExecutorCoreMessagesTest()
      : plans_(store_, clock_, WithDatabasePool(), planner::Policy()),
        reconciler_(store_, runtime_, clock_, plans_,
                    [this] {
                      ReconcilerOptions o;
                      o.held = &held_;
                      return o;
                    }()),
        core_(store_, plans_, clock_, reconciler_.admission_mutex(), [this] {
          ExecutorCoreOptions o = testing::TestCoreOptions();
          o.held = &held_;
          o.engine = {int64_t{23} << 30, 2000};  // docker info: 23 GiB, 2 CPUs
          return o;
        }()) {}

  void Pass() {
    absl::StatusOr<PassStats> s = reconciler_.RunPass();
    ASSERT_TRUE(s.ok()) << s.status();
  }
  v1::Job Get(const std::string& id) {
    absl::StatusOr<v1::Job> j = core_.GetJob(id);
    EXPECT_TRUE(j.ok()) << j.status();
    return j.value_or(v1::Job());
  }
  std::string Summary(const std::string& id) {
    absl::StatusOr<v1::Explanation> e = core_.ExplainJob(id);
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? e->summary() : "";
  }

  SimulatedClock clock_;
  MemoryStore store_;
  HeldJobs held_;
  FakeRuntime runtime_;
  PlanCache plans_;
  Reconciler reconciler_;
  ExecutorCore core_;
};

// A job held because its node was lost says so, with the
// runtime's reason (the node, when it was lost, when it is requeued and the
// operator's override), in Explanation.held and the summary; released, it
// reads as any running job again.
TEST_F(ExecutorCoreMessagesTest, AJobHeldForALostNodeSaysWhyAndUntilWhen) {
  ASSERT_TRUE(core_.Sync(TestSnapshot(1, {TestJob("a", 1)})).ok());
  Pass();
  ASSERT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  const std::string why =
      "requeue after 2026-11-27 13:42:10 UTC (--swarm_node_lost_grace): node w1 (n1) lost at "
      "2026-11-27 13:31:05 UTC; sooner if it comes back and its attempt ends. If the node is "
      "known dead, `docker node rm --force n1` requeues now";
  ASSERT_TRUE(runtime_.Hold("a", why).ok());
  clock_.Advance(absl::Seconds(2));
  Pass();
  absl::StatusOr<v1::Explanation> e = core_.ExplainJob("a");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(e->held(), why);
  EXPECT_TRUE(absl::StrContains(e->summary(), absl::StrCat(" Held, its node was lost: ", why,
                                                           ".")))
      << e->summary();
  EXPECT_TRUE(absl::StartsWith(e->summary(), "Running since ")) << e->summary();

  ASSERT_TRUE(runtime_.Hold("a", "").ok());
  clock_.Advance(absl::Seconds(2));
  Pass();
  e = core_.ExplainJob("a");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->held(), "");
  EXPECT_FALSE(absl::StrContains(e->summary(), "Held")) << e->summary();
}

TEST_F(ExecutorCoreMessagesTest, AFailedJobAndItsDependantSayWhyInWords) {
  v1::JobSpec child = TestJob("child", 1);
  child.add_depends_on("prep");
  ASSERT_TRUE(core_.Sync(TestSnapshot(1, {TestJob("prep", 1), child})).ok());
  Pass();
  ASSERT_EQ(Get("prep").state(), v1::JOB_STATE_RUNNING);
  ASSERT_TRUE(runtime_.Exit("prep", 3).ok());
  Pass();
  Pass();
  const std::string failed = Summary("prep");
  EXPECT_TRUE(absl::StartsWith(failed, "Failed at ")) << failed;
  EXPECT_TRUE(absl::StrContains(failed, "its command exited with an error")) << failed;
  EXPECT_FALSE(absl::StrContains(failed, "FAILURE_CAUSE")) << failed;

  const v1::Job dependant = Get("child");
  ASSERT_EQ(dependant.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(dependant.failure_cause(), v1::FAILURE_CAUSE_DEPENDENCY_FAILED);
  EXPECT_EQ(dependant.message(), "dependency prep did not succeed");
  EXPECT_TRUE(absl::StrContains(Summary("child"), "dependency prep did not succeed"))
      << Summary("child");
}

TEST_F(ExecutorCoreMessagesTest, APausedJobInAPoolInMaintenanceHearsOfBoth) {
  v1::JobSpec db = TestJob("db", 1);
  db.set_pool("database");
  v1::SetPoolMaintenanceRequest m;
  m.set_pool("database");
  m.set_in_maintenance(true);
  m.set_reason("db upgrade");
  ASSERT_TRUE(core_.SetPoolMaintenance(m).ok());
  ASSERT_TRUE(core_.Pause("reboot").ok());
  ASSERT_TRUE(core_.Sync(TestSnapshot(1, {db, TestJob("plain", 1)})).ok());
  Pass();
  EXPECT_EQ(Summary("db"),
            "Admission is paused: reboot. Pool database is in maintenance: db upgrade as well.");
  EXPECT_TRUE(absl::StartsWith(Summary("plain"), "Admission is paused: reboot. 1 higher"))
      << Summary("plain");
  absl::StatusOr<v1::Plan> plan = core_.GetPlan(0);
  ASSERT_TRUE(plan.ok()) << plan.status();
  bool seen = false;
  for (const v1::PlanDecision& d : plan->decisions()) {
    if (d.job_id() != "db") continue;
    seen = true;
    EXPECT_EQ(d.summary(), "admission paused; pool 'database' in maintenance: db upgrade");
  }
  EXPECT_TRUE(seen);
}

TEST_F(ExecutorCoreMessagesTest, SetBudgetsRefusesBudgetsNoJobFitsAndWarnsAboveTheEngine) {
  ASSERT_TRUE(core_.GetBudgets().ok());
  const v1::Budgets before = *core_.GetBudgets();
  v1::SetBudgetsRequest r;
  r.mutable_budgets()->set_cpu_millis(100);
  r.mutable_update_mask()->add_paths("cpu_millis");
  ASSERT_TRUE(core_.SetBudgets(r).ok());  // 0.1 cores: a job of 0.01 fits
  r.mutable_budgets()->set_cpu_millis(1);
  absl::StatusOr<v1::Budgets> tiny = core_.SetBudgets(r);
  EXPECT_EQ(tiny.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(tiny.status().message(), "budgets.cpu_millis: 0.001 cores"))
      << tiny.status();
  r.Clear();
  r.mutable_budgets()->set_memory_bytes(1);
  r.mutable_update_mask()->add_paths("memoryBytes");
  tiny = core_.SetBudgets(r);
  EXPECT_EQ(tiny.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(tiny.status().message(), "budgets.memory_bytes: 1 B"))
      << tiny.status();
  EXPECT_EQ(core_.GetBudgets()->cpu_millis(), 100) << "a refused change changes nothing";

  // 256 GiB on a 23 GiB engine: set, with a warning in the answer only.
  r.mutable_budgets()->set_memory_bytes(int64_t{256} << 30);
  absl::StatusOr<v1::Budgets> big = core_.SetBudgets(r);
  ASSERT_TRUE(big.ok()) << big.status();
  ASSERT_EQ(big->warnings_size(), 1);
  EXPECT_TRUE(absl::StartsWith(big->warnings(0),
                               "memory_bytes 256 GiB is more than the engine's 23 GiB"))
      << big->warnings(0);
  EXPECT_EQ(core_.GetBudgets()->memory_bytes(), int64_t{256} << 30);
  EXPECT_EQ(core_.GetBudgets()->warnings_size(), 0) << "never stored";
  EXPECT_NE(before.memory_bytes(), int64_t{256} << 30);
}

}  // namespace
}  // namespace berth
