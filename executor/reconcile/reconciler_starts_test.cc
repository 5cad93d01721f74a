// Starts off the pass: with background_starts, a pass never waits
// for the engine to start a container, and everything the synchronous
// starts guaranteed still holds: ADMITTED is persisted before create, a job
// is started once, at most start_parallelism starts run at once. On fakes;
// the real-Docker flow is tests/berthd_e2e_test.cc.
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "executor/reconcile/reconciler.h"
#include "executor/reconcile/testing/reconciler_fixture.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using ::berth::testing::Job;

class ReconcilerStartsTest : public ::berth::testing::ReconcilerTest {
 protected:
  ReconcilerOptions Background() {
    ReconcilerOptions o;
    o.background_starts = true;
    o.start_parallelism = 2;
    o.on_start_latency = [this](absl::Duration d, int starts) {
      absl::MutexLock l(&latency_mu_);
      start_latencies_.push_back(d);
      start_levels_.push_back(starts);
    };
    o.on_finish_latency = [this](absl::Duration d) {
      absl::MutexLock l(&latency_mu_);
      finish_latencies_.push_back(d);
    };
    return o;
  }
  ~ReconcilerStartsTest() override {
    runtime_.UnblockStarts();
    bg_.StopStarts();
  }
  PassStats BgPass() {
    absl::StatusOr<PassStats> stats = bg_.RunPass();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? *stats : PassStats();
  }
  absl::Mutex latency_mu_;
  std::vector<absl::Duration> start_latencies_ ABSL_GUARDED_BY(latency_mu_);
  std::vector<int> start_levels_ ABSL_GUARDED_BY(latency_mu_);
  std::vector<absl::Duration> finish_latencies_ ABSL_GUARDED_BY(latency_mu_);
  Reconciler bg_{store_, faulty_, clock_, plans_, Background()};
};

TEST_F(ReconcilerStartsTest, ASlowStartDoesNotBlockAPass) {
  Sync(1, {Job("early", 4)});
  int started = BgPass().started;  // 1 if the start beat the pass's end
  bg_.AwaitStarts();
  ASSERT_EQ(Get("early").state(), v1::JOB_STATE_RUNNING);
  started += BgPass().started;
  EXPECT_EQ(started, 1) << "a pass counts the starts finished since the last";

  runtime_.BlockStarts();  // Docker takes its time from now on
  Sync(2, {Job("early", 4), Job("a", 4), Job("b", 4)});
  PassStats s = BgPass();  // returns although both starts hang
  EXPECT_EQ(s.admitted, 2);
  EXPECT_EQ(s.started, 0);
  ASSERT_TRUE(runtime_.AwaitStartsWaiting(2, absl::Seconds(10)));
  // Durable before create: both are ADMITTED while their creates hang.
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_ADMITTED);
  EXPECT_EQ(Get("b").state(), v1::JOB_STATE_ADMITTED);

  // An exit and a snapshot arriving meanwhile are planned at once.
  ASSERT_TRUE(runtime_.Exit("early", 0).ok());
  Sync(3, {Job("early", 4), Job("a", 4), Job("b", 4), Job("c", 4)});
  s = BgPass();
  EXPECT_EQ(s.finalised, 1);
  EXPECT_EQ(s.admitted, 1);
  EXPECT_EQ(Get("early").state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(Get("c").state(), v1::JOB_STATE_ADMITTED);
  // More passes while the starts hang start nothing a second time.
  BgPass();
  BgPass();

  runtime_.UnblockStarts();
  bg_.AwaitStarts();
  s = BgPass();
  EXPECT_EQ(s.started, 3);
  for (const char* id : {"a", "b", "c"}) {
    EXPECT_EQ(Get(id).state(), v1::JOB_STATE_RUNNING) << id;
  }
  EXPECT_EQ(runtime_.creates(), 4);
  EXPECT_EQ(runtime_.Counters()["create"].calls, 4) << "each job started once";
}

TEST_F(ReconcilerStartsTest, ParallelismBoundsStartsInFlight) {
  runtime_.BlockStarts();
  Sync(1, {Job("a", 2), Job("b", 2), Job("c", 2), Job("d", 2), Job("e", 2)});
  EXPECT_EQ(BgPass().admitted, 5);
  ASSERT_TRUE(runtime_.AwaitStartsWaiting(2, absl::Seconds(10)));
  BgPass();  // the queued three are not submitted twice
  EXPECT_EQ(runtime_.starts_waiting(), 2) << "start_parallelism = 2";
  runtime_.UnblockStarts();
  bg_.AwaitStarts();
  EXPECT_EQ(runtime_.creates(), 5);
  EXPECT_EQ(BgPass().started, 5);
}

TEST_F(ReconcilerStartsTest, ACancelDuringTheStartStopsTheJobAfterIt) {
  runtime_.BlockStarts();
  Sync(1, {Job("a", 2), Job("keep", 2)});
  BgPass();
  ASSERT_TRUE(runtime_.AwaitStartsWaiting(2, absl::Seconds(10)));
  Sync(2, {Job("keep", 2)});  // a withdrawn while its create hangs
  PassStats s = BgPass();
  EXPECT_EQ(s.stop_requests, 0) << "its start is in flight: left alone";
  runtime_.UnblockStarts();
  bg_.AwaitStarts();
  BgPass();  // stops a (its container now exists)
  BgPass();  // finalises it
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(Get("keep").state(), v1::JOB_STATE_RUNNING);
}

TEST_F(ReconcilerStartsTest, EachFinishedStartAsksForAPass) {
  int wakeups = 0;
  absl::Mutex mu;
  bg_.set_on_start_done([&] {
    absl::MutexLock l(&mu);
    ++wakeups;
  });
  Sync(1, {Job("a", 2), Job("b", 2)});
  BgPass();
  bg_.AwaitStarts();
  bg_.set_on_start_done(nullptr);  // returns once no callback runs
  absl::MutexLock l(&mu);
  EXPECT_EQ(wakeups, 2);
}

// The latencies berth-plan's simulation models: admission to RUNNING
// recorded, and the container's end (engine clock) to its outcome recorded.
TEST_F(ReconcilerStartsTest, StartAndFinishLatenciesAreReported) {
  runtime_.BlockStarts();
  Sync(1, {Job("a", 2)});
  BgPass();  // admitted now
  ASSERT_TRUE(runtime_.AwaitStartsWaiting(1, absl::Seconds(10)));
  clock_.Advance(absl::Seconds(3));  // Docker takes 3 s to start it
  runtime_.UnblockStarts();
  bg_.AwaitStarts();
  runtime_.set_now(clock_.Now() + absl::Seconds(10));
  ASSERT_TRUE(runtime_.Exit("a", 0).ok());
  clock_.Advance(absl::Seconds(10) + absl::Milliseconds(400));
  EXPECT_EQ(BgPass().finalised, 1);
  absl::MutexLock l(&latency_mu_);
  EXPECT_EQ(start_latencies_, std::vector<absl::Duration>{absl::Seconds(3)});
  EXPECT_EQ(start_levels_, std::vector<int>{1});
  EXPECT_EQ(finish_latencies_, std::vector<absl::Duration>{absl::Milliseconds(400)});
}

// Each start reports how many starts were in flight with it: all of a
// pass's starts count each other, at most start_parallelism (2 here).
TEST_F(ReconcilerStartsTest, StartsReportHowManyRanTogether) {
  runtime_.BlockStarts();
  Sync(1, {Job("a", 1), Job("b", 1), Job("c", 1)});
  BgPass();
  ASSERT_TRUE(runtime_.AwaitStartsWaiting(2, absl::Seconds(10)));
  runtime_.UnblockStarts();
  bg_.AwaitStarts();
  {
    absl::MutexLock l(&latency_mu_);
    EXPECT_EQ(start_levels_, (std::vector<int>{2, 2, 2}));
    start_levels_.clear();
  }
  Sync(2, {Job("a", 1), Job("b", 1), Job("c", 1), Job("d", 1)});
  BgPass();
  bg_.AwaitStarts();
  absl::MutexLock l(&latency_mu_);
  EXPECT_EQ(start_levels_, std::vector<int>{1});
}

}  // namespace
}  // namespace berth
