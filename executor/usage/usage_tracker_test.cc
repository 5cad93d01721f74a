#include "executor/usage/usage_tracker.h"

#include "gtest/gtest.h"

namespace berth {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

TEST(UsageTrackerTest, KeepsTheLargestMemoryAndTheLatestCpu) {
  UsageTracker t;
  EXPECT_FALSE(t.Get("a", kT0, kT0).has_value());
  // cgroup v2 without memory.peak: the peak is the largest sampled value.
  t.Record({{"a", UsageSample{100, 0, absl::Seconds(1)}}});
  t.Record({{"a", UsageSample{300, 0, absl::Seconds(2)}}});
  t.Record({{"a", UsageSample{200, 0, absl::Seconds(3)}}});
  std::optional<v1::ResourceUsage> u = t.Get("a", kT0, kT0 + absl::Seconds(90));
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->peak_memory_bytes(), 300);
  EXPECT_DOUBLE_EQ(u->cpu_seconds(), 3);
  EXPECT_DOUBLE_EQ(u->run_seconds(), 90);
  EXPECT_EQ(u->samples(), 3);
  EXPECT_FALSE(u->peak_exact());
}

TEST(UsageTrackerTest, KernelPeakWinsAndJobsAreIndependent) {
  UsageTracker t;
  t.Record({{"a", UsageSample{10, 500, absl::Seconds(1)}},
            {"b", UsageSample{7, 8, absl::Seconds(4)}}});
  t.Record({{"a", UsageSample{20, 400, absl::Seconds(2)}}});  // b not sampled
  std::optional<v1::ResourceUsage> a = t.Get("a", std::nullopt, kT0);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->peak_memory_bytes(), 500);
  EXPECT_TRUE(a->peak_exact());
  EXPECT_DOUBLE_EQ(a->run_seconds(), 0);  // start unknown
  std::optional<v1::ResourceUsage> b = t.Get("b", kT0, kT0);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->peak_memory_bytes(), 8);
  EXPECT_EQ(b->samples(), 1);
  t.Forget("a");
  EXPECT_FALSE(t.Get("a", kT0, kT0).has_value());
  EXPECT_EQ(t.size(), 1u);
}

TEST(UsageTrackerTest, RetainDropsJobsWithoutAContainer) {
  UsageTracker t;
  t.Record({{"a", UsageSample{1, 1, absl::Seconds(1)}},
            {"orphan", UsageSample{1, 1, absl::Seconds(1)}}});
  ContainerList list;
  list["a"] = ContainerSummary{"a", "c-a", ContainerState::kExited};
  t.Retain(list);
  EXPECT_EQ(t.size(), 1u);
  EXPECT_TRUE(t.Get("a", kT0, kT0).has_value());
  EXPECT_FALSE(t.Get("orphan", kT0, kT0).has_value());
}

TEST(UsageTrackerTest, RunTimeOnlyHasNoMemory) {
  v1::ResourceUsage u = RunTimeOnly(kT0, kT0 + absl::Minutes(2));
  EXPECT_DOUBLE_EQ(u.run_seconds(), 120);
  EXPECT_EQ(u.samples(), 0);
  EXPECT_DOUBLE_EQ(RunTimeOnly(kT0 + absl::Seconds(1), kT0).run_seconds(), 0);
}

TEST(UsageTrackerTest, AnOomKillFloorsThePeakAtTheLimit) {
  v1::ResourceUsage u;
  u.set_peak_memory_bytes(10 << 20);
  FloorPeakAtOomLimit(int64_t{32} << 20, u);
  EXPECT_EQ(u.peak_memory_bytes(), int64_t{32} << 20);
  EXPECT_TRUE(u.peak_exact());
  // A kernel peak above the limit (page cache reclaimed late) is kept.
  u.set_peak_memory_bytes(int64_t{33} << 20);
  u.set_peak_exact(false);
  FloorPeakAtOomLimit(int64_t{32} << 20, u);
  EXPECT_EQ(u.peak_memory_bytes(), int64_t{33} << 20);
  EXPECT_FALSE(u.peak_exact());
}

}  // namespace
}  // namespace berth
