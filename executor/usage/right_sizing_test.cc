#include "executor/usage/right_sizing.h"

#include "gtest/gtest.h"

namespace berth {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;

UsageHistory History(const std::string& ws, const std::string& action, int runs,
                     int64_t peak, int64_t asked, absl::Duration t = absl::Hours(1)) {
  UsageHistory h{ws, action, {}};
  for (int i = 0; i < runs; ++i) {
    UsageRun r;
    r.peak_memory_bytes = peak;
    r.asked_memory_bytes = asked;
    r.run_time = t;
    h.runs.push_back(r);
  }
  return h;
}

v1::JobSpec Asking(int64_t memory) {
  v1::JobSpec s;
  s.set_id("j");
  s.mutable_resources()->set_memory_bytes(memory);
  return s;
}

TEST(RightSizingTest, FarAboveHistorySaysWhatWouldStartNow) {
  const UsageHistory h = History("ws", "extract", 20, 3174 * kMiB, 16 * kGiB);
  v1::Explanation e;
  e.mutable_smallest_change()->set_dimension(v1::DIMENSION_MEMORY);
  e.mutable_smallest_change()->set_fits_if_at_most(6 * kGiB);
  std::optional<v1::RightSizing> r = AdviseRightSizing(Asking(16 * kGiB), e, h);
  ASSERT_TRUE(r.has_value());
  // 3174 MiB + 25% = 3967.5 MiB, rounded up to 4 GiB.
  EXPECT_EQ(r->usage().suggested_memory_bytes(), 4 * kGiB);
  EXPECT_TRUE(r->would_start_now());
  EXPECT_EQ(r->text(),
            "asks 16 GiB; this action peaked at <= 3.1 GiB in its last 20 runs; "
            "at 4 GiB it would start now");
  // Less free than the suggestion: it would still wait, but reserve less.
  e.mutable_smallest_change()->set_fits_if_at_most(2 * kGiB);
  r = AdviseRightSizing(Asking(16 * kGiB), e, h);
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->would_start_now());
  EXPECT_NE(r->text().find("it would reserve less"), std::string::npos) << r->text();
}

TEST(RightSizingTest, NoAdviceNearTheHistoryOrWithTooFewRuns) {
  const UsageHistory h = History("ws", "extract", 20, 3 * kGiB, 5 * kGiB);
  EXPECT_FALSE(AdviseRightSizing(Asking(5 * kGiB), v1::Explanation(), h).has_value());
  const UsageHistory few = History("ws", "extract", 4, 1 * kGiB, 16 * kGiB);
  EXPECT_FALSE(AdviseRightSizing(Asking(16 * kGiB), v1::Explanation(), few).has_value());
}

TEST(RightSizingTest, ReportListsTheMostWastefulActionsFirst) {
  std::vector<UsageHistory> hs = {
      History("a", "small", 10, 1 * kGiB, 2 * kGiB),      // wastes 10 GiB-h
      History("a", "big", 10, 2 * kGiB, 16 * kGiB),       // wastes 140 GiB-h
      History("b", "mid", 10, 1 * kGiB, 5 * kGiB),        // wastes 40 GiB-h
  };
  v1::RightSizeResponse r = RightSizeReport(hs, "", 2);
  ASSERT_EQ(r.actions_size(), 2);
  EXPECT_EQ(r.actions(0).action(), "big");
  EXPECT_DOUBLE_EQ(r.actions(0).wasted_gib_hours(), 140);
  EXPECT_EQ(r.actions(0).suggested_memory_bytes(), 2560 * kMiB);
  EXPECT_EQ(r.actions(1).action(), "mid");
  EXPECT_DOUBLE_EQ(r.total_wasted_gib_hours(), 190);
  r = RightSizeReport(hs, "a", 10);
  ASSERT_EQ(r.actions_size(), 2);
  EXPECT_DOUBLE_EQ(r.total_wasted_gib_hours(), 150);
}

}  // namespace
}  // namespace berth
