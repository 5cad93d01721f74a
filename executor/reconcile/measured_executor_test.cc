#include "executor/reconcile/measured_executor.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/reconcile/plan_snapshot.h"
#include "executor/reconcile/reconciler.h"
#include "executor/reconcile/testing/test_jobs.h"
#include "executor/runtime/fake_runtime.h"
#include "executor/store/memory_store.h"
#include "gtest/gtest.h"
#include "planner/base/simulated_clock.h"

namespace berth {
namespace {

planner::ExecutorModel Defaults() {
  planner::ExecutorModel m;
  m.start_latency = absl::Milliseconds(250);
  m.start_contention = absl::Milliseconds(70);
  m.start_parallelism = 4;
  m.finish_latency = absl::Milliseconds(50);
  return m;
}

TEST(MeasuredExecutor, KeepsTheInitialModelUntilEnoughStarts) {
  MeasuredExecutorOptions o;
  o.min_samples = 8;
  MeasuredExecutor m(Defaults(), nullptr, o);
  for (int i = 0; i < 7; ++i) m.ObserveStart(absl::Milliseconds(900), 1);
  EXPECT_EQ(m.Current().start_latency, absl::Milliseconds(250));
  m.ObserveStart(absl::Milliseconds(900), 1);
  EXPECT_EQ(m.Current().start_latency, absl::Milliseconds(900));
  EXPECT_EQ(m.Current().start_contention, absl::ZeroDuration());  // one level: none measured
  EXPECT_EQ(m.Current().finish_latency, absl::Milliseconds(50));  // no finishes yet
  EXPECT_EQ(m.Current().start_parallelism, 4);                     // configured, kept
}

TEST(MeasuredExecutor, FitsLatencyAloneAndContentionFromLevels) {
  MeasuredExecutor m(Defaults(), nullptr);
  // Alone 300 ms; each other start in flight adds 100 ms.
  for (int i = 0; i < 10; ++i) {
    m.ObserveStart(absl::Milliseconds(300), 1);
    m.ObserveStart(absl::Milliseconds(500), 3);
    m.ObserveStart(absl::Milliseconds(600), 4);
  }
  EXPECT_NEAR(absl::ToDoubleMilliseconds(m.Current().start_latency), 300, 1e-6);
  EXPECT_NEAR(absl::ToDoubleMilliseconds(m.Current().start_contention), 100, 1e-6);
}

TEST(MeasuredExecutor, FinishLatencyIsTheMedianAndTheWindowForgets) {
  MeasuredExecutorOptions o;
  o.window = 16;
  o.min_samples = 4;
  MeasuredExecutor m(Defaults(), nullptr, o);
  for (int ms : {10, 20, 30, 1000, 40}) m.ObserveFinish(absl::Milliseconds(ms));
  EXPECT_EQ(m.Current().finish_latency, absl::Milliseconds(30));
  for (int i = 0; i < 16; ++i) m.ObserveStart(absl::Seconds(2), 1);
  EXPECT_EQ(m.Current().start_latency, absl::Seconds(2));
  for (int i = 0; i < 16; ++i) m.ObserveStart(absl::Milliseconds(120), 1);
  EXPECT_EQ(m.Current().start_latency, absl::Milliseconds(120));  // the old ones are gone
}

// The reconciler's own starts, on a fake engine that takes 700 ms of the
// simulated clock to start a container, become the forecast's model.
TEST(MeasuredExecutor, PlansForecastWithTheReconcilersMeasuredStarts) {
  SimulatedClock clock;
  MemoryStore store;
  FakeRuntime runtime;
  PlanCache plans(store, clock, testing::TestBudgets(16, 10), planner::Policy());
  MeasuredExecutorOptions mo;
  mo.min_samples = 4;
  MeasuredExecutor measured(Defaults(), &plans, mo);
  ReconcilerOptions ro;
  ro.start_parallelism = 1;
  ro.background_starts = true;
  measured.Attach(ro);
  Reconciler reconciler(store, runtime, clock, plans, ro);

  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> before = plans.Refresh();
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ((*before)->forecast.executor.start_latency, absl::Milliseconds(250));

  std::vector<v1::JobSpec> jobs;
  for (int i = 0; i < 4; ++i) {
    jobs.push_back(testing::TestJob(absl::StrCat("j", i), 1));
    SnapshotRequest r;
    r.generation = static_cast<uint64_t>(i + 1);
    r.jobs = jobs;
    ASSERT_TRUE(store.ApplySnapshot(r, clock.Now()).ok());
    runtime.BlockStarts();
    ASSERT_TRUE(reconciler.RunPass().ok());
    ASSERT_TRUE(runtime.AwaitStartsWaiting(1, absl::Seconds(10)));
    clock.Advance(absl::Milliseconds(700));  // the engine's create + start
    runtime.UnblockStarts();
    reconciler.AwaitStarts();
    absl::StatusOr<StoredJob> j = store.GetJob(jobs.back().id());
    ASSERT_TRUE(j.ok());
    ASSERT_EQ(j->job.state(), v1::JOB_STATE_RUNNING);
  }
  EXPECT_EQ(measured.Current().start_latency, absl::Milliseconds(700));
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> after = plans.Refresh();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ((*after)->forecast.executor.start_latency, absl::Milliseconds(700));
  EXPECT_EQ((*after)->forecast.executor.start_parallelism, 4);
}

}  // namespace
}  // namespace berth
