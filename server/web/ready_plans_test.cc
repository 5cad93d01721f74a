// ReadyPlans: pages get a plan whose forecast is complete, never wait for
// one, and a newer plan's forecast is completed off the request path.
#include "server/web/ready_plans.h"

#include "absl/time/clock.h"
#include "executor/reconcile/testing/test_jobs.h"
#include "executor/store/memory_store.h"
#include "gtest/gtest.h"
#include "planner/base/simulated_clock.h"

namespace berth::web {
namespace {

void Sync(Store& store, uint64_t generation, std::vector<v1::JobSpec> jobs, absl::Time now) {
  SnapshotRequest r;
  r.generation = generation;
  r.jobs = std::move(jobs);
  ASSERT_TRUE(store.ApplySnapshot(r, now).ok());
}

bool Complete(const PlanSnapshot& s) {
  return s.estimates_if_computed() != nullptr && s.estimates_if_computed()->complete();
}

TEST(ReadyPlansTest, PagesGetTheNewestPlanWhoseForecastIsComplete) {
  MemoryStore store;
  SimulatedClock clock;
  // 4 GiB: one 3 GiB job at a time, so the others have forecast starts.
  Sync(store, 1, {testing::TestJob("a", 3, 2), testing::TestJob("b", 3, 1),
                  testing::TestJob("c", 3)}, clock.Now());
  PlanCache cache(store, clock, testing::TestBudgets(4), planner::Policy());
  // No time for the forecast in the request: one forecast plan, then the
  // background (as a 100k queue is with the default 50 ms).
  ReadyPlans ready(cache, absl::ZeroDuration());

  // The first page gets the latest plan and forecasts itself.
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> first = ready.Get();
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(Complete(**first));
  (*first)->estimates().Complete();  // what the page's reads amount to
  EXPECT_EQ(ready.Get()->get(), first->get());

  // A newer plan, not yet forecast: pages get the older, complete one at
  // once (never waiting), and the newer one is completed in the background.
  Sync(store, 2, {testing::TestJob("a", 3, 2), testing::TestJob("b", 3, 1),
                  testing::TestJob("c", 3), testing::TestJob("d", 3)}, clock.Now());
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> newer = cache.Refresh();
  ASSERT_TRUE(newer.ok());
  ASSERT_GT((*newer)->revision, (*first)->revision);
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> during = ready.Get();
  ASSERT_TRUE(during.ok());
  EXPECT_EQ(during->get(), first->get());
  EXPECT_EQ((*during)->Find("d"), nullptr);

  // Await the background forecast (a condition, with a deadline): the
  // thread completes the table, then counts it; a Get() in between may
  // already show the plan, so await both.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  std::shared_ptr<const PlanSnapshot> shown;
  while (absl::Now() < deadline) {
    shown = *ready.Get();
    if (shown == *newer && ready.completed() >= 1) break;
    absl::SleepFor(absl::Milliseconds(2));
  }
  ASSERT_EQ(shown, *newer);
  EXPECT_TRUE(Complete(*shown));
  EXPECT_NE(shown->Find("d"), nullptr);
  EXPECT_GE(ready.completed(), 1);
  // Its ETAs are the plan's own table, shared with GetPlan: one forecast.
  EXPECT_EQ(shown->estimates_if_computed(), &(*newer)->estimates());
}

// A forecast that fits the inline budget (any small queue) is completed in
// the request: the page shows the plan at the store's revision at once.
TEST(ReadyPlansTest, ASmallQueueIsShownFreshAtOnce) {
  MemoryStore store;
  SimulatedClock clock;
  Sync(store, 1, {testing::TestJob("a", 3, 2), testing::TestJob("b", 3)}, clock.Now());
  PlanCache cache(store, clock, testing::TestBudgets(4), planner::Policy());
  ReadyPlans ready(cache, absl::Seconds(30));
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> first = ready.Get();
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(Complete(**first));
  Sync(store, 2, {testing::TestJob("a", 3, 2), testing::TestJob("c", 3)}, clock.Now());
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> second = ready.Get();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ((*second)->revision, store.CurrentRevision());
  EXPECT_NE((*second)->Find("c"), nullptr);
  EXPECT_TRUE(Complete(**second));
  EXPECT_EQ(ready.completed(), 0);  // nothing left for the background
}

// Destroyed while nothing is pending, and with a forecast still queued:
// the thread stops either way (no hang, no use after free).
TEST(ReadyPlansTest, StopsCleanly) {
  MemoryStore store;
  SimulatedClock clock;
  Sync(store, 1, {testing::TestJob("a", 3), testing::TestJob("b", 3)}, clock.Now());
  PlanCache cache(store, clock, testing::TestBudgets(4), planner::Policy());
  {
    ReadyPlans ready(cache, absl::ZeroDuration());
    ASSERT_TRUE(ready.Get().ok());
  }
  {
    ReadyPlans ready(cache, absl::ZeroDuration());
    (*ready.Get())->estimates().Complete();
    Sync(store, 2, {testing::TestJob("a", 3), testing::TestJob("c", 3)}, clock.Now());
    ASSERT_TRUE(cache.Refresh().ok());
    ASSERT_TRUE(ready.Get().ok());  // schedules the new plan's forecast
  }
}

}  // namespace
}  // namespace berth::web
