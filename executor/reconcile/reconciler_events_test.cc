// The reconciler finalising jobs from the engine's "die"/"oom" events before
// its bulk list has caught up, on fakes: MemoryStore, FakeRuntime
// (whose list can lag behind its events, as Docker's does), SimulatedClock.
// The same flow runs against real Docker in
// executor/runtime/docker/docker_runtime_exit_test.cc and tests/.
#include <memory>
#include <string>

#include "executor/reconcile/reconciler.h"
#include "executor/reconcile/testing/reconciler_fixture.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using ::berth::testing::Job;

class ReconcilerEventsTest : public ::berth::testing::ReconcilerTest {
 protected:
  // Feeds the fake's events to the reconciler, as berthd does.
  void Subscribe() {
    sub_ = runtime_.SubscribeEvents(
        [this](const RuntimeEvent& e) { reconciler_.OnRuntimeEvent(e); });
  }
  std::unique_ptr<EventSubscription> sub_;
};

TEST_F(ReconcilerEventsTest, ADieEventFinalisesBeforeTheListCatchesUp) {
  Subscribe();
  Sync(1, {Job("a", 8), Job("b", 8), Job("c", 8)});
  Pass();
  ASSERT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  ASSERT_EQ(Get("c").state(), v1::JOB_STATE_QUEUED);
  runtime_.set_list_lags(true);
  runtime_.AppendLog("a", "done\n");
  ASSERT_TRUE(runtime_.Exit("a", 3).ok());
  PassStats s = Pass();
  EXPECT_EQ(s.finalised, 1);
  v1::Job a = Get("a");
  EXPECT_EQ(a.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(a.failure_cause(), v1::FAILURE_CAUSE_NONZERO_EXIT);
  EXPECT_EQ(a.exit_code(), 3);
  EXPECT_EQ(a.logs_tail(), "done\n");
  // Its capacity went to c in the same pass.
  EXPECT_EQ(Get("c").state(), v1::JOB_STATE_RUNNING);
}

TEST_F(ReconcilerEventsTest, WithoutTheEventALaggingListHidesTheExit) {
  // No subscription: the pass sees only the list, which still says running.
  Sync(1, {Job("a", 8)});
  Pass();
  runtime_.set_list_lags(true);
  ASSERT_TRUE(runtime_.Exit("a", 0).ok());
  EXPECT_EQ(Pass().finalised, 0);
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  // The list catches up: the tick finalises it (the safety net).
  runtime_.set_list_lags(false);
  EXPECT_EQ(Pass().finalised, 1);
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_SUCCEEDED);
}

TEST_F(ReconcilerEventsTest, TheEventDecidesWhenInspectLagsToo) {
  Subscribe();
  Sync(1, {Job("ok", 2), Job("oom", 2), Job("cancelme", 2)});
  Pass();
  runtime_.set_list_lags(true);
  runtime_.set_inspect_lags(true);
  ASSERT_TRUE(runtime_.Exit("ok", 0).ok());
  ASSERT_TRUE(runtime_.OomKill("oom").ok());
  runtime_.set_stop_exit_code(137);
  Sync(2, {Job("ok", 2), Job("oom", 2)});  // cancelme absent: cancel it
  PassStats s = Pass();                    // finalises ok and oom; stops cancelme
  EXPECT_EQ(s.finalised, 2);
  EXPECT_EQ(Pass().finalised, 1);          // cancelme's die event
  EXPECT_EQ(Get("ok").state(), v1::JOB_STATE_SUCCEEDED);
  v1::Job oom = Get("oom");
  EXPECT_EQ(oom.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(oom.failure_cause(), v1::FAILURE_CAUSE_OOM_KILLED);
  // 137 after Berth's own stop is the cancel, not an OOM.
  v1::Job cancelled = Get("cancelme");
  EXPECT_EQ(cancelled.state(), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(cancelled.exit_code(), 137);
}

TEST_F(ReconcilerEventsTest, AnOldContainersEventNeverEndsTheNextOne) {
  Sync(1, {Job("a", 2)});
  Pass();
  const std::string first = Get("a").container_id();
  RuntimeEvent stale{"a", "die"};
  stale.container_id = "some-earlier-container";
  stale.exit_code = 1;
  EXPECT_TRUE(reconciler_.OnRuntimeEvent(stale));
  EXPECT_EQ(Pass().finalised, 0);
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Get("a").container_id(), first);
}

TEST_F(ReconcilerEventsTest, ExitsAreRecordedOnceWhateverTheOrder) {
  Subscribe();
  Sync(1, {Job("a", 2)});
  Pass();
  runtime_.set_list_lags(true);
  ASSERT_TRUE(runtime_.Exit("a", 0).ok());
  EXPECT_EQ(Pass().finalised, 1);
  const uint64_t revision = Get("a").revision();
  // The list catches up with a container already removed; a repeated event
  // changes nothing either.
  runtime_.set_list_lags(false);
  RuntimeEvent again{"a", "die"};
  again.exit_code = 0;
  reconciler_.OnRuntimeEvent(again);
  EXPECT_EQ(Pass().finalised, 0);
  EXPECT_EQ(Get("a").revision(), revision);
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_SUCCEEDED);
}

}  // namespace
}  // namespace berth
