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
  ReadyPlans ready(cache);

  // No plan yet: the first page gets the latest plan and forecasts itself.
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

  // Await the background forecast (a condition, with a deadline).
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  std::shared_ptr<const PlanSnapshot> shown;
  while (absl::Now() < deadline) {
    shown = *ready.Get();
    if (shown == *newer) break;
    absl::SleepFor(absl::Milliseconds(2));
  }
  ASSERT_EQ(shown, *newer);
  EXPECT_TRUE(Complete(*shown));
  EXPECT_NE(shown->Find("d"), nullptr);
  EXPECT_GE(ready.completed(), 1);
  // Its ETAs are the plan's own table, shared with GetPlan: one forecast.
  EXPECT_EQ(shown->estimates_if_computed(), &(*newer)->estimates());
}

// Destroyed while nothing is pending, and with a forecast still queued:
// the thread stops either way (no hang, no use after free).
TEST(ReadyPlansTest, StopsCleanly) {
  MemoryStore store;
  SimulatedClock clock;
  Sync(store, 1, {testing::TestJob("a", 3), testing::TestJob("b", 3)}, clock.Now());
  PlanCache cache(store, clock, testing::TestBudgets(4), planner::Policy());
  {
    ReadyPlans ready(cache);
    ASSERT_TRUE(ready.Get().ok());
  }
  {
    ReadyPlans ready(cache);
    (*ready.Get())->estimates().Complete();
    Sync(store, 2, {testing::TestJob("a", 3), testing::TestJob("c", 3)}, clock.Now());
    ASSERT_TRUE(cache.Refresh().ok());
    ASSERT_TRUE(ready.Get().ok());  // schedules the new plan's forecast
  }
}

}  // namespace
}  // namespace berth::web
