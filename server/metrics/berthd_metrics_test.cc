#include "server/metrics/berthd_metrics.h"

#include "absl/strings/match.h"
#include "executor/reconcile/node_budgets.h"
#include "executor/reconcile/testing/test_jobs.h"
#include "executor/runtime/fake_runtime.h"
#include "executor/store/memory_store.h"
#include "gtest/gtest.h"
#include "planner/base/simulated_clock.h"
#include "server/core/executor_core.h"

namespace berth {
namespace {

class BerthdMetricsTest : public ::testing::Test {
 protected:
  BerthdMetricsTest()
      : plans_(store_, clock_, Budgets(), planner::Policy()),
        core_(store_, plans_, clock_, admission_mu_, Options()) {
    RegisterStateMetrics(registry_, plans_, runtime_, store_);
  }

  static v1::Budgets Budgets() {
    v1::Budgets b = testing::TestBudgets(16);
    (*b.mutable_pools())["database"].set_max_workers(2);
    return b;
  }
  static ExecutorCoreOptions Options() {
    ExecutorCoreOptions o;
    o.image_allowed = [](absl::string_view) { return true; };
    return o;
  }
  void Sync(uint64_t generation, std::vector<v1::JobSpec> jobs) {
    ReceivedSnapshot s;
    s.generation = generation;
    s.allow_mass_cancel = true;
    s.jobs = std::move(jobs);
    ASSERT_TRUE(core_.Sync(std::move(s)).ok());
    ASSERT_TRUE(plans_.Get().ok());
  }
  bool Has(const std::string& line) {
    return absl::StrContains(registry_.Render(), "\n" + line + "\n");
  }

  SimulatedClock clock_;
  MemoryStore store_;
  FakeRuntime runtime_;
  PlanCache plans_;
  absl::Mutex admission_mu_;
  ExecutorCore core_;
  MetricsRegistry registry_;
};

TEST_F(BerthdMetricsTest, OneUnitPerMetricCountersTotalAndZeroSeriesKept) {
  v1::JobSpec db = testing::TestJob("db-1", 1, 0);
  db.set_pool("database");
  Sync(1, {db});
  const std::string text = registry_.Render();
  EXPECT_TRUE(Has("berth_jobs{state=\"queued\",pool=\"database\"} 1")) << text;
  // Pools the budgets name are there before any job is.
  EXPECT_TRUE(Has("berth_jobs{state=\"queued\",pool=\"default\"} 0")) << text;
  EXPECT_TRUE(Has("berth_budget_memory_bytes 17179869184")) << text;
  EXPECT_TRUE(Has("berth_budget_pool_workers{pool=\"database\"} 2")) << text;
  EXPECT_TRUE(Has("# TYPE berth_budget_cpu_cores gauge")) << text;
  EXPECT_TRUE(Has("berth_admission_paused 0")) << text;
  EXPECT_TRUE(Has("# TYPE berth_docker_calls_total counter")) << text;
  EXPECT_TRUE(Has("# TYPE berth_docker_errors_total counter")) << text;
  EXPECT_FALSE(absl::StrContains(text, "dimension=")) << text;  // no mixed-unit metric

  // The job is gone: its series stays, at 0.
  Sync(2, {});
  EXPECT_TRUE(Has("berth_jobs{state=\"queued\",pool=\"database\"} 0")) << registry_.Render();
  ASSERT_TRUE(core_.Pause("test").ok());
  ASSERT_TRUE(plans_.Get().ok());
  EXPECT_TRUE(Has("berth_admission_paused 1")) << registry_.Render();
}

// The head of the queue is admitted by every plan but never started (no
// reconciler here): the gauge counts from the first such plan; a pause
// explains the wait and takes it back to 0.
TEST_F(BerthdMetricsTest, QueueHeadBlockedSecondsCountsAnAdmissionThatNeverTakesEffect) {
  EXPECT_TRUE(Has("berth_queue_head_blocked_seconds 0")) << registry_.Render();
  Sync(1, {testing::TestJob("a", 1, 0)});
  clock_.Advance(absl::Minutes(4));
  ASSERT_TRUE(plans_.Get().ok());
  clock_.Advance(absl::Minutes(6));
  ASSERT_TRUE(plans_.Get().ok());
  EXPECT_TRUE(Has("berth_queue_head_blocked_seconds 600")) << registry_.Render();
  ASSERT_TRUE(core_.Pause("test").ok());
  ASSERT_TRUE(plans_.Get().ok());
  EXPECT_TRUE(Has("berth_queue_head_blocked_seconds 0")) << registry_.Render();
}

// A pool without a worker cap exports no budget_pool_workers series (0 read
// as "no slots"); the alertable counters exist, at 0, before anything
// happened, and count outcomes by cause.
TEST_F(BerthdMetricsTest, NoSeriesForNoCapAndOutcomeCountersFromTheStart) {
  Sync(1, {});
  std::string text = registry_.Render();
  EXPECT_TRUE(Has("berth_budget_pool_workers{pool=\"database\"} 2")) << text;
  EXPECT_FALSE(absl::StrContains(text, "berth_budget_pool_workers{pool=\"default\"}")) << text;

  PassMetrics pass(registry_);
  text = registry_.Render();
  EXPECT_TRUE(Has("berth_reconcile_passes_total{outcome=\"error\"} 0")) << text;
  EXPECT_TRUE(Has("berth_reconcile_passes_total{outcome=\"ok\"} 0")) << text;
  EXPECT_TRUE(Has("berth_jobs_finished_total{outcome=\"failed\",cause=\"oom_killed\"} 0"))
      << text;
  EXPECT_TRUE(Has("berth_jobs_finished_total{outcome=\"succeeded\",cause=\"none\"} 0"))
      << text;
  ReconcilerOptions options;
  pass.Attach(options);
  ASSERT_TRUE(options.on_job_finished);
  options.on_job_finished(v1::JOB_STATE_FAILED, v1::FAILURE_CAUSE_OOM_KILLED);
  options.on_job_finished(v1::JOB_STATE_FAILED, v1::FAILURE_CAUSE_OOM_KILLED);
  options.on_job_finished(v1::JOB_STATE_SUCCEEDED, v1::FAILURE_CAUSE_UNSPECIFIED);
  options.on_job_finished(v1::JOB_STATE_QUEUED, v1::FAILURE_CAUSE_UNSPECIFIED);  // a requeue
  text = registry_.Render();
  EXPECT_TRUE(Has("berth_jobs_finished_total{outcome=\"failed\",cause=\"oom_killed\"} 2"))
      << text;
  EXPECT_TRUE(Has("berth_jobs_finished_total{outcome=\"succeeded\",cause=\"none\"} 1"))
      << text;
  EXPECT_FALSE(absl::StrContains(text, "outcome=\"queued\"")) << text;

  // A cap set later appears.
  v1::SetBudgetsRequest request;
  *request.mutable_budgets() = Budgets();
  (*request.mutable_budgets()->mutable_pools())["default"].set_max_workers(3);
  ASSERT_TRUE(core_.SetBudgets(request).ok());
  ASSERT_TRUE(plans_.Get().ok());
  EXPECT_TRUE(Has("berth_budget_pool_workers{pool=\"default\"} 3")) << registry_.Render();
}

TEST(CounterTest, SetTotalNeverGoesDown) {
  Counter c;
  c.SetTotal(5);
  c.SetTotal(3);
  EXPECT_EQ(c.value(), 5);
  c.SetTotal(7);
  EXPECT_EQ(c.value(), 7);
}

TEST(BerthdNodeMetricsTest, OneSeriesPerNodeByHostnameGoneWithTheNode) {
  SimulatedClock clock;
  MemoryStore store;
  FakeRuntime runtime;
  NodeBudgetsOptions o;
  o.reserve_memory_bytes = int64_t{1} << 30;
  NodeBudgets nodes(o);
  auto info = [](const std::string& id, const std::string& host) {
    NodeInfo n;
    n.id = id;
    n.hostname = host;
    n.state = NodeState::kReady;
    n.memory_bytes = int64_t{9} << 30;
    n.nano_cpus = 2'000'000'000;
    return n;
  };
  NodeInfo strayed = info("id-2", "w2");  // a leaked task of 1 GiB runs there
  strayed.stray_tasks = 1;
  strayed.stray_memory_bytes = int64_t{1} << 30;
  nodes.Update({info("id-1", "w1"), strayed});
  PlanCache plans(store, clock, testing::TestBudgets(16), planner::Policy());
  plans.set_node_budgets(&nodes);
  MetricsRegistry registry;
  RegisterStateMetrics(registry, plans, runtime, store);
  ContainerList live;
  live["a"] = ContainerSummary{"a", "c-a", ContainerState::kRunning, "id-2"};
  nodes.ObserveTasks(live);
  ASSERT_TRUE(plans.Get().ok());
  std::string text = registry.Render();
  const std::string w1 = "{node=\"w1\",node_id=\"id-1\"}";
  const std::string w2 = "{node=\"w2\",node_id=\"id-2\"}";
  // 9 GiB less the 1 GiB reserve, on each node.
  EXPECT_TRUE(absl::StrContains(text, "\nberth_node_memory_bytes" + w1 + " 8589934592\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "\nberth_node_reserve_memory_bytes" + w2 + " 1073741824\n"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "\nberth_node_observed_jobs" + w2 + " 1\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "\nberth_node_jobs" + w1 + " 0\n")) << text;
  // The stray task is reported and kept back from w2's memory for jobs.
  EXPECT_TRUE(absl::StrContains(text, "\nberth_node_stray_tasks" + w2 + " 1\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "\nberth_node_stray_memory_bytes" + w2 + " 1073741824\n"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "\nberth_node_stray_tasks" + w1 + " 0\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "\nberth_node_memory_bytes" + w2 + " 7516192768\n")) << text;
  // w1 leaves (down): its series go; w2's stay.
  NodeInfo down = info("id-1", "w1");
  down.state = NodeState::kDown;
  nodes.Update({down, info("id-2", "w2")});
  ASSERT_TRUE(plans.Get().ok());
  text = registry.Render();
  EXPECT_FALSE(absl::StrContains(text, w1)) << text;
  EXPECT_TRUE(absl::StrContains(text, "\nberth_node_memory_bytes" + w2 + " 8589934592\n")) << text;
}

}  // namespace
}  // namespace berth
