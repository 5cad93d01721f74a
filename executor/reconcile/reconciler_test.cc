// The reconciler on fakes: MemoryStore, FakeRuntime, SimulatedClock. The same
// flows run against real Docker and RocksDB in tests/ (end to end).
#include "executor/reconcile/reconciler.h"

#include <string>
#include <vector>

#include "executor/runtime/fake_runtime.h"
#include "executor/store/memory_store.h"
#include "executor/reconcile/plan_snapshot.h"
#include "executor/reconcile/testing/reconciler_fixture.h"
#include "planner/base/simulated_clock.h"
#include "executor/reconcile/testing/test_jobs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/base/human_text_testing.h"
#include "planner/convert/convert.h"

namespace berth {
namespace {

using ::berth::testing::Budgets;
using ::berth::testing::Job;
using ::berth::testing::kGiB;
using ::berth::testing::ReconcilerTest;

TEST_F(ReconcilerTest, AdmitsWhatFitsAndStartsIt) {
  Sync(1, {Job("a", 8, 2), Job("b", 6, 1), Job("c", 4, 0)});
  PassStats s = Pass();
  EXPECT_TRUE(s.runtime_ok);
  // 16 GiB budget: a (8) + b (6) fit, c (4) does not.
  EXPECT_EQ(s.admitted, 2);
  EXPECT_EQ(s.started, 2);
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Get("b").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Get("c").state(), v1::JOB_STATE_QUEUED);
  EXPECT_FALSE(Get("a").container_id().empty());
  EXPECT_LE(RunningMemory(), 16 * kGiB);
  EXPECT_EQ(runtime_.creates(), 2);

  // Nothing changed: a second pass creates nothing and lists once.
  CallCounters before = runtime_.Counters();
  s = Pass();
  EXPECT_EQ(s.admitted, 0);
  EXPECT_EQ(runtime_.creates(), 2);
  CallCounters after = runtime_.Counters();
  EXPECT_EQ(TotalCalls(after) - TotalCalls(before), 1) << "only the bulk list";
}

TEST_F(ReconcilerTest, FinishedJobsAreFinalisedWithLogsAndFreeCapacity) {
  Sync(1, {Job("a", 8, 2), Job("b", 6, 1), Job("c", 4, 0)});
  Pass();
  runtime_.AppendLog("a", "hello from a\n");
  ASSERT_TRUE(runtime_.Exit("a", 0).ok());
  ASSERT_TRUE(runtime_.Exit("b", 3).ok());
  PassStats s = Pass();
  EXPECT_EQ(s.finalised, 2);
  v1::Job a = Get("a");
  EXPECT_EQ(a.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(a.logs_tail(), "hello from a\n");
  EXPECT_TRUE(a.has_exit_code());
  EXPECT_EQ(a.exit_code(), 0);
  v1::Job b = Get("b");
  EXPECT_EQ(b.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(b.failure_cause(), v1::FAILURE_CAUSE_NONZERO_EXIT);
  EXPECT_EQ(b.exit_code(), 3);
  // Their containers are gone and c now runs.
  EXPECT_EQ(Get("c").state(), v1::JOB_STATE_RUNNING);
  absl::StatusOr<ContainerList> list = runtime_.List();
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->size(), 1u);
  EXPECT_EQ(list->count("c"), 1u);
}

TEST_F(ReconcilerTest, OomIsOomButBerthsOwnKillIsNot) {
  Sync(1, {Job("oom", 2), Job("cancelme", 2)});
  Pass();
  ASSERT_TRUE(runtime_.OomKill("oom").ok());
  runtime_.set_stop_exit_code(137);  // the cancel ends with SIGKILL too
  Sync(2, {Job("oom", 2)});          // cancelme absent: cancel it
  Pass();                            // finalises oom, stops cancelme
  Pass();                            // finalises cancelme
  v1::Job oom = Get("oom");
  EXPECT_EQ(oom.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(oom.failure_cause(), v1::FAILURE_CAUSE_OOM_KILLED);
  v1::Job cancelled = Get("cancelme");
  EXPECT_EQ(cancelled.state(), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(cancelled.exit_code(), 137);
  // The state says "cancelled"; the message does not say it again.
  EXPECT_EQ(cancelled.message(), "withdrawn by the job-server; container stopped, logs kept");
  EXPECT_EQ(HumanTextProblem(cancelled.message(), "cancelme"), "");
  EXPECT_EQ(HumanTextProblem(oom.message(), "oom"), "");
}

// Decision reasons use units.h: "fits: 2 GiB memory, 0.5 cores".
TEST_F(ReconcilerTest, AdmitReasonUsesTheFormatter) {
  Sync(1, {Job("a", 2)});
  Pass();
  absl::StatusOr<std::vector<Decision>> log = store_.DecisionsForJob("a");
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_FALSE(log->empty());
  EXPECT_EQ(HumanTextProblem((*log)[0].reason, "a"), "");
  EXPECT_THAT((*log)[0].reason, ::testing::StartsWith("fits: 2 GiB memory, "));
  EXPECT_THAT((*log)[0].reason, ::testing::EndsWith(" cores"));
}

TEST_F(ReconcilerTest, MaxDurationStopsTheJobAsTimedOut) {
  v1::JobSpec j = Job("slow", 1);
  j.mutable_max_duration()->set_seconds(60);
  Sync(1, {j});
  Pass();
  ASSERT_EQ(Get("slow").state(), v1::JOB_STATE_RUNNING);
  clock_.Advance(absl::Seconds(30));
  EXPECT_EQ(Pass().stop_requests, 0);
  clock_.Advance(absl::Seconds(31));
  EXPECT_EQ(Pass().stop_requests, 1);
  Pass();
  v1::Job slow = Get("slow");
  EXPECT_EQ(slow.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(slow.failure_cause(), v1::FAILURE_CAUSE_TIMED_OUT);
  absl::StatusOr<std::vector<Decision>> audit = store_.DecisionsForJob("slow");
  ASSERT_TRUE(audit.ok());
  ASSERT_EQ(audit->size(), 2u);
  EXPECT_EQ((*audit)[0].kind, DecisionKind::kAdmit);
  EXPECT_EQ((*audit)[1].kind, DecisionKind::kTimeout);
}

TEST_F(ReconcilerTest, DependencyFailurePropagatesThroughTheChain) {
  v1::JobSpec b = Job("b", 1);
  b.add_depends_on("a");
  v1::JobSpec c = Job("c", 1);
  c.add_depends_on("b");
  Sync(1, {Job("a", 1), b, c});
  Pass();
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Get("b").state(), v1::JOB_STATE_QUEUED);
  ASSERT_TRUE(runtime_.Exit("a", 1).ok());
  for (int i = 0; i < 3; ++i) Pass();
  EXPECT_EQ(Get("b").state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(Get("b").failure_cause(), v1::FAILURE_CAUSE_DEPENDENCY_FAILED);
  EXPECT_EQ(Get("c").state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(Get("c").failure_cause(), v1::FAILURE_CAUSE_DEPENDENCY_FAILED);
  EXPECT_EQ(runtime_.creates(), 1);
}

TEST_F(ReconcilerTest, DependencySuccessReleasesTheDependant) {
  v1::JobSpec b = Job("b", 1);
  b.add_depends_on("a");
  Sync(1, {Job("a", 1), b});
  Pass();
  ASSERT_TRUE(runtime_.Exit("a", 0).ok());
  Pass();
  EXPECT_EQ(Get("b").state(), v1::JOB_STATE_RUNNING);
}

TEST_F(ReconcilerTest, RecoveryStartsAdoptsFinalisesAndStopsOrphans) {
  Sync(1, {Job("admitted-no-container", 1), Job("admitted-running", 1),
           Job("running-vanished", 1)});
  // Simulate a previous berthd that crashed at various points.
  absl::StatusOr<std::vector<Decision>> d = store_.RecordDecisions(
      {DecisionRequest{"admitted-no-container", DecisionKind::kAdmit,
                       v1::JOB_STATE_QUEUED, "test", 1, {}},
       DecisionRequest{"admitted-running", DecisionKind::kAdmit,
                       v1::JOB_STATE_QUEUED, "test", 1, {}},
       DecisionRequest{"running-vanished", DecisionKind::kAdmit,
                       v1::JOB_STATE_QUEUED, "test", 1, {}}},
      clock_.Now());
  ASSERT_TRUE(d.ok()) << d.status();
  ContainerSpec spec;
  spec.image = "berth-test/busybox:1";
  spec.cpu_millis = 500;
  spec.memory_bytes = kGiB;
  spec.job_id = "admitted-running";  // crashed after start, before RUNNING
  ASSERT_TRUE(runtime_.Start(spec).ok());
  spec.job_id = "running-vanished";
  ASSERT_TRUE(runtime_.Start(spec).ok());
  TransitionRequest t;
  t.job_id = "running-vanished";
  t.expected_state = v1::JOB_STATE_ADMITTED;
  t.new_state = v1::JOB_STATE_RUNNING;
  ASSERT_TRUE(store_.Transition(t, clock_.Now()).ok());
  runtime_.Vanish("running-vanished");
  spec.job_id = "orphan";  // a container of a job Berth never knew
  ASSERT_TRUE(runtime_.Start(spec).ok());
  const int creates_before = runtime_.creates();

  PassStats s = Pass();
  EXPECT_EQ(s.adopted, 1);
  EXPECT_EQ(s.orphans_stopped, 1);
  EXPECT_EQ(Get("admitted-no-container").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Get("admitted-running").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Get("running-vanished").state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(Get("running-vanished").failure_cause(), v1::FAILURE_CAUSE_LOST);
  // Exactly one new container: the one that had none. Nothing started twice.
  EXPECT_EQ(runtime_.creates(), creates_before + 1);
  absl::StatusOr<ContainerList> list = runtime_.List();
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->count("orphan"), 0u);
  // Reported to watchers: exactly one ORPHAN_STOPPED event, for "orphan".
  absl::StatusOr<EventPage> events = store_.ReadEvents(0, 10000);
  ASSERT_TRUE(events.ok()) << events.status();
  std::vector<v1::Event> orphans;
  for (const v1::Event& e : events->events) {
    if (e.type() == v1::EVENT_TYPE_ORPHAN_STOPPED) orphans.push_back(e);
  }
  ASSERT_EQ(orphans.size(), 1u);
  EXPECT_EQ(orphans[0].job_id(), "orphan");
  EXPECT_FALSE(orphans[0].container().empty());
  EXPECT_FALSE(store_.HasJob("orphan"));  // no job was made up for it
  // The next pass finds nothing left to stop and reports nothing more.
  EXPECT_EQ(Pass().orphans_stopped, 0);
}

TEST_F(ReconcilerTest, RequeueReturnsJobToQueueNotFailed) {
  Sync(1, {Job("a", 1)});
  Pass();
  ASSERT_TRUE(store_.SetPaused(true, "drain", clock_.Now()).ok());
  absl::StatusOr<std::vector<Decision>> d = store_.RecordDecisions(
      {DecisionRequest{"a", DecisionKind::kRequeue, v1::JOB_STATE_RUNNING, "drain", 1, {}}},
      clock_.Now());
  ASSERT_TRUE(d.ok()) << d.status();
  runtime_.set_stop_exit_code(137);
  Pass();
  Pass();
  v1::Job a = Get("a");
  EXPECT_EQ(a.state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(a.requeue_count(), 1);
  // Resumed: it runs again in a new container of the same name.
  ASSERT_TRUE(store_.SetPaused(false, "", clock_.Now()).ok());
  Pass();
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(runtime_.creates(), 2);
}

TEST_F(ReconcilerTest, BudgetCutStopsAdmissionButKillsNothing) {
  Sync(1, {Job("a", 8), Job("b", 6), Job("c", 1)});
  Pass();
  ASSERT_EQ(Get("c").state(), v1::JOB_STATE_RUNNING);
  ASSERT_TRUE(store_.SetBudgets(Budgets(4), clock_.Now()).ok());
  Sync(2, {Job("a", 8), Job("b", 6), Job("c", 1), Job("d", 1)});
  Pass();
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Get("b").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Get("d").state(), v1::JOB_STATE_QUEUED);
}

TEST_F(ReconcilerTest, ATickThatChangedNothingDoesNotReplan) {
  Sync(1, {Job("a", 8), Job("b", 12)});
  EXPECT_TRUE(Pass().planned);
  // The pass's own admissions and starts were events: one more plan sees them.
  EXPECT_TRUE(Pass().planned);
  clock_.Advance(absl::Seconds(2));
  EXPECT_FALSE(Pass().planned);  // nothing happened since: no replan
  EXPECT_FALSE(Pass().planned);
  ASSERT_TRUE(runtime_.Exit("a", 0).ok());
  PassStats s = Pass();  // a finished job is an event: replan, admit b
  EXPECT_TRUE(s.planned);
  EXPECT_EQ(Get("b").state(), v1::JOB_STATE_RUNNING);
}

TEST_F(ReconcilerTest, PlanCacheServesReadsWithoutReplanning) {
  Sync(1, {Job("a", 8), Job("b", 12)});
  Pass();  // offers its plan to the cache
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> p1 = plans_.Get();
  ASSERT_TRUE(p1.ok());
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> p2 = plans_.Get();
  ASSERT_TRUE(p2.ok());
  EXPECT_EQ(p1->get(), p2->get());
  const planner::Decision* b = (*p1)->Find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->reason, planner::Reason::kWaitingForMemory);
  EXPECT_EQ(b->needed - b->free, 4 * kGiB);
  // A new event makes the next read replan.
  Sync(2, {Job("a", 8)});
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> p3 = plans_.Get();
  ASSERT_TRUE(p3.ok());
  EXPECT_NE(p3->get(), p1->get());
  EXPECT_EQ((*p3)->Find("b"), nullptr);
}

}  // namespace
}  // namespace berth
