// Property tests of Plan() over thousands of seeded random workloads.
#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "planner/testing/canonical.h"
#include "planner/model/model.h"
#include "planner/plan/plan.h"
#include "planner/testing/test_simulation.h"

namespace berth::planner {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);
constexpr int kSeeds = 3000;

struct Case {
  State state;
  Budgets budgets;
};

// A random small workload: a few workspaces and pools, running jobs within
// the budgets, queued jobs of which some depend on others.
Case RandomCase(uint64_t seed, bool with_dependencies = true) {
  std::mt19937_64 rng(seed);
  auto pick = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Case c;
  Budgets& b = c.budgets;
  b.memory_bytes = pick(8, 256) * kGiB;
  b.cpu_millis = pick(4, 64) * 1000;
  b.max_workers = static_cast<int32_t>(pick(1, 16));
  b.pool_max_workers["database"] = static_cast<int32_t>(pick(0, 3));
  b.workspace_max_workers = static_cast<int32_t>(pick(0, 1) ? pick(1, 4) : 0);
  const int num_ws = static_cast<int>(pick(1, 5));
  auto resources = [&] {
    return Resources{pick(1, 16) * 500, pick(1, 64) * kGiB / 2};
  };
  auto pool = [&] { return pick(0, 4) == 0 ? "database" : "default"; };

  int64_t mem = 0, cpu = 0;
  std::map<std::string, int> pool_used, ws_used;
  const int running = static_cast<int>(pick(0, b.max_workers));
  for (int i = 0; i < running; ++i) {
    RunningJob r;
    r.id = absl::StrCat("r", i);
    r.workspace = absl::StrCat("ws", pick(0, num_ws - 1));
    r.pool = pool();
    r.resources = resources();
    const int pool_cap = r.pool == "database" ? b.pool_max_workers["database"] : 0;
    if (mem + r.resources.memory_bytes > b.memory_bytes ||
        cpu + r.resources.cpu_millis > b.cpu_millis ||
        (pool_cap > 0 && pool_used[r.pool] >= pool_cap) ||
        (b.workspace_max_workers > 0 &&
         ws_used[r.workspace] >= b.workspace_max_workers))
      continue;
    mem += r.resources.memory_bytes;
    cpu += r.resources.cpu_millis;
    ++pool_used[r.pool];
    ++ws_used[r.workspace];
    r.expected_duration = absl::Minutes(pick(1, 240));
    r.started_at = kNow - absl::Minutes(pick(0, 60));
    c.state.running.push_back(r);
  }
  const int queued = static_cast<int>(pick(0, 40));
  for (int i = 0; i < queued; ++i) {
    QueuedJob q;
    q.id = absl::StrCat("q", i);
    q.workspace = absl::StrCat("ws", pick(0, num_ws - 1));
    q.pool = pool();
    q.priority = static_cast<int32_t>(pick(0, 2));
    q.resources = resources();
    if (pick(0, 30) == 0) q.resources.memory_bytes = b.memory_bytes + 1;
    q.created_at = kNow - absl::Minutes(pick(0, 100));
    q.expected_duration = absl::Minutes(pick(1, 240));
    if (with_dependencies && i > 0 && pick(0, 9) == 0) {
      q.depends_on.push_back(absl::StrCat("q", pick(0, i - 1)));
      if (pick(0, 3) == 0 && running > 0)
        q.depends_on.push_back(absl::StrCat("r", pick(0, running - 1)));
    }
    c.state.queued.push_back(q);
  }
  if (pick(0, 20) == 0) c.state.pools_in_maintenance.insert("database");
  return c;
}

struct Counters {
  int64_t mem, cpu, workers;
  std::map<std::string, int64_t> pool, ws;
};

Counters Free(const Case& c) {
  Counters f{c.budgets.memory_bytes, c.budgets.cpu_millis, c.budgets.max_workers,
             {}, {}};
  for (const RunningJob& r : c.state.running) {
    f.mem -= r.resources.memory_bytes;
    f.cpu -= r.resources.cpu_millis;
    f.workers -= 1;
    f.pool[r.pool] += 1;
    f.ws[r.workspace] += 1;
  }
  return f;
}

int64_t PoolCap(const Budgets& b, const std::string& pool) {
  auto it = b.pool_max_workers.find(pool);
  return it == b.pool_max_workers.end() || it->second == 0 ? INT64_MAX : it->second;
}

bool FitsNow(const Case& c, const Counters& f, const QueuedJob& j) {
  const int64_t ws_cap =
      c.budgets.workspace_max_workers > 0 ? c.budgets.workspace_max_workers : INT64_MAX;
  auto get = [](const std::map<std::string, int64_t>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? 0 : it->second;
  };
  return f.workers >= 1 && get(f.pool, j.pool) < PoolCap(c.budgets, j.pool) &&
         get(f.ws, j.workspace) < ws_cap && j.resources.memory_bytes <= f.mem &&
         j.resources.cpu_millis <= f.cpu;
}

void Take(Counters& f, const QueuedJob& j) {
  f.mem -= j.resources.memory_bytes;
  f.cpu -= j.resources.cpu_millis;
  f.workers -= 1;
  f.pool[j.pool] += 1;
  f.ws[j.workspace] += 1;
}

// When a holder is expected to end (plan.h, the overrun rule): its
// estimate's end, or for a job past it the estimate doubled until the end
// is after now.
absl::Time EndOf(const RunningJob& h) {
  absl::Duration d = h.expected_duration;
  while (h.started_at + d <= kNow) d *= 2;
  return h.started_at + d;
}

// Earliest time the job fits, from scratch: a brute force over candidate
// times (now and every expected end of the given holders).
absl::Time BruteForceEarliest(const Case& c,
                              const std::vector<RunningJob>& holders,
                              const QueuedJob& j) {
  std::vector<absl::Time> times = {kNow};
  for (const RunningJob& h : holders) times.push_back(EndOf(h));
  std::sort(times.begin(), times.end());
  for (absl::Time t : times) {
    Case at = c;
    at.state.running.clear();
    for (const RunningJob& h : holders) {
      if (EndOf(h) > t)
        at.state.running.push_back(h);
    }
    if (FitsNow(at, Free(at), j)) return t;
  }
  return absl::InfiniteFuture();
}

bool IsCapacityWait(Reason r) {
  return r == Reason::kWaitingForMemory || r == Reason::kWaitingForCpu ||
         r == Reason::kWaitingForWorkerSlot || r == Reason::kWaitingForPoolSlot ||
         r == Reason::kWaitingForWorkspaceCap;
}

TEST(PlanPropertyTest, NeverExceedsAnyBudget) {
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    const Case c = RandomCase(seed);
    const PlanResult r = Plan(c.state, c.budgets, Policy(), kNow);
    Counters f = Free(c);
    for (const Decision& d : r.decisions) {
      if (d.verdict == Verdict::kAdmit) Take(f, c.state.queued[d.job]);
    }
    ASSERT_GE(f.mem, 0) << "seed " << seed;
    ASSERT_GE(f.cpu, 0) << "seed " << seed;
    ASSERT_GE(f.workers, 0) << "seed " << seed;
    for (const auto& [pool, n] : f.pool) {
      ASSERT_LE(n, PoolCap(c.budgets, pool)) << "seed " << seed;
    }
    if (c.budgets.workspace_max_workers > 0) {
      for (const auto& [ws, n] : f.ws) {
        ASSERT_LE(n, c.budgets.workspace_max_workers) << "seed " << seed;
      }
    }
    ASSERT_EQ(r.used_after.memory_bytes, c.budgets.memory_bytes - f.mem);
    ASSERT_EQ(r.used_after.workers, c.budgets.max_workers - f.workers);
  }
}

TEST(PlanPropertyTest, DeterministicUnderShuffledInput) {
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    const Case c = RandomCase(seed);
    const std::string want =
        CanonicalString(c.state, Plan(c.state, c.budgets, Policy(), kNow));
    std::mt19937_64 rng(seed * 7 + 1);
    for (int shuffle = 0; shuffle < 3; ++shuffle) {
      State s = c.state;
      std::shuffle(s.queued.begin(), s.queued.end(), rng);
      std::shuffle(s.running.begin(), s.running.end(), rng);
      for (QueuedJob& q : s.queued) std::shuffle(q.depends_on.begin(), q.depends_on.end(), rng);
      const std::string got = CanonicalString(s, Plan(s, c.budgets, Policy(), kNow));
      ASSERT_EQ(got, want) << "seed " << seed;
    }
  }
}

TEST(PlanPropertyTest, ReusedPlannerGivesTheSamePlans) {
  Planner planner;
  PlanResult reused;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    const Case c = RandomCase(seed);
    Policy policy;
    if (seed % 3 == 0) policy.ranking = &FifoRanking();
    planner.Plan(c.state, c.budgets, policy, kNow, reused);
    ASSERT_EQ(CanonicalString(c.state, reused),
              CanonicalString(c.state, Plan(c.state, c.budgets, policy, kNow)))
        << "seed " << seed;
  }
}

// Walks the decisions with independent accounting: before the reservation
// every eligible job that fits is admitted; a capacity wait really does not
// fit in its binding dimension; WAITING_FOR_PRIORITY only comes after the
// reservation; backfilled jobs do not delay the reservation.
TEST(PlanPropertyTest, NoJobSkippedExceptForBackfillThatDoesNotDelay) {
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    const Case c = RandomCase(seed);
    const PlanResult r = Plan(c.state, c.budgets, Policy(), kNow);
    Counters f = Free(c);
    std::vector<RunningJob> holders = c.state.running;
    for (size_t k = 0; k < r.decisions.size(); ++k) {
      const Decision& d = r.decisions[k];
      const QueuedJob& j = c.state.queued[d.job];
      const bool after_reservation =
          r.reserved_decision >= 0 && static_cast<int64_t>(k) > r.reserved_decision;
      if (d.verdict == Verdict::kAdmit) {
        ASSERT_TRUE(FitsNow(c, f, j)) << "seed " << seed << " job " << j.id;
        Take(f, j);
        RunningJob h;
        h.id = j.id;
        h.workspace = j.workspace;
        h.pool = j.pool;
        h.resources = j.resources;
        h.started_at = kNow;
        h.expected_duration = j.expected_duration;
        holders.push_back(h);
      } else if (IsCapacityWait(d.reason)) {
        ASSERT_FALSE(FitsNow(c, f, j)) << "seed " << seed << " job " << j.id;
      } else if (d.reason == Reason::kWaitingForPriority) {
        ASSERT_TRUE(after_reservation) << "seed " << seed;
        ASSERT_TRUE(FitsNow(c, f, j)) << "seed " << seed;
      }
      if (static_cast<int64_t>(k) == r.reserved_decision) {
        ASSERT_TRUE(IsCapacityWait(d.reason)) << "seed " << seed;
        // The reservation is the earliest start given what is ahead.
        ASSERT_EQ(BruteForceEarliest(c, holders, j), r.reservation_start)
            << "seed " << seed;
      }
    }
    if (r.reserved_decision >= 0) {
      // With everything admitted (backfill included) the head still starts
      // by its reservation.
      const QueuedJob& head = c.state.queued[r.decisions[r.reserved_decision].job];
      ASSERT_LE(BruteForceEarliest(c, holders, head), r.reservation_start)
          << "seed " << seed;
    }
  }
}

TEST(PlanPropertyTest, ShortfallIsNeedMinusFreeAndSuggestionAdmits) {
  int checked = 0;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    const Case c = RandomCase(seed);
    const PlanResult r = Plan(c.state, c.budgets, Policy(), kNow);
    Counters f = Free(c);
    for (size_t k = 0; k < r.decisions.size(); ++k) {
      const Decision& d = r.decisions[k];
      const QueuedJob& j = c.state.queued[d.job];
      if (d.verdict == Verdict::kAdmit) Take(f, j);
      if (d.reason == Reason::kWaitingForMemory) {
        ASSERT_EQ(d.needed, j.resources.memory_bytes);
        ASSERT_EQ(d.free, f.mem) << "seed " << seed;
        ASSERT_EQ(d.shortfall(), j.resources.memory_bytes - f.mem);
        ASSERT_GT(d.shortfall(), 0);
      }
      if (d.reason == Reason::kWaitingForCpu) {
        ASSERT_EQ(d.free, f.cpu) << "seed " << seed;
        ASSERT_EQ(d.shortfall(), j.resources.cpu_millis - f.cpu);
      }
      const bool resource_wait = d.reason == Reason::kWaitingForMemory ||
                                 d.reason == Reason::kWaitingForCpu ||
                                 d.reason == Reason::kWaitingForPriority;
      if (!resource_wait || d.fits_memory_bytes <= 0 || d.fits_cpu_millis <= 0)
        continue;
      // Apply the suggested change and re-plan: the job must be admitted.
      State changed = c.state;
      Resources& res = changed.queued[d.job].resources;
      res.memory_bytes = std::min(res.memory_bytes, d.fits_memory_bytes);
      res.cpu_millis = std::min(res.cpu_millis, d.fits_cpu_millis);
      const PlanResult again = Plan(changed, c.budgets, Policy(), kNow);
      bool admitted = false;
      for (const Decision& e : again.decisions) {
        if (e.job == d.job) admitted = e.verdict == Verdict::kAdmit;
      }
      ASSERT_TRUE(admitted) << "seed " << seed << " job " << j.id << " "
                            << ReasonName(d.reason);
      ++checked;
    }
  }
  EXPECT_GT(checked, 500);  // the property was really exercised
}

// Bounded wait: with exact durations, a job holding a reservation starts no
// later than the reservation's start, and every job eventually starts.
void CheckBoundedWait(const Policy& policy, bool one_workspace) {
  int reservations = 0;
  for (uint64_t seed = 0; seed < kSeeds / 3; ++seed) {
    Case c = RandomCase(seed, /*with_dependencies=*/false);
    c.state.pools_in_maintenance.clear();
    for (QueuedJob& q : c.state.queued) {
      if (one_workspace) q.workspace = "ws";
    }
    // Only jobs that can ever run (no NEVER_FITS).
    const PlanResult first = Plan(c.state, c.budgets, policy, kNow);
    std::vector<QueuedJob> valid;
    for (const Decision& d : first.decisions) {
      if (d.verdict != Verdict::kReject) valid.push_back(c.state.queued[d.job]);
    }
    c.state.queued = valid;
    const testing::SimulationResult sim =
        testing::Simulate(c.state, c.budgets, policy, kNow);
    ASSERT_TRUE(sim.completed) << "seed " << seed;
    ASSERT_EQ(sim.started.size(), c.state.queued.size()) << "seed " << seed;
    for (const auto& [id, at] : sim.reservations) {
      ASSERT_LE(sim.started.at(id), at) << "seed " << seed << " job " << id;
      ++reservations;
    }
  }
  EXPECT_GT(reservations, 100);
}

TEST(PlanPropertyTest, BoundedWaitFifo) {
  Policy fifo;
  fifo.ranking = &FifoRanking();
  CheckBoundedWait(fifo, /*one_workspace=*/false);
}

TEST(PlanPropertyTest, BoundedWaitDrfOneWorkspace) {
  CheckBoundedWait(Policy(), /*one_workspace=*/true);
}

// Across workspaces DRF re-ranks as shares change, so a reservation may move
// to another job; still, nobody starves.
TEST(PlanPropertyTest, EveryJobStartsUnderDrfAcrossWorkspaces) {
  for (uint64_t seed = 0; seed < kSeeds / 3; ++seed) {
    Case c = RandomCase(seed, /*with_dependencies=*/false);
    c.state.pools_in_maintenance.clear();
    const PlanResult first = Plan(c.state, c.budgets, Policy(), kNow);
    std::vector<QueuedJob> valid;
    for (const Decision& d : first.decisions) {
      if (d.verdict != Verdict::kReject) valid.push_back(c.state.queued[d.job]);
    }
    c.state.queued = valid;
    const testing::SimulationResult sim =
        testing::Simulate(c.state, c.budgets, Policy(), kNow);
    ASSERT_TRUE(sim.completed) << "seed " << seed;
    ASSERT_EQ(sim.started.size(), c.state.queued.size()) << "seed " << seed;
  }
}

TEST(PlanPropertyTest, DrfGivesEqualDemandEqualAdmissions) {
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&rng](int64_t lo, int64_t hi) {
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    State s;
    Budgets b;
    b.memory_bytes = pick(8, 256) * kGiB;
    b.cpu_millis = pick(4, 64) * 1000;
    b.max_workers = static_cast<int32_t>(pick(1, 40));
    const Resources size{pick(1, 8) * 500, pick(1, 32) * kGiB / 2};
    const int per_ws = static_cast<int>(pick(1, 30));
    for (const char* ws : {"alpha", "beta"}) {
      for (int i = 0; i < per_ws; ++i) {
        QueuedJob q;
        q.id = absl::StrCat(ws, "-", i);
        q.workspace = ws;
        q.resources = size;
        q.created_at = kNow - absl::Seconds(pick(0, 10000));
        s.queued.push_back(q);
      }
    }
    const PlanResult r = Plan(s, b, Policy(), kNow);
    int alpha = 0, beta = 0;
    for (const Decision& d : r.decisions) {
      if (d.verdict != Verdict::kAdmit) continue;
      (s.queued[d.job].workspace == "alpha" ? alpha : beta) += 1;
    }
    ASSERT_LE(std::abs(alpha - beta), 1) << "seed " << seed;
  }
}

}  // namespace
}  // namespace berth::planner
