#include "planner/plan/min_multiset.h"

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace berth::planner {
namespace {

// Against std::multiset over generated sequences of inserts, bulk inserts
// and erases (of the smallest value, of others, of repeated values), with
// few and many distinct values: the same size and smallest value after
// every step.
TEST(MinMultiset, EqualsAMultisetAfterEveryStep) {
  const uint64_t seed = std::random_device()();
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int round = 0; round < 300; ++round) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " round " << round);
    const int64_t distinct = round % 2 == 0 ? pick(1, 8) : pick(100, 1'000'000);
    MinMultiset m;
    std::multiset<int64_t> want;
    const int steps = static_cast<int>(pick(1, 2000));
    for (int step = 0; step < steps; ++step) {
      const int64_t r = pick(0, 99);
      if (r < 40) {
        const int64_t v = pick(0, distinct);
        m.Insert(v);
        want.insert(v);
      } else if (r < 45) {
        std::vector<int64_t> values(static_cast<size_t>(pick(0, 300)));
        for (int64_t& v : values) v = pick(0, distinct);
        m.InsertAll(values.data(), values.data() + values.size());
        want.insert(values.begin(), values.end());
      } else if (!want.empty()) {
        // The smallest a third of the time, else any value held.
        auto it = want.begin();
        if (r % 3 != 0) std::advance(it, pick(0, static_cast<int64_t>(want.size()) - 1));
        m.Erase(*it);
        want.erase(it);
      }
      ASSERT_EQ(m.size(), want.size()) << "step " << step;
      ASSERT_EQ(m.empty(), want.empty());
      if (!want.empty()) {
        ASSERT_EQ(m.min(), *want.begin()) << "step " << step;
      }
    }
  }
}

}  // namespace
}  // namespace berth::planner
