#include "tools/fidelity/measures.h"

#include <cmath>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace berth::fidelity {
namespace {

using testing::ElementsAre;

TEST(QuantileTest, IndexIsFloorOfNTimesQ) {
  // Sorted first; no interpolation.
  EXPECT_EQ(Quantile({5, 1, 4, 2, 3}, 0.5), 3);
  EXPECT_EQ(Quantile({4, 1, 3, 2}, 0.5), 3);  // index 2, not 2.5
  EXPECT_EQ(Quantile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.95), 10);
  EXPECT_EQ(Quantile({1, 2, 3}, 1.0), 3);     // clamped to the last
  EXPECT_EQ(Quantile({7}, 0.0), 7);
  EXPECT_TRUE(std::isnan(Quantile({}, 0.5)));
}

TEST(TauBTest, SameAndReversedOrder) {
  EXPECT_DOUBLE_EQ(TauB({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(TauB({1, 2, 3, 4}, {40, 30, 20, 10}), -1.0);
}

TEST(TauBTest, OneSwap) {
  // 6 pairs, 1 discordant: (5 - 1) / 6.
  EXPECT_DOUBLE_EQ(TauB({1, 2, 3, 4}, {1, 3, 2, 4}), 4.0 / 6.0);
}

TEST(TauBTest, TiesOnOneSideShrinkTheDenominatorOfTheOther) {
  // x ties jobs 0 and 1 (one pass), y orders them: 5 concordant, 1 tie in x.
  // tau-b = 5 / sqrt((5 + 1) * 5).
  EXPECT_DOUBLE_EQ(TauB({1, 1, 2, 3}, {1, 2, 3, 4}), 5.0 / std::sqrt(30.0));
  // The same on the other side is symmetric.
  EXPECT_DOUBLE_EQ(TauB({1, 2, 3, 4}, {1, 1, 2, 3}), 5.0 / std::sqrt(30.0));
}

TEST(TauBTest, SamePassOnBothSidesIsNoPair) {
  // Jobs 0 and 1 admitted by one pass on both sides: that pair counts
  // nowhere, so the rest agree perfectly.
  EXPECT_DOUBLE_EQ(TauB({1, 1, 2}, {5, 5, 6}), 1.0);
}

TEST(TauBTest, NoUntiedPairIsOne) {
  EXPECT_DOUBLE_EQ(TauB({}, {}), 1.0);
  EXPECT_DOUBLE_EQ(TauB({3}, {4}), 1.0);
  EXPECT_DOUBLE_EQ(TauB({1, 1, 1}, {2, 2, 2}), 1.0);
}

TEST(GroupPassesTest, SameMicrosecondIsOnePass) {
  std::vector<double> times;
  const auto passes = GroupPasses({{"a", 2.0}, {"b", 1.0}, {"c", 1.0000001}, {"d", 3.5}}, &times);
  ASSERT_EQ(passes.size(), 3u);
  EXPECT_THAT(passes[0], ElementsAre("b", "c"));
  EXPECT_THAT(passes[1], ElementsAre("a"));
  EXPECT_THAT(passes[2], ElementsAre("d"));
  EXPECT_THAT(times, ElementsAre(1.0, 2.0, 3.5));
}

TEST(GroupPassesTest, Empty) { EXPECT_TRUE(GroupPasses({}).empty()); }

std::vector<std::tuple<int, double, int64_t>> Levels(
    const std::vector<std::pair<double, double>>& spans, int parallelism) {
  std::vector<std::tuple<int, double, int64_t>> out;
  for (const planner::StartLevel& l : StartLevels(spans, parallelism)) {
    out.emplace_back(l.starts, l.median_s, l.count);
  }
  return out;
}

TEST(StartLevelsTest, StartsOfOnePassCountEachOther) {
  // A pass of three starts, a start that begins while they run (it counts
  // them, as berthd does, but they do not count it), then two alone.
  const std::vector<std::pair<double, double>> spans = {
      {0.0, 0.4}, {0.01, 0.45}, {0.02, 0.5}, {0.3, 0.55}, {1.0, 1.2}, {2.0, 2.3}};
  const auto levels = Levels(spans, 4);
  ASSERT_EQ(levels.size(), 3u);
  EXPECT_EQ(std::get<0>(levels[0]), 1);
  EXPECT_EQ(std::get<2>(levels[0]), 2);  // 0.2, 0.3: Quantile takes the upper
  EXPECT_NEAR(std::get<1>(levels[0]), 0.3, 1e-9);
  EXPECT_EQ(std::get<0>(levels[1]), 3);
  EXPECT_EQ(std::get<2>(levels[1]), 3);
  EXPECT_NEAR(std::get<1>(levels[1]), 0.44, 1e-9);  // 0.4, 0.44, 0.48
  EXPECT_EQ(std::get<0>(levels[2]), 4);
  EXPECT_NEAR(std::get<1>(levels[2]), 0.25, 1e-9);
}

TEST(StartLevelsTest, SpreadIsTheMedianDeviationOfALevel) {
  const std::vector<std::pair<double, double>> spans = {
      {0.0, 0.4}, {0.01, 0.45}, {0.02, 0.5}, {0.3, 0.55}, {1.0, 1.2}, {2.0, 2.3}};
  const std::vector<planner::StartLevel> levels = StartLevels(spans, 4);
  ASSERT_EQ(levels.size(), 3u);
  EXPECT_NEAR(levels[0].spread_s, 0.1, 1e-9);   // 0.2, 0.3 about 0.3
  EXPECT_NEAR(levels[1].spread_s, 0.04, 1e-9);  // 0.4, 0.44, 0.48 about 0.44
  EXPECT_NEAR(levels[2].spread_s, 0.0, 1e-9);   // one start
}

TEST(StartLevelsTest, StartsThatWaitedForASlotAreLeftOutAndLevelsCapped) {
  // With 2 slots: the third span begins while two others are in flight.
  const std::vector<std::pair<double, double>> spans = {
      {0.0, 1.0}, {0.0, 1.2}, {0.2, 2.0}, {1.5, 1.7}};
  // The last overlaps the third only: 2 together. The first two: 2.
  const auto two = Levels(spans, 2);
  ASSERT_EQ(two.size(), 1u);
  EXPECT_EQ(std::get<0>(two[0]), 2);
  EXPECT_EQ(std::get<2>(two[0]), 3);
  EXPECT_NEAR(std::get<1>(two[0]), 1.0, 1e-9);  // 1.0, 1.2, 0.2
  // With 3 slots every start had one free.
  int64_t counted = 0;
  for (const auto& l : Levels(spans, 3)) counted += std::get<2>(l);
  EXPECT_EQ(counted, 4);
}

}  // namespace
}  // namespace berth::fidelity
