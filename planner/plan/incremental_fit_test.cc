// FitIndex against a plain list: after every generated append, removal,
// invalidation and rebuild, Find() returns the first live slot that fits and
// counts the live slots it passed as a scan of the list does.
#include "planner/plan/incremental_fit.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace berth::planner {
namespace {

struct Job {
  uint32_t handle;
  int64_t memory;
  int64_t cpu;
};

// Returns "" or the first disagreement of one generated sequence.
std::string RunSequence(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  FitIndex fit;
  std::vector<Job> order;  // the live jobs in rank order
  uint32_t next = 0;
  std::vector<uint32_t> free_handles;
  auto rebuild = [&] {
    fit.Reset();
    for (const Job& j : order) fit.Append(j.handle, j.memory, j.cpu);
  };
  rebuild();
  const int events = static_cast<int>(pick(50, 600));
  for (int e = 0; e < events; ++e) {
    const int64_t r = pick(0, 99);
    if (r < 50) {  // arrivals, mostly at the end, sizes mixed
      uint32_t h;
      if (!free_handles.empty() && pick(0, 1) == 0) {
        h = free_handles.back();
        free_handles.pop_back();
      } else {
        h = next++;
      }
      const Job j{h, pick(0, 3) == 0 ? pick(1, 1000) : pick(1, 16), pick(1, 16) * 100};
      if (pick(0, 9) == 0 && !order.empty()) {
        order.insert(order.begin() + pick(0, static_cast<int64_t>(order.size()) - 1), j);
        fit.Invalidate();
      } else {
        order.push_back(j);
        fit.Append(j.handle, j.memory, j.cpu);
      }
    } else if (r < 85 && !order.empty()) {  // leaves, mostly near the head
      const int64_t n = static_cast<int64_t>(order.size());
      const size_t i = static_cast<size_t>(pick(0, 1) == 0 ? pick(0, std::min<int64_t>(3, n - 1))
                                                            : pick(0, n - 1));
      fit.Remove(order[i].handle);
      free_handles.push_back(order[i].handle);
      order.erase(order.begin() + static_cast<int64_t>(i));
    }
    if (fit.stale()) rebuild();
    // Walk as a plan does: from the start, each time to the next job that
    // fits what is left, taking it (the bounds shrink).
    int64_t memory = pick(0, 2) == 0 ? INT64_MAX : pick(0, 1200);
    int64_t cpu = pick(0, 1600);
    size_t slot = 0;
    size_t want = 0;  // position in `order`
    while (true) {
      size_t passed = 0;
      const size_t got = fit.Find(slot, memory, cpu, passed);
      size_t w = want;
      while (w < order.size() && (order[w].memory > memory || order[w].cpu > cpu)) ++w;
      if (passed != w - want)
        return absl::StrCat("event ", e, ": passed ", passed, ", want ", w - want);
      if (w == order.size()) {
        if (got != FitIndex::kNone) return absl::StrCat("event ", e, ": found a slot, want none");
        break;
      }
      if (got == FitIndex::kNone) return absl::StrCat("event ", e, ": found none");
      if (fit.handle(got) != order[w].handle)
        return absl::StrCat("event ", e, ": handle ", fit.handle(got), ", want ", order[w].handle);
      memory -= order[w].memory;
      cpu -= order[w].cpu;
      slot = got + 1;
      want = w + 1;
    }
  }
  return "";
}

TEST(FitIndexTest, FindsWhatAScanFindsOverGeneratedSequences) {
  const uint64_t base = std::random_device{}();
  for (uint64_t s = 0; s < 500; ++s) {
    const uint64_t seed = base + s;
    ASSERT_EQ(RunSequence(seed), "") << "seed " << seed;
  }
}

TEST(FitIndexTest, PassesOverTheLargerJobs) {
  FitIndex fit;
  fit.Reset();
  for (uint32_t h = 0; h < 1000; ++h) fit.Append(h, h == 777 ? 1 : 10, 100);
  size_t passed = 0;
  const size_t s = fit.Find(0, 5, 100, passed);
  ASSERT_NE(s, FitIndex::kNone);
  EXPECT_EQ(fit.handle(s), 777u);
  EXPECT_EQ(passed, 777u);
  fit.Remove(777);
  EXPECT_EQ(fit.Find(0, 5, 100, passed), FitIndex::kNone);
  EXPECT_EQ(passed, 999u);
}

}  // namespace
}  // namespace berth::planner
