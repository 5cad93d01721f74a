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
  int64_t duration;  // 0: unknown
  bool waiting = false;  // for a dependency
};

constexpr int64_t kDefault = 50;

bool Within(const Job& j, const FitIndex::Limits* l) {
  const int64_t d = j.duration > 0 ? j.duration : kDefault;
  return l != nullptr && (l->waiting_too || !j.waiting) && j.memory <= l->memory && j.cpu <= l->cpu && d <= l->duration;
}

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
    fit.Reset(kDefault);
    for (const Job& j : order) {
      fit.Append(j.handle, j.memory, j.cpu, j.duration);
      if (j.waiting) fit.SetWaiting(j.handle, true);
    }
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
      const Job j{h, pick(0, 3) == 0 ? pick(1, 1000) : pick(1, 16), pick(1, 16) * 100,
                  pick(0, 4) == 0 ? 0 : pick(1, 100)};
      if (pick(0, 9) == 0 && !order.empty()) {
        order.insert(order.begin() + pick(0, static_cast<int64_t>(order.size()) - 1), j);
        fit.Invalidate();
      } else {
        order.push_back(j);
        fit.Append(j.handle, j.memory, j.cpu, j.duration);
      }
    } else if (r >= 85 && r < 95 && !order.empty()) {  // starts or stops waiting
      Job& j = order[static_cast<size_t>(pick(0, static_cast<int64_t>(order.size()) - 1))];
      j.waiting = pick(0, 1) == 0;
      fit.SetWaiting(j.handle, j.waiting);
    } else if (r < 85 && !order.empty()) {  // leaves, mostly near the head
      const int64_t n = static_cast<int64_t>(order.size());
      const size_t i = static_cast<size_t>(pick(0, 1) == 0 ? pick(0, std::min<int64_t>(3, n - 1))
                                                            : pick(0, n - 1));
      fit.Remove(order[i].handle);
      free_handles.push_back(order[i].handle);
      order.erase(order.begin() + static_cast<int64_t>(i));
    }
    if (fit.stale()) rebuild();
    // Walk as a plan does: from the start, each time to the next job within
    // either limit, taking it (the limits shrink).
    FitIndex::Limits a{pick(0, 2) == 0 ? INT64_MAX : pick(0, 1200), pick(0, 1600), pick(0, 120)};
    FitIndex::Limits b{pick(0, 40), pick(0, 800), INT64_MAX};
    a.waiting_too = pick(0, 2) == 0;
    const bool use_a = pick(0, 4) != 0, use_b = pick(0, 2) == 0;
    size_t slot = 0;
    size_t want = 0;  // position in `order`
    while (true) {
      const FitIndex::Limits* la = use_a ? &a : nullptr;
      const FitIndex::Limits* lb = use_b ? &b : nullptr;
      size_t passed = 0;
      const size_t got = fit.Find(slot, FitIndex::kNone, la, lb, passed);
      size_t w = want;
      while (w < order.size() && !Within(order[w], la) && !Within(order[w], lb)) ++w;
      if (passed != w - want)
        return absl::StrCat("event ", e, ": passed ", passed, ", want ", w - want);
      if (w == order.size()) {
        if (got != FitIndex::kNone) return absl::StrCat("event ", e, ": found a slot, want none");
        break;
      }
      if (got == FitIndex::kNone) return absl::StrCat("event ", e, ": found none");
      if (fit.handle(got) != order[w].handle)
        return absl::StrCat("event ", e, ": handle ", fit.handle(got), ", want ", order[w].handle);
      a.memory -= order[w].memory;
      a.cpu -= order[w].cpu;
      b.memory -= order[w].memory;
      b.cpu -= order[w].cpu;
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
  fit.Reset(kDefault);
  for (uint32_t h = 0; h < 1000; ++h) fit.Append(h, h == 777 ? 1 : 10, 100, h == 555 ? 0 : 60);
  const FitIndex::Limits small{5, 100, INT64_MAX};
  size_t passed = 0;
  size_t s = fit.Find(0, FitIndex::kNone, &small, nullptr, passed);
  ASSERT_NE(s, FitIndex::kNone);
  EXPECT_EQ(fit.handle(s), 777u);
  EXPECT_EQ(passed, 777u);
  const FitIndex::Limits brief{INT64_MAX, INT64_MAX, kDefault};  // the unknown one: the default
  s = fit.Find(0, FitIndex::kNone, &small, &brief, passed);
  ASSERT_NE(s, FitIndex::kNone);
  EXPECT_EQ(fit.handle(s), 555u);
  fit.Remove(777);
  fit.Remove(555);
  EXPECT_EQ(fit.Find(0, FitIndex::kNone, &small, &brief, passed), FitIndex::kNone);
  EXPECT_EQ(passed, 998u);
  // Within a range of slots only.
  EXPECT_EQ(fit.Find(10, 20, &brief, nullptr, passed), FitIndex::kNone);
  EXPECT_EQ(passed, 10u);
  fit.Append(1000, 1, 1, 1);
  EXPECT_EQ(fit.Find(10, 1000, &small, nullptr, passed), FitIndex::kNone);
  EXPECT_EQ(fit.Find(10, 1001, &small, nullptr, passed), 1000u);
  EXPECT_EQ(passed, 988u);
}

// The jobs waiting for a dependency are small, the others large: a limit
// that takes no waiting job must pass over every subtree (their smallest
// values come from the waiting jobs), one that takes them finds them, and a
// job that stops waiting is found again.
TEST(FitIndexTest, WaitingJobsAreTakenOnlyByLimitsThatTakeThem) {
  FitIndex fit;
  fit.Reset(kDefault);
  for (uint32_t h = 0; h < 1000; ++h) {
    const bool small = h % 3 != 2;
    fit.Append(h, small ? 1 : 100, small ? 10 : 1000, small ? 5 : 500);
    if (small) fit.SetWaiting(h, true);
  }
  FitIndex::Limits open{50, 500, 50};
  FitIndex::Limits any = open;
  any.waiting_too = true;
  size_t passed = 0;
  EXPECT_EQ(fit.Find(0, FitIndex::kNone, &open, nullptr, passed), FitIndex::kNone);
  EXPECT_EQ(passed, 1000u);
  EXPECT_EQ(fit.Find(0, FitIndex::kNone, nullptr, &open, passed), FitIndex::kNone);
  size_t s = fit.Find(0, FitIndex::kNone, &open, &any, passed);
  ASSERT_NE(s, FitIndex::kNone);
  EXPECT_EQ(fit.handle(s), 0u);
  // Each smallest value of the open jobs is within a limit, no open job is.
  fit.Append(1000, 100, 10, 500);
  fit.Append(1001, 1, 1000, 500);
  fit.Append(1002, 1, 10, 5000);
  const FitIndex::Limits mixed{50, 500, 600};
  EXPECT_EQ(fit.Find(0, FitIndex::kNone, &mixed, nullptr, passed), FitIndex::kNone);
  // A job that stops waiting, and one that waits again.
  fit.SetWaiting(700, false);
  fit.SetWaiting(700, true);
  fit.SetWaiting(700, false);
  s = fit.Find(0, FitIndex::kNone, &open, nullptr, passed);
  ASSERT_NE(s, FitIndex::kNone);
  EXPECT_EQ(fit.handle(s), 700u);
  EXPECT_EQ(passed, 700u);
  fit.SetWaiting(700, true);
  EXPECT_EQ(fit.Find(0, FitIndex::kNone, &open, nullptr, passed), FitIndex::kNone);
  fit.Remove(0);
  s = fit.Find(0, FitIndex::kNone, &any, nullptr, passed);
  ASSERT_NE(s, FitIndex::kNone);
  EXPECT_EQ(fit.handle(s), 1u);
}

}  // namespace
}  // namespace berth::planner
