#include "executor/usage/usage_stats.h"

#include "gtest/gtest.h"

namespace berth {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;

UsageRun MakeRun(int64_t peak_mib, absl::Duration t, int64_t asked = 16 * kGiB,
             v1::FailureCause cause = v1::FAILURE_CAUSE_UNSPECIFIED) {
  UsageRun r;
  r.peak_memory_bytes = peak_mib * kMiB;
  r.run_time = t;
  r.asked_memory_bytes = asked;
  if (cause != v1::FAILURE_CAUSE_UNSPECIFIED) {
    r.state = v1::JOB_STATE_FAILED;
    r.failure_cause = cause;
  }
  return r;
}

TEST(UsageStatsTest, PercentilesAreNearestRankOverAllRuns) {
  UsageHistory h;
  for (int i = 1; i <= 20; ++i) h.runs.push_back(MakeRun(100 * i, absl::Minutes(i)));
  h.runs.push_back(MakeRun(50, absl::Minutes(1), 16 * kGiB, v1::FAILURE_CAUSE_NONZERO_EXIT));
  UsageStats s = Summarise(h);
  EXPECT_EQ(s.runs, 21);
  EXPECT_EQ(s.succeeded, 20);
  EXPECT_EQ(s.p50_peak_memory_bytes, 1000 * kMiB);
  EXPECT_EQ(s.p95_peak_memory_bytes, 1900 * kMiB);
  EXPECT_EQ(s.max_peak_memory_bytes, 2000 * kMiB);
  EXPECT_EQ(s.p95_run_time, absl::Minutes(19));
  // 2000 MiB + 25% = 2500 MiB, rounded up to 2560 MiB.
  EXPECT_EQ(s.suggested_memory_bytes, 2560 * kMiB);
  // 16 GiB reserved for 211 minutes in all.
  EXPECT_NEAR(s.reserved_gib_hours, 16.0 * 211 / 60, 1e-9);
  EXPECT_GT(s.wasted_gib_hours(), 0);
}

TEST(UsageStatsTest, FewRunsSuggestNothingAndOomLimitsRaiseTheSuggestion) {
  UsageHistory h;
  for (int i = 0; i < 4; ++i) h.runs.push_back(MakeRun(1024, absl::Minutes(10)));
  EXPECT_EQ(Summarise(h).suggested_memory_bytes, 0);
  h.runs.push_back(MakeRun(1024, absl::Minutes(10)));
  EXPECT_EQ(Summarise(h).suggested_memory_bytes, 1280 * kMiB);
  // A run OOM-killed at 2 GiB needed more than 2 GiB.
  h.runs.push_back(MakeRun(2048, absl::Minutes(1), 2 * kGiB, v1::FAILURE_CAUSE_OOM_KILLED));
  UsageStats s = Summarise(h);
  EXPECT_EQ(s.oom_killed, 1);
  EXPECT_EQ(s.suggested_memory_bytes, 2560 * kMiB);
  EXPECT_EQ(s.last_asked_memory_bytes, 2 * kGiB);
}

TEST(UsageStatsTest, UnobservedRunsChangeNoFigure) {
  UsageHistory h;
  for (int i = 0; i < 4; ++i) h.runs.push_back(MakeRun(1024, absl::Minutes(10)));
  // A run shorter than a tick: run time only, no peak. Counted, it would make
  // a fifth successful run (a suggestion) and drag the median to 0.
  h.runs.push_back(MakeRun(0, absl::Seconds(1)));
  UsageStats s = Summarise(h);
  EXPECT_EQ(s.runs, 4);
  EXPECT_EQ(s.succeeded, 4);
  EXPECT_EQ(s.p50_peak_memory_bytes, 1024 * kMiB);
  EXPECT_EQ(s.suggested_memory_bytes, 0);
  EXPECT_EQ(s.last_asked_memory_bytes, 16 * kGiB);
}

TEST(UsageStatsTest, EmptyHistoryIsAllZero) {
  UsageStats s = Summarise(UsageHistory{});
  EXPECT_EQ(s.runs, 0);
  EXPECT_EQ(s.p95_peak_memory_bytes, 0);
  EXPECT_EQ(s.suggested_memory_bytes, 0);
}

TEST(UsageStatsTest, FailedRunsHavePeaksAndAnOomRunUsedItsLimit) {
  // An action whose runs all failed: its peaks are still what it used, and
  // an OOM-killed run recorded with a low sampled peak used its limit.
  UsageHistory h;
  h.runs.push_back(MakeRun(10, absl::Hours(1), 32 * kMiB, v1::FAILURE_CAUSE_OOM_KILLED));
  h.runs.push_back(MakeRun(100, absl::Hours(1), kGiB, v1::FAILURE_CAUSE_NONZERO_EXIT));
  UsageStats s = Summarise(h);
  EXPECT_EQ(s.runs, 2);
  EXPECT_EQ(s.succeeded, 0);
  EXPECT_EQ(s.oom_killed, 1);
  EXPECT_EQ(s.p50_peak_memory_bytes, 32 * kMiB);
  EXPECT_EQ(s.max_peak_memory_bytes, 100 * kMiB);
  EXPECT_EQ(s.suggested_memory_bytes, 0);
  // Reserved 1 GiB-h + 1/32; used 100 MiB-h + 32 MiB-h.
  EXPECT_NEAR(s.wasted_gib_hours(), (1024.0 + 32 - 100 - 32) / 1024, 1e-9);
}

}  // namespace
}  // namespace berth
