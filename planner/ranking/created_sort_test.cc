#include "planner/ranking/created_sort.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace berth::planner::internal {
namespace {

struct Job {
  int64_t created_ns;
  uint32_t index;
};

// Generated queues of every size around the radix sort's threshold, with
// many equal created_at values, ids sharing long prefixes, duplicate ids and
// extreme instants: the order equals a comparison sort by (created_at, id,
// index).
TEST(CreatedSort, EqualsAComparisonSort) {
  const uint64_t seed = std::random_device()();
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int round = 0; round < 200; ++round) {
    SCOPED_TRACE(absl::StrCat("seed ", seed, " round ", round));
    const size_t n = static_cast<size_t>(round < 100 ? pick(0, 300) : pick(200, 3000));
    const int64_t instants = pick(1, 50);
    std::vector<std::string> ids(n);
    std::vector<Job> jobs(n);
    for (size_t i = 0; i < n; ++i) {
      const int64_t which = pick(0, instants);
      jobs[i].created_ns = which == 0   ? INT64_MIN
                           : which == 1 ? INT64_MAX
                                        : 1'700'000'000'000'000'000 + which * pick(1, 1'000'000'000);
      jobs[i].index = static_cast<uint32_t>(i);
      ids[i] = pick(0, 9) == 0 && i > 0 ? ids[static_cast<size_t>(pick(0, static_cast<int64_t>(i) - 1))]
                                         : absl::StrCat("ws-", pick(0, 3), ".extract-00", pick(0, 100000));
    }
    auto id_of = [&](const Job& j) -> const std::string& { return ids[j.index]; };
    auto by_index = [](const Job& a, const Job& b) { return a.index < b.index; };
    std::vector<Job> want = jobs;
    std::sort(want.begin(), want.end(), [&](const Job& a, const Job& b) {
      if (a.created_ns != b.created_ns) return a.created_ns < b.created_ns;
      if (ids[a.index] != ids[b.index]) return ids[a.index] < ids[b.index];
      return a.index < b.index;
    });
    std::vector<Job> tmp(n);
    SortByCreatedThenId(jobs.data(), tmp.data(), n, id_of, by_index);
    ASSERT_EQ(jobs.size(), want.size());
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(jobs[i].index, want[i].index) << "position " << i << " of " << n;
      ASSERT_EQ(jobs[i].created_ns, want[i].created_ns) << "position " << i;
    }
  }
}

}  // namespace
}  // namespace berth::planner::internal
