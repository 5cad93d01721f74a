#include "planner/starts/start_fit.h"

#include "gtest/gtest.h"

namespace berth::planner {
namespace {

TEST(FitStartsTest, WeightsLevelsByTheirStartsAndClamps) {
  // Exactly on a line: 0.25 + 0.07 * (k - 1).
  StartFit m = FitStarts({{1, 0.25, 80}, {2, 0.32, 30}, {3, 0.39, 25}, {4, 0.46, 5}});
  EXPECT_NEAR(absl::ToDoubleSeconds(m.alone), 0.25, 1e-9);
  EXPECT_NEAR(absl::ToDoubleSeconds(m.contention), 0.07, 1e-9);
  // A heavy outlier level pulls the fit toward it.
  StartFit pulled = FitStarts({{1, 0.25, 80}, {2, 0.32, 30}, {3, 0.60, 300}});
  EXPECT_GT(pulled.contention, m.contention);
  // Faster when crowded is not the model's shape: no contention, the mean.
  m = FitStarts({{1, 0.4, 1}, {2, 0.2, 1}});
  EXPECT_EQ(m.contention, absl::ZeroDuration());
  EXPECT_NEAR(absl::ToDoubleSeconds(m.alone), 0.3, 1e-9);
  // Contention is at most the latency alone.
  m = FitStarts({{1, 0.1, 1}, {2, 1.1, 1}});
  EXPECT_EQ(m.contention, m.alone);
  // One level: its latency, no contention.
  m = FitStarts({{3, 0.5, 7}});
  EXPECT_NEAR(absl::ToDoubleSeconds(m.alone), 0.5, 1e-9);
  EXPECT_EQ(m.contention, absl::ZeroDuration());
}

}  // namespace
}  // namespace berth::planner
