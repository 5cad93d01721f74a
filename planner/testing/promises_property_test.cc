// Property tests of the planner's promises over generated
// workloads run through the real simulator: reservations survive estimates
// 3x too short or too long, identical workspaces get identical service,
// reservations are kept, and aging bounds every job's wait.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "planner/plan/plan.h"
#include "planner/simulator/simulator.h"

namespace berth::planner {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
const absl::Time kStart = absl::FromUnixSeconds(1'800'000'000);

SimJob Job(std::string id, std::string ws, int64_t mem_gib,
           absl::Duration actual, absl::Duration arrival, int priority = 0) {
  SimJob j;
  j.job.id = std::move(id);
  j.job.workspace = std::move(ws);
  j.job.priority = priority;
  j.job.resources = {500, mem_gib * kGiB};
  j.job.expected_duration = actual;
  j.job.created_at = kStart + arrival;
  j.arrival_offset = arrival;
  j.actual_duration = actual;
  return j;
}

Budgets B(int64_t mem_gib, int32_t workers = 1000) {
  Budgets b;
  b.memory_bytes = mem_gib * kGiB;
  b.cpu_millis = 1'000'000;
  b.max_workers = workers;
  return b;
}

absl::Duration WaitOf(const SimInput& in, const SimResult& r,
                      const std::string& id) {
  for (size_t i = 0; i < in.jobs.size(); ++i) {
    if (in.jobs[i].job.id == id) return r.jobs[i].wait();
  }
  ADD_FAILURE() << "no job " << id;
  return absl::ZeroDuration();
}

// The first workload, randomised: a stream of small jobs and one big
// job arriving while they run. `scale` multiplies the small jobs' estimates
// (1/3: three times too short; 3: three times too long).
SimInput BigBehindStream(uint64_t seed, double scale) {
  std::mt19937_64 rng(seed);
  auto pick = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  SimInput in;
  in.start = kStart;
  const int64_t budget = pick(96, 160);
  in.budgets = B(budget);
  const int64_t small = pick(1, 3);
  const absl::Duration run = absl::Minutes(pick(10, 30));
  const absl::Duration every = absl::Seconds(pick(10, 40));
  const int count = static_cast<int>(pick(200, 400));
  for (int i = 0; i < count; ++i) {
    SimJob j = Job(absl::StrCat("s", i), absl::StrCat("small", i % 3), small,
                   run, every * i);
    j.job.expected_duration = run * scale;
    in.jobs.push_back(j);
  }
  in.jobs.push_back(Job("big", "big", budget * 3 / 4, absl::Minutes(30),
                        absl::Minutes(pick(30, 90))));
  return in;
}

TEST(PromisesProperty, BigJobWaitSurvivesWrongEstimates) {
  int checked = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const SimInput exact = BigBehindStream(seed, 1.0);
    const absl::Duration w_exact = WaitOf(exact, Simulate(exact, {}), "big");
    const SimInput short3 = BigBehindStream(seed, 1.0 / 3);
    const absl::Duration w_short = WaitOf(short3, Simulate(short3, {}), "big");
    const SimInput long3 = BigBehindStream(seed, 3.0);
    const absl::Duration w_long = WaitOf(long3, Simulate(long3, {}), "big");
    if (w_exact <= absl::ZeroDuration()) continue;
    ++checked;
    EXPECT_LE(w_short, 2 * w_exact) << "seed " << seed << " exact " << w_exact;
    EXPECT_LE(w_long, 2 * w_exact) << "seed " << seed << " exact " << w_exact;
  }
  EXPECT_GT(checked, 30);
}

// Twenty identical workspaces, each submitting the same jobs at the same
// instants, more than the budget runs at once: p50 waits within 1.5x.
TEST(PromisesProperty, IdenticalWorkspacesGetIdenticalService) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&rng](int64_t lo, int64_t hi) {
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    SimInput in;
    in.start = kStart;
    in.budgets = B(64, static_cast<int32_t>(pick(10, 16)));
    const int per_ws = static_cast<int>(pick(20, 30));
    std::vector<absl::Duration> arrival(per_ws), run(per_ws);
    for (int k = 0; k < per_ws; ++k) {
      arrival[k] = absl::Minutes(pick(0, 120));
      run[k] = absl::Minutes(pick(5, 30));
    }
    for (int w = 0; w < 20; ++w) {
      for (int k = 0; k < per_ws; ++k) {
        in.jobs.push_back(Job(absl::StrCat("small", w, "-", k),
                              absl::StrCat("small", w), 1, run[k], arrival[k]));
      }
    }
    const SimResult r = Simulate(in, {});
    std::vector<double> p50;
    for (int w = 0; w < 20; ++w) {
      std::vector<double> waits;
      for (int k = 0; k < per_ws; ++k) {
        waits.push_back(absl::ToDoubleSeconds(r.jobs[w * per_ws + k].wait()));
      }
      std::nth_element(waits.begin(), waits.begin() + waits.size() / 2, waits.end());
      p50.push_back(waits[waits.size() / 2]);
    }
    const auto [lo, hi] = std::minmax_element(p50.begin(), p50.end());
    ASSERT_GT(*lo, 60) << "seed " << seed << ": not saturated";
    EXPECT_LE(*hi, 1.5 * *lo) << "seed " << seed;
  }
}

// Random mixed workloads with exact estimates and one priority: the job
// holding the reservation starts by the time each plan promised it.
TEST(PromisesProperty, ReservationsAreKeptWithExactEstimates) {
  int64_t promises = 0, kept = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&rng](int64_t lo, int64_t hi) {
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    SimInput in;
    in.start = kStart;
    in.budgets = B(pick(64, 256), static_cast<int32_t>(pick(4, 24)));
    in.budgets.workspace_max_workers = pick(0, 1) ? static_cast<int32_t>(pick(2, 6)) : 0;
    const int n = static_cast<int>(pick(100, 300));
    const int64_t mem_cap = in.budgets.memory_bytes / kGiB;
    for (int i = 0; i < n; ++i) {
      const int64_t mem = pick(0, 9) == 0 ? pick(mem_cap / 2, mem_cap) : pick(1, 16);
      in.jobs.push_back(Job(absl::StrCat("j", i), absl::StrCat("ws", pick(0, 5)),
                            mem, absl::Minutes(pick(1, 90)),
                            absl::Minutes(pick(0, 240))));
    }
    std::vector<std::pair<std::string, absl::Time>> promised;
    SimOptions opt;
    opt.on_plan = [&promised](const State& s, const PlanResult& p) {
      if (p.reserved_decision < 0) return;
      promised.emplace_back(s.queued[p.decisions[p.reserved_decision].job].id,
                            p.reservation_start);
    };
    const SimResult r = Simulate(in, opt);
    absl::flat_hash_map<std::string, absl::Time> started;
    for (size_t i = 0; i < in.jobs.size(); ++i) started[in.jobs[i].job.id] = r.jobs[i].start;
    for (const auto& [id, at] : promised) {
      ++promises;
      if (started[id] <= at) ++kept;
    }
  }
  ASSERT_GT(promises, 1000);
  EXPECT_GE(static_cast<double>(kept), 0.99 * static_cast<double>(promises))
      << kept << " of " << promises;
}

// A stream of priority-1 jobs that keeps the budget busy, a priority-2
// pipeline step queued throughout (it waits for its parent, which runs all
// along: the top priority is present but needs no capacity now), and
// priority-0 and -1 jobs (one of them big) in other workspaces. Aging at
// interval S lifts a job of priority p to just below the top after
// (2 - p) * S: ahead of the stream's jobs that reach that level later. From
// there it waits for the capacity of the runs in progress and of the jobs
// that reached the level before it (at most one interval of the stream and
// three longest runs here). Without aging the big job
// waits for the whole stream. (An earlier rule let aged jobs overtake the
// top priority's own jobs; now a stream of top-priority jobs is never
// overtaken — see AgingNeverDelaysTheTopPriority.)
TEST(PromisesProperty, AgingBoundsEveryWait) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&rng](int64_t lo, int64_t hi) {
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    SimInput in;
    in.start = kStart;
    in.budgets = B(128, 24);
    absl::Duration longest = absl::ZeroDuration();
    for (int i = 0; i < 600; ++i) {
      const absl::Duration run = absl::Minutes(pick(5, 20));
      longest = std::max(longest, run);
      in.jobs.push_back(Job(absl::StrCat("mid", i), absl::StrCat("mid", i % 2),
                            pick(2, 8), run, absl::Seconds(20) * i, 1));
    }
    in.jobs.push_back(Job("parent", "top", 1, absl::Hours(10), absl::ZeroDuration(), 2));
    in.jobs.push_back(Job("child", "top", 1, absl::Minutes(1), absl::ZeroDuration(), 2));
    in.jobs.back().job.depends_on = {"parent"};
    for (int i = 0; i < 6; ++i) {
      in.jobs.push_back(Job(absl::StrCat("lo", i), "lo", pick(2, 8),
                            absl::Minutes(10), absl::Minutes(pick(0, 60)),
                            static_cast<int>(pick(-1, 0))));
    }
    in.jobs.push_back(Job("big", "lo", 100, absl::Minutes(20),
                          absl::Minutes(pick(5, 30)), 0));
    longest = std::max(longest, absl::Minutes(20));
    SimOptions opt;
    opt.policy.aging_interval = absl::Minutes(15);
    const SimResult r = Simulate(in, opt);
    for (size_t i = 0; i < in.jobs.size(); ++i) {
      const int p = in.jobs[i].job.priority;
      ASSERT_EQ(r.jobs[i].outcome, SimOutcome::kSucceeded);
      if (p >= 1) continue;
      // Plus one interval: the stream's jobs reach the top level one
      // interval after they arrive, and those that reached it first go
      // first (aged jobs of a level rank by when they reached it, so that
      // a lower priority never passes a higher one that waited as long).
      const absl::Duration bound = (3 - p) * opt.policy.aging_interval + 3 * longest;
      EXPECT_LE(r.jobs[i].wait(), bound)
          << "seed " << seed << " job " << in.jobs[i].job.id;
    }
    // The test can fail: without aging the big job waits far longer.
    const absl::Duration big_bound = 3 * opt.policy.aging_interval + 3 * longest;
    opt.policy.aging_interval = absl::ZeroDuration();
    const SimResult no_aging = Simulate(in, opt);
    EXPECT_GT(WaitOf(in, no_aging, "big"), big_bound)
        << "seed " << seed;
  }
}

// Aging never lets a job overtake the jobs whose own priority is
// the top one. A stream of top-priority (2) jobs that keeps the budget busy
// and low jobs aged far past the interval: the top priority's longest wait
// with aging is at most its longest wait without aging plus one longest run
// (a low job admitted while no top job was queued holds its capacity until
// it ends, with or without aging).
TEST(PromisesProperty, AgingNeverDelaysTheTopPriority) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&rng](int64_t lo, int64_t hi) {
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    SimInput in;
    in.start = kStart;
    in.budgets = B(128, 24);
    absl::Duration longest = absl::ZeroDuration();
    for (int i = 0; i < 400; ++i) {
      const absl::Duration run = absl::Minutes(pick(5, 20));
      longest = std::max(longest, run);
      in.jobs.push_back(Job(absl::StrCat("top", i), absl::StrCat("top", i % 3),
                            pick(2, 8), run, absl::Seconds(pick(10, 40)) * i, 2));
    }
    for (int i = 0; i < 40; ++i) {
      const absl::Duration run = absl::Minutes(pick(5, 20));
      longest = std::max(longest, run);
      in.jobs.push_back(Job(absl::StrCat("lo", i), absl::StrCat("lo", i % 2),
                            pick(2, 16), run, absl::Minutes(pick(0, 120)),
                            static_cast<int>(pick(0, 1))));
    }
    auto top_max = [&in](const SimResult& r) {
      absl::Duration m = absl::ZeroDuration();
      for (size_t i = 0; i < in.jobs.size(); ++i) {
        if (in.jobs[i].job.priority == 2) m = std::max(m, r.jobs[i].wait());
      }
      return m;
    };
    SimOptions opt;
    opt.policy.aging_interval = absl::Minutes(5);
    const absl::Duration aged = top_max(Simulate(in, opt));
    opt.policy.aging_interval = absl::ZeroDuration();
    const absl::Duration plain = top_max(Simulate(in, opt));
    EXPECT_LE(aged, plain + longest) << "seed " << seed;
  }
}

}  // namespace
}  // namespace berth::planner
