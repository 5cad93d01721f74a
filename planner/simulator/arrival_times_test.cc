// ArrivalTimes: a job enters the queue at its own arrival or, if later,
// when the last of its known dependencies has arrived — checked against
// that definition on seeded random dependency graphs (fresh seeds each run,
// printed on failure), and against what the simulator records as each
// job's arrival.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "planner/simulator/simulator.h"

namespace berth::planner {
namespace {

// Jobs with arrival offsets and dependencies forming a DAG (a job depends
// only on jobs later in a random order), some on ids no job has; with
// `none`, no job depends on anything.
SimInput RandomInput(uint64_t seed, bool none) {
  std::mt19937_64 rng(seed);
  auto pick = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  SimInput in;
  in.start = absl::FromUnixSeconds(1'800'000'000);
  in.budgets.memory_bytes = int64_t{1} << 40;
  in.budgets.cpu_millis = 64'000;
  in.budgets.max_workers = 8;
  const size_t n = static_cast<size_t>(pick(1, 60));
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<size_t> place(n);
  for (size_t r = 0; r < n; ++r) place[order[r]] = r;
  in.jobs.resize(n);
  for (size_t i = 0; i < n; ++i) {
    SimJob& j = in.jobs[i];
    j.job.id = absl::StrCat("job-", i);
    j.job.workspace = absl::StrCat("ws-", pick(0, 3));
    j.job.resources.memory_bytes = int64_t{1} << 30;
    j.job.resources.cpu_millis = 1000;
    j.job.expected_duration = absl::Minutes(pick(1, 30));
    // Negative offsets arrive at the start.
    j.arrival_offset = absl::Minutes(pick(-5, 120));
  }
  if (none) return in;
  for (size_t i = 0; i < n; ++i) {
    const int64_t deps = pick(0, 3);
    for (int64_t d = 0; d < deps; ++d) {
      if (pick(0, 5) == 0) {
        in.jobs[i].job.depends_on.push_back(absl::StrCat("unknown-", pick(0, 9)));
      } else if (place[i] + 1 < n) {
        const size_t to = order[static_cast<size_t>(pick(static_cast<int64_t>(place[i]) + 1,
                                                         static_cast<int64_t>(n) - 1))];
        in.jobs[i].job.depends_on.push_back(in.jobs[to].job.id);
      }
    }
  }
  return in;
}

// The definition, by memoized recursion over the DAG.
std::vector<absl::Time> Reference(const SimInput& in) {
  absl::flat_hash_map<std::string, size_t> by_id;
  for (size_t i = 0; i < in.jobs.size(); ++i) by_id.emplace(in.jobs[i].job.id, i);
  std::vector<absl::Time> t(in.jobs.size(), absl::InfinitePast());
  std::function<absl::Time(size_t)> at = [&](size_t i) {
    if (t[i] != absl::InfinitePast()) return t[i];
    absl::Time a = in.start + std::max(absl::ZeroDuration(), in.jobs[i].arrival_offset);
    for (const std::string& d : in.jobs[i].job.depends_on) {
      if (const auto it = by_id.find(d); it != by_id.end()) a = std::max(a, at(it->second));
    }
    return t[i] = a;
  };
  for (size_t i = 0; i < in.jobs.size(); ++i) at(i);
  return t;
}

TEST(ArrivalTimes, AJobArrivesWithItsLastKnownDependency) {
  SimInput in = RandomInput(1, /*none=*/true);
  in.jobs.resize(3);
  in.jobs[0].arrival_offset = absl::Minutes(50);
  in.jobs[1].arrival_offset = absl::Minutes(10);
  in.jobs[1].job.depends_on = {"job-0", "never-seen"};
  in.jobs[2].arrival_offset = absl::Minutes(-3);
  const std::vector<absl::Time> t = ArrivalTimes(in);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0], in.start + absl::Minutes(50));
  EXPECT_EQ(t[1], in.start + absl::Minutes(50));
  EXPECT_EQ(t[2], in.start);
}

TEST(ArrivalTimes, EqualTheDefinitionAndTheSimulatorsArrivals) {
  const uint64_t base = std::random_device{}();
  for (uint64_t s = 0; s < 400; ++s) {
    const uint64_t seed = base + s;
    const SimInput in = RandomInput(seed, /*none=*/s % 8 == 0);
    const std::vector<absl::Time> got = ArrivalTimes(in);
    const std::vector<absl::Time> want = Reference(in);
    ASSERT_EQ(got, want) << "seed " << seed;
    const SimResult sim = Simulate(in, SimOptions());
    ASSERT_EQ(sim.jobs.size(), got.size()) << "seed " << seed;
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(sim.jobs[i].arrival, got[i]) << "seed " << seed << " job " << i;
  }
}

}  // namespace
}  // namespace berth::planner
