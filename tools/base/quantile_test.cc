#include "tools/base/quantile.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

TEST(QuantileTest, IsAlwaysOneOfTheValues) {
  EXPECT_EQ(Quantile<double>({5, 1, 4, 2, 3}, 0.5), 3);
  EXPECT_EQ(Quantile<double>({4, 1, 3, 2}, 0.5), 3);  // the upper median
  EXPECT_EQ(Quantile<double>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.95), 10);
  EXPECT_EQ(Quantile<double>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.85), 9);
  EXPECT_EQ(Quantile<double>({1, 2, 3}, 1.0), 3);  // capped at the last
  EXPECT_EQ(Quantile<double>({7, 3}, 0.0), 3);
}

TEST(QuantileTest, WorksOnDurations) {
  std::vector<absl::Duration> v;
  for (int i = 20; i >= 1; --i) v.push_back(absl::Seconds(i));
  EXPECT_EQ(Quantile(v, 0.5), absl::Seconds(11));
  EXPECT_EQ(Quantile(v, 0.95), absl::Seconds(20));
  EXPECT_EQ(Quantile(v, 0.9), absl::Seconds(19));
}

}  // namespace
}  // namespace berth
