#include "planner/timeline/timeline.h"

#include "gtest/gtest.h"

namespace berth::planner {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'000'000);

Amounts Free(int64_t mem, int64_t cpu, int64_t workers) {
  return Amounts{mem, cpu, workers, Amounts::kUnlimited, Amounts::kUnlimited};
}

TEST(TimelineTest, FitsNowReturnsNow) {
  Timeline t;
  t.AddRelease(kNow + absl::Hours(1), 10, 10, 0, 0);
  EXPECT_EQ(t.EarliestFit(kNow, Free(5, 5, 1), {5, 5, 1, 1, 1}, 0, 0), kNow);
}

TEST(TimelineTest, WaitsForEnoughReleasesInTimeOrder) {
  Timeline t;
  // Added out of order on purpose.
  t.AddRelease(kNow + absl::Hours(3), 8, 1, 0, 0);
  t.AddRelease(kNow + absl::Hours(1), 2, 1, 0, 0);
  t.AddRelease(kNow + absl::Hours(2), 2, 1, 0, 0);
  const Amounts free = Free(1, 100, 0);
  EXPECT_EQ(t.EarliestFit(kNow, free, {3, 1, 1, 1, 1}, 0, 0), kNow + absl::Hours(1));
  EXPECT_EQ(t.EarliestFit(kNow, free, {5, 1, 1, 1, 1}, 0, 0), kNow + absl::Hours(2));
  EXPECT_EQ(t.EarliestFit(kNow, free, {13, 1, 1, 1, 1}, 0, 0), kNow + absl::Hours(3));
  EXPECT_EQ(t.EarliestFit(kNow, free, {14, 1, 1, 1, 1}, 0, 0), absl::InfiniteFuture());
}

TEST(TimelineTest, SimultaneousReleasesApplyTogether) {
  Timeline t;
  t.AddRelease(kNow + absl::Hours(1), 2, 0, 0, 0);
  t.AddRelease(kNow + absl::Hours(1), 2, 0, 0, 0);
  EXPECT_EQ(t.EarliestFit(kNow, Free(0, 0, 0), {4, 0, 2, 1, 1}, 0, 0),
            kNow + absl::Hours(1));
}

TEST(TimelineTest, PoolAndWorkspaceSlotsCountOnlyTheirOwnReleases) {
  Timeline t;
  t.AddRelease(kNow + absl::Hours(1), 0, 0, /*pool=*/1, /*workspace=*/7);
  t.AddRelease(kNow + absl::Hours(2), 0, 0, /*pool=*/2, /*workspace=*/7);
  Amounts free = Free(0, 0, 5);
  free.pool_slots = 0;
  free.workspace_slots = 0;
  const Amounts need{0, 0, 1, 1, 1};
  EXPECT_EQ(t.EarliestFit(kNow, free, need, 2, 7), kNow + absl::Hours(2));
  EXPECT_EQ(t.EarliestFit(kNow, free, need, 1, 7), kNow + absl::Hours(1));
  EXPECT_EQ(t.EarliestFit(kNow, free, need, 1, 8), absl::InfiniteFuture());
  const Amounts at = t.FreeAt(kNow + absl::Hours(2), free, 2, 7);
  EXPECT_EQ(at.worker_slots, 7);
  EXPECT_EQ(at.pool_slots, 1);
  EXPECT_EQ(at.workspace_slots, 2);
}

TEST(TimelineTest, ReleasesInThePastCountFromNow) {
  Timeline t;
  t.AddRelease(kNow - absl::Hours(1), 4, 0, 0, 0);
  EXPECT_EQ(t.EarliestFit(kNow, Free(0, 0, 0), {4, 0, 1, 1, 1}, 0, 0), kNow);
}

TEST(TimelineTest, SaturatesInsteadOfOverflowing) {
  Timeline t;
  t.AddRelease(kNow + absl::Hours(1), INT64_MAX, INT64_MAX, 0, 0);
  t.AddRelease(kNow + absl::Hours(1), INT64_MAX, -5, 0, 0);
  const Amounts at = t.FreeAt(kNow + absl::Hours(1), Free(INT64_MAX, 0, 0), 0, 0);
  EXPECT_EQ(at.memory_bytes, INT64_MAX);
  EXPECT_EQ(at.cpu_millis, INT64_MAX);
}

}  // namespace
}  // namespace berth::planner
