// ShareIndex against the ranking's own arithmetic: after generated builds
// and removals, whenever the index says it is exact, a share plus the
// weights of any range of live slots in units equals the double the ranking
// gets adding the same floats one at a time (bit for bit), and Reach() finds
// the slot a one-at-a-time scan finds.
#include "planner/plan/incremental_share.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "planner/ranking/drf_keys.h"

namespace berth::planner {
namespace {

struct Job {
  int64_t memory;
  int64_t cpu;
  int64_t since = 0;
  bool live = true;
};

uint32_t Bits(double m, double c) { return internal::DrfShareBits(std::max(m, c)); }

// Returns "" or the first disagreement of one generated build.
std::string RunSequence(uint64_t seed, int64_t& exact_checks) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  const int64_t kGi = int64_t{1} << 30;
  const int64_t mem_budget = chance(0.5) ? pick(1, 64) * kGi : pick(1, 64 * kGi);
  const int64_t cpu_budget = chance(0.5) ? pick(1, 256) * 1000 : pick(1, 300000);
  const double inv_mem = chance(0.1) ? 0.0 : 1.0 / static_cast<double>(mem_budget);
  const double inv_cpu = 1.0 / static_cast<double>(cpu_budget);
  const bool tiny = chance(0.3);
  std::vector<Job> jobs;
  const int n = static_cast<int>(pick(1, 300));
  for (int i = 0; i < n; ++i) {
    Job j;
    j.memory = tiny && chance(0.05) ? pick(1, 999) : pick(0, mem_budget);
    j.cpu = chance(0.1) ? 0 : pick(1, cpu_budget);
    j.since = pick(0, 100);
    jobs.push_back(j);
  }
  ShareIndex index;
  index.Reset(jobs.size(), 100, inv_mem, inv_cpu);
  const int runs = static_cast<int>(pick(1, 5));
  std::vector<std::pair<size_t, size_t>> ranges;
  size_t at = 0;
  for (int r = 0; r < runs; ++r) {
    const size_t end = r + 1 == runs ? jobs.size() : std::min<size_t>(jobs.size(), at + static_cast<size_t>(pick(0, n)));
    index.StartRun(r, static_cast<uint32_t>(7 * r));
    for (size_t i = at; i < end; ++i)
      index.Append(static_cast<uint32_t>(i), jobs[i].memory, jobs[i].cpu, 0, jobs[i].since);
    ranges.emplace_back(at, end);
    at = end;
  }
  index.Finish();
  for (int r = 0; r < runs; ++r) {
    if (index.Run(r, static_cast<uint32_t>(7 * r)) != ranges[static_cast<size_t>(r)])
      return absl::StrCat("run ", r, " slots");
  }
  for (int k = 0; k < n / 3; ++k) {
    const size_t i = static_cast<size_t>(pick(0, n - 1));
    jobs[i].live = false;
    index.Remove(static_cast<uint32_t>(i), 0);
  }
  for (int q = 0; q < 40; ++q) {
    size_t from = static_cast<size_t>(pick(0, n - 1));
    size_t to = static_cast<size_t>(pick(0, n));
    if (from > to) std::swap(from, to);
    // A share as the ranking holds it: running weights then jobs, one by one.
    double m0 = ShareWeight(pick(0, mem_budget), inv_mem);
    double c0 = ShareWeight(pick(0, cpu_budget), inv_cpu);
    for (int k = static_cast<int>(pick(0, 3)); k > 0; --k) {
      const Job& j = jobs[static_cast<size_t>(pick(0, n - 1))];
      m0 += ShareWeight(j.memory, inv_mem);
      c0 += ShareWeight(j.cpu, inv_cpu);
    }
    double m = m0, c = c0;
    uint32_t live = 0;
    std::vector<uint32_t> bits_after;  // per live slot in [from, to)
    std::vector<size_t> slots;
    for (size_t i = from; i < to; ++i) {
      if (!jobs[i].live) continue;
      m += ShareWeight(jobs[i].memory, inv_mem);
      c += ShareWeight(jobs[i].cpu, inv_cpu);
      ++live;
      bits_after.push_back(Bits(m, c));
      slots.push_back(i);
    }
    // FirstSince against a scan.
    const int64_t since_bound = pick(0, 101);
    size_t first_since = FitIndex::kNone;
    for (size_t i = from; i < to; ++i) {
      if (jobs[i].live && jobs[i].since < since_bound) {
        first_since = i;
        break;
      }
    }
    if (index.FirstSince(from, to, since_bound) != first_since)
      return absl::StrCat("FirstSince [", from, ", ", to, ") ", since_bound);
    const ShareIndex::Sum total = index.Total(from, to);
    if (total.live != live) return absl::StrCat("live in [", from, ", ", to, ")");
    int64_t mu, cu;
    if (!index.exact() || !ShareIndex::ToUnits(m0, mu) || !ShareIndex::ToUnits(c0, cu) ||
        mu + total.memory >= ShareIndex::kExactLimit || cu + total.cpu >= ShareIndex::kExactLimit)
      continue;
    ++exact_checks;
    if (ShareIndex::FromUnits(mu + total.memory) != m || ShareIndex::FromUnits(cu + total.cpu) != c)
      return absl::StrCat("sum of [", from, ", ", to, ") differs from the one-by-one sum");
    // A threshold from the scan (or just above it), found as the scan finds it.
    const uint32_t bits = bits_after.empty() || chance(0.2)
                              ? Bits(m0, c0) + static_cast<uint32_t>(pick(0, 2))
                              : bits_after[static_cast<size_t>(pick(0, static_cast<int64_t>(bits_after.size()) - 1))] +
                                    static_cast<uint32_t>(pick(0, 1));
    size_t want = FitIndex::kNone;
    uint32_t want_live = live;
    for (size_t k = 0; k < bits_after.size(); ++k) {
      if (bits_after[k] >= bits) {
        want = slots[k];
        want_live = static_cast<uint32_t>(k + 1);
        break;
      }
    }
    ShareIndex::Sum sum;
    const size_t got = index.Reach(from, to, mu, cu, bits, sum);
    if (got != want || sum.live != want_live)
      return absl::StrCat("Reach [", from, ", ", to, ") bits ", bits, ": want slot ", want, " got ", got);
  }
  return "";
}

TEST(ShareIndexTest, BulkSumsEqualOneByOneSumsOnGeneratedBuilds) {
  const uint64_t base = std::random_device{}();
  int64_t exact_checks = 0;
  for (uint64_t s = 0; s < 2000; ++s) {
    const std::string diff = RunSequence(base + s, exact_checks);
    ASSERT_EQ(diff, "") << "seed " << base + s;
  }
  EXPECT_GT(exact_checks, 10000);  // the comparison ran, not only skipped
}

TEST(ShareIndexTest, AWeightBelowTheUnitsMakesItInexact) {
  ShareIndex index;
  index.Reset(2, 1, 1.0 / 3e12, 1.0 / 256000);
  index.StartRun(0, 0);
  index.Append(0, int64_t{1} << 30, 1000, 0, 0);
  index.Finish();
  EXPECT_TRUE(index.exact());
  index.Reset(2, 1, 1.0 / 3e12, 1.0 / 256000);
  index.StartRun(0, 0);
  index.Append(0, int64_t{1} << 30, 1000, 0, 0);
  index.Append(1, 7, 1000, 0, 0);  // 7 / 3e12: not a whole number of 2^-40
  index.Finish();
  EXPECT_FALSE(index.exact());
  index.Remove(1, 0);
  EXPECT_TRUE(index.exact());
}

}  // namespace
}  // namespace berth::planner
