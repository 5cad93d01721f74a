// Plan() on input no valid snapshot would hold: it must not crash, must
// decide every job exactly once, and must reject what cannot run.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "planner/testing/canonical.h"
#include "planner/explain/explain.h"
#include "planner/plan/plan.h"

namespace berth::planner {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

void CheckWellFormed(const State& s, const Budgets& b, const Policy& p, const PlanResult& r) {
  ASSERT_EQ(r.decisions.size(), s.queued.size());
  std::vector<bool> seen(s.queued.size(), false);
  const StartEstimateTable etas(s, b, p, r);
  for (size_t k = 0; k < r.decisions.size(); ++k) {
    const Decision& d = r.decisions[k];
    ASSERT_LT(d.job, s.queued.size());
    ASSERT_FALSE(seen[d.job]);
    seen[d.job] = true;
    ASSERT_NE(d.verdict, Verdict::kUnspecified);
    ASSERT_EQ(d.verdict == Verdict::kReject, d.problem != Problem::kNone);
    if (d.verdict == Verdict::kAdmit) {
      const Resources& res = s.queued[d.job].resources;
      ASSERT_GT(res.memory_bytes, 0);
      ASSERT_GT(res.cpu_millis, 0);
    }
    // Rendering never crashes either.
    (void)Explain(s, b, r, k, etas);
    (void)DecisionSummary(s, r, k);
  }
  (void)CanonicalString(s, r);
}

int64_t Extreme(std::mt19937_64& rng) {
  static const int64_t kValues[] = {0, -1, 1, INT64_MAX, INT64_MIN, INT64_MAX / 2,
                                    int64_t{1} << 40, 1000, -(int64_t{1} << 40)};
  return kValues[rng() % (sizeof(kValues) / sizeof(kValues[0]))];
}

TEST(BadInputTest, RandomGarbageNeverCrashes) {
  for (uint64_t seed = 0; seed < 3000; ++seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&rng](int64_t lo, int64_t hi) {
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    State s;
    Budgets b;
    b.memory_bytes = pick(0, 3) ? pick(1, 1000) : Extreme(rng);
    b.cpu_millis = pick(0, 3) ? pick(1, 1000) : Extreme(rng);
    b.max_workers = static_cast<int32_t>(pick(-2, 6));
    b.workspace_max_workers = static_cast<int32_t>(pick(-1, 3));
    b.pool_max_workers["p1"] = static_cast<int32_t>(pick(-1, 2));
    s.paused = pick(0, 10) == 0;
    if (pick(0, 5) == 0) s.pools_in_maintenance.insert("p1");
    const int ids = static_cast<int>(pick(1, 12));  // few ids: duplicates
    auto id = [&] { return absl::StrCat("j", pick(0, ids)); };
    auto time = [&] {
      switch (pick(0, 5)) {
        case 0: return absl::InfinitePast();
        case 1: return absl::InfiniteFuture();
        default: return kNow - absl::Minutes(pick(-100, 100));
      }
    };
    auto duration = [&] {
      switch (pick(0, 5)) {
        case 0: return absl::InfiniteDuration();
        case 1: return -absl::InfiniteDuration();
        case 2: return absl::ZeroDuration();
        default: return absl::Minutes(pick(-10, 100));
      }
    };
    for (int i = static_cast<int>(pick(0, 6)); i > 0; --i) {
      RunningJob r;
      r.id = id();
      r.workspace = absl::StrCat("w", pick(0, 2));
      r.pool = pick(0, 1) ? "default" : absl::StrCat("p", pick(0, 2));
      r.resources = {pick(0, 1) ? pick(1, 300) : Extreme(rng),
                     pick(0, 1) ? pick(1, 300) : Extreme(rng)};
      r.started_at = time();
      r.expected_duration = duration();
      s.running.push_back(r);
    }
    for (int i = static_cast<int>(pick(0, 20)); i > 0; --i) {
      QueuedJob q;
      q.id = pick(0, 20) ? id() : "";
      q.workspace = absl::StrCat("w", pick(0, 3));
      q.pool = pick(0, 2) ? "default" : absl::StrCat("p", pick(0, 2));
      q.priority = static_cast<int32_t>(pick(0, 5) ? pick(0, 3) : rng());
      q.resources = {pick(0, 3) ? pick(1, 300) : Extreme(rng),
                     pick(0, 3) ? pick(1, 300) : Extreme(rng)};
      q.created_at = time();
      q.expected_duration = duration();
      for (int d = static_cast<int>(pick(0, 3)) - 1; d > 0; --d) q.depends_on.push_back(id());
      s.queued.push_back(q);
    }
    for (int i = static_cast<int>(pick(0, 4)); i > 0; --i) {
      s.finished[id()] = pick(0, 1) ? DependencyOutcome::kSucceeded
                                    : DependencyOutcome::kFailed;
    }
    for (bool backfill : {true, false}) {
      for (const RankingPolicy* ranking : {&DrfRanking(), &FifoRanking()}) {
        Policy p;
        p.backfill = backfill;
        p.ranking = ranking;
        p.default_duration = pick(0, 3) ? absl::Hours(1) : duration();
        const PlanResult r = Plan(s, b, p, kNow);
        ASSERT_NO_FATAL_FAILURE(CheckWellFormed(s, b, p, r)) << "seed " << seed;
        // Shuffled input, same plan (duplicates included).
        State t = s;
        std::shuffle(t.queued.begin(), t.queued.end(), rng);
        std::shuffle(t.running.begin(), t.running.end(), rng);
        ASSERT_EQ(CanonicalString(t, Plan(t, b, p, kNow)), CanonicalString(s, r))
            << "seed " << seed;
      }
    }
  }
}

TEST(BadInputTest, DuplicatesAreAllRejected) {
  State s;
  QueuedJob a;
  a.id = "x";
  a.workspace = "w";
  a.resources = {100, 100};
  QueuedJob b = a;
  b.priority = 3;
  QueuedJob dependent = a;
  dependent.id = "y";
  dependent.depends_on = {"x"};
  s.queued = {a, b, dependent};
  Budgets budgets;
  budgets.memory_bytes = budgets.cpu_millis = 1000;
  budgets.max_workers = 10;
  const PlanResult r = Plan(s, budgets, Policy(), kNow);
  for (const Decision& d : r.decisions) {
    EXPECT_EQ(d.verdict, Verdict::kReject);
    EXPECT_EQ(d.problem, s.queued[d.job].id == "x" ? Problem::kDuplicateId
                                                   : Problem::kDependencyRejected);
  }
}

TEST(BadInputTest, LongDependencyChainsDoNotRecurse) {
  State s;
  const int n = 200'000;
  for (int i = 0; i < n; ++i) {
    QueuedJob q;
    q.id = absl::StrCat("c", i);
    q.workspace = "w";
    q.resources = {1, 1};
    if (i + 1 < n) q.depends_on = {absl::StrCat("c", i + 1)};
    s.queued.push_back(q);
  }
  s.queued.back().depends_on = {"c0"};  // one big cycle
  Budgets b;
  b.memory_bytes = b.cpu_millis = 1 << 20;
  b.max_workers = 100;
  const PlanResult r = Plan(s, b, Policy(), kNow);
  for (const Decision& d : r.decisions) {
    ASSERT_EQ(d.problem, Problem::kDependencyCycle);
  }
  s.queued.back().depends_on.clear();  // now a chain: the last one runs
  const PlanResult chain = Plan(s, b, Policy(), kNow);
  EXPECT_EQ(chain.admitted_count, 1);
}

TEST(BadInputTest, EmptyState) {
  const PlanResult r = Plan(State(), Budgets(), Policy(), kNow);
  EXPECT_TRUE(r.decisions.empty());
  EXPECT_EQ(r.reserved_decision, -1);
}

TEST(BadInputTest, NullRankingMeansDrf) {
  State s;
  QueuedJob q;
  q.id = "a";
  q.resources = {1, 1};
  s.queued = {q};
  Budgets b;
  b.memory_bytes = b.cpu_millis = b.max_workers = 1;
  Policy p;
  p.ranking = nullptr;
  EXPECT_EQ(Plan(s, b, p, kNow).admitted_count, 1);
}

}  // namespace
}  // namespace berth::planner
