// Observed usage through the reconciler, on fakes: one usage
// sweep per pass, the run's figures on its final transition and event, and
// the job's promise (its reservation) untouched while it runs.
#include <string>

#include "executor/reconcile/reconciler.h"
#include "executor/reconcile/testing/reconciler_fixture.h"
#include "executor/usage/usage_tracker.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using ::berth::testing::Job;
using ::berth::testing::kGiB;

class ReconcilerUsageTest : public ::berth::testing::ReconcilerTest {
 protected:
  ReconcilerUsageTest()
      : tracked_(store_, faulty_, clock_, plans_, [this] {
          ReconcilerOptions o;
          o.usage = &usage_;
          return o;
        }()) {}

  PassStats TrackedPass() {
    absl::StatusOr<PassStats> stats = tracked_.RunPass();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? *stats : PassStats();
  }

  // The event that set the job's current revision.
  v1::Event LastEventOf(const std::string& id) {
    const uint64_t rev = Get(id).revision();
    absl::StatusOr<EventPage> page = store_.ReadEvents(rev - 1, 1);
    EXPECT_TRUE(page.ok() && page->events.size() == 1u) << page.status();
    return page.ok() && !page->events.empty() ? page->events[0] : v1::Event();
  }

  UsageTracker usage_;
  Reconciler tracked_;
};

TEST_F(ReconcilerUsageTest, ARunEndedBeforeItsFirstSampleStaysOutOfTheHistory) {
  // "quick" ends before any sweep saw it (its cgroup is gone with it): run
  // time only, samples 0. "slow" is sampled once. Only "slow" is history.
  Sync(1, {Job("quick", 1), Job("slow", 1)});
  runtime_.set_now(clock_.Now());
  TrackedPass();
  ASSERT_EQ(Get("quick").state(), v1::JOB_STATE_RUNNING);
  runtime_.set_usage("slow", UsageSample{kGiB / 4, kGiB / 2, absl::Seconds(1)});
  ASSERT_TRUE(runtime_.Exit("quick", 0).ok());
  clock_.Advance(absl::Seconds(2));
  TrackedPass();
  const v1::Job quick = Get("quick");
  ASSERT_EQ(quick.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(quick.observed().samples(), 0);
  EXPECT_EQ(quick.observed().peak_memory_bytes(), 0);
  runtime_.set_now(clock_.Now());
  ASSERT_TRUE(runtime_.Exit("slow", 0).ok());
  TrackedPass();
  ASSERT_GT(Get("slow").observed().samples(), 0);
  absl::StatusOr<UsageHistory> h = store_.UsageHistoryOf("ws", "");
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->runs.size(), 1u);
  EXPECT_EQ(h->runs[0].peak_memory_bytes, kGiB / 2);
}

TEST_F(ReconcilerUsageTest, RunsUsageIsSampledEachPassAndRecordedWhenItEnds) {
  Sync(1, {Job("a", 8)});
  runtime_.set_now(clock_.Now());
  TrackedPass();
  ASSERT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  runtime_.set_usage("a", UsageSample{kGiB, 2 * kGiB, absl::Seconds(3)});
  const CallCounters before = runtime_.Counters();
  clock_.Advance(absl::Seconds(2));
  TrackedPass();
  // The sweep is no engine call: the pass still makes only its bulk list.
  EXPECT_EQ(TotalCalls(runtime_.Counters()) - TotalCalls(before), 1);
  runtime_.set_usage("a", UsageSample{kGiB / 2, 2 * kGiB, absl::Seconds(5)});
  clock_.Advance(absl::Seconds(2));
  TrackedPass();
  ASSERT_EQ(usage_.size(), 1u);
  // Learning never changes what a running job was promised.
  EXPECT_EQ(Get("a").spec().resources().memory_bytes(), 8 * kGiB);
  EXPECT_EQ(RunningMemory(), 8 * kGiB);

  clock_.Advance(absl::Seconds(6));
  runtime_.set_now(clock_.Now());
  ASSERT_TRUE(runtime_.Exit("a", 0).ok());
  // The kernel's mark at the exit: above what the samples saw.
  runtime_.set_exit_peak("a", 3 * kGiB);
  EXPECT_EQ(TrackedPass().finalised, 1);
  const v1::Job a = Get("a");
  ASSERT_EQ(a.state(), v1::JOB_STATE_SUCCEEDED);
  ASSERT_TRUE(a.has_observed());
  EXPECT_EQ(a.observed().peak_memory_bytes(), 3 * kGiB);
  EXPECT_TRUE(a.observed().peak_exact());
  EXPECT_DOUBLE_EQ(a.observed().cpu_seconds(), 5);
  EXPECT_EQ(a.observed().samples(), 2);
  EXPECT_DOUBLE_EQ(a.observed().run_seconds(), 10);  // the engine's start to exit
  const v1::Event e = LastEventOf("a");
  EXPECT_EQ(e.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(e.observed().peak_memory_bytes(), 3 * kGiB);
  EXPECT_EQ(usage_.size(), 0u) << "a finished run's figures are dropped";
}

TEST_F(ReconcilerUsageTest, RuntimeThatCannotObserveRecordsRunTimeOnly) {
  Sync(1, {Job("a", 4)});
  runtime_.set_now(clock_.Now());
  TrackedPass();
  clock_.Advance(absl::Seconds(30));
  runtime_.set_now(clock_.Now());
  ASSERT_TRUE(runtime_.OomKill("a").ok());
  TrackedPass();
  const v1::Job a = Get("a");
  ASSERT_EQ(a.failure_cause(), v1::FAILURE_CAUSE_OOM_KILLED);
  EXPECT_EQ(a.observed().samples(), 0);
  // Memory was not observed, but the kernel killed it at its 4 GiB limit.
  EXPECT_EQ(a.observed().peak_memory_bytes(), 4 * kGiB);
  EXPECT_DOUBLE_EQ(a.observed().run_seconds(), 30);
  EXPECT_DOUBLE_EQ(LastEventOf("a").observed().run_seconds(), 30);
}

TEST_F(ReconcilerUsageTest, JobsThatNeverRanHaveNoUsage) {
  Sync(1, {Job("a", 12), Job("b", 12)});  // 16 GiB: b waits
  runtime_.set_usage("a", UsageSample{kGiB, kGiB, absl::Seconds(1)});
  TrackedPass();
  TrackedPass();
  ASSERT_EQ(Get("b").state(), v1::JOB_STATE_QUEUED);
  EXPECT_FALSE(Get("b").has_observed());
  EXPECT_FALSE(Get("a").has_observed()) << "persisted only when the run ends";
}

TEST_F(ReconcilerUsageTest, AnOomKilledRunPeakedAtLeastAtItsLimit) {
  // The last sample saw 10 MiB; the kernel then killed the job at its 2 GiB
  // limit. "short" was killed before any sample: its peak is the limit too,
  // and it counts as a run of the history.
  Sync(1, {Job("a", 2), Job("short", 1)});
  runtime_.set_now(clock_.Now());
  TrackedPass();
  ASSERT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  runtime_.set_usage("a", UsageSample{10 << 20, 0, absl::Seconds(1)});
  ASSERT_TRUE(runtime_.OomKill("short").ok());
  clock_.Advance(absl::Seconds(2));
  TrackedPass();
  ASSERT_TRUE(runtime_.OomKill("a").ok());
  TrackedPass();
  for (const auto& [id, limit] : {std::pair<std::string, int64_t>{"a", 2 * kGiB},
                                  std::pair<std::string, int64_t>{"short", kGiB}}) {
    const v1::Job j = Get(id);
    ASSERT_EQ(j.failure_cause(), v1::FAILURE_CAUSE_OOM_KILLED) << id;
    EXPECT_EQ(j.observed().peak_memory_bytes(), limit) << id;
    EXPECT_TRUE(j.observed().peak_exact()) << id;
  }
  EXPECT_EQ(Get("a").observed().samples(), 1);
  absl::StatusOr<UsageHistory> h = store_.UsageHistoryOf("ws", "");
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->runs.size(), 2u);
}

}  // namespace
}  // namespace berth
