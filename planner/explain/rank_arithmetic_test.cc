#include "planner/explain/rank_arithmetic.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "planner/explain/rank_example.h"
#include "planner/plan/plan.h"

namespace berth::planner {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

struct Case {
  State state;
  Budgets budgets;
  Policy policy;
};

// A random queue: few or many priorities, equal and unequal created_at and
// queued_at, jobs that weigh nothing or can never fit (rejected), running
// jobs, old turns, aging on or off, sometimes "fifo" or a reservation
// holder.
Case Generate(std::mt19937_64& rng) {
  auto uniform = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Case c;
  c.budgets.memory_bytes = uniform(8, 128) * kGiB;
  c.budgets.cpu_millis = uniform(0, 3) == 0 ? 0 : uniform(4, 64) * 1000;
  c.budgets.max_workers = static_cast<int32_t>(uniform(1, 20));
  const int workspaces = static_cast<int>(uniform(1, 6));
  const bool wide = uniform(0, 5) == 0;  // more priorities than a counting sort takes
  const int n = static_cast<int>(uniform(1, 80));
  const int64_t grain = uniform(0, 1) == 0 ? 60 : 1;  // coarse: many equal times
  // Sometimes one batch, queued at one instant: equal shares go by turns.
  const bool batch = uniform(0, 2) == 0;
  for (int i = 0; i < n; ++i) {
    QueuedJob q;
    q.id = absl::StrCat("job-", uniform(0, 9), "-", i);
    q.workspace = absl::StrCat("ws", uniform(0, workspaces - 1));
    q.priority = static_cast<int32_t>(wide ? uniform(-3000, 3000) : uniform(0, 2));
    const int64_t mem = uniform(0, 4) == 0 ? 0 : uniform(1, 24) * kGiB / 4;
    q.resources = {uniform(0, 4) == 0 ? 0 : uniform(1, 16) * 500, mem};
    q.created_at = kNow - absl::Seconds(uniform(0, 600) * grain);
    if (batch) {
      q.queued_at = kNow - absl::Minutes(5);
    } else if (uniform(0, 3) != 0) {
      q.queued_at = kNow - absl::Seconds(uniform(0, 600) * grain);
    }
    q.expected_duration = absl::Minutes(uniform(1, 120));
    c.state.queued.push_back(std::move(q));
  }
  for (int r = static_cast<int>(uniform(0, 4)); r > 0; --r) {
    RunningJob j;
    j.id = absl::StrCat("run-", r);
    j.workspace = absl::StrCat("ws", uniform(0, workspaces - 1));
    j.resources = {uniform(0, 8) * 500, uniform(0, 16) * kGiB / 4};
    j.started_at = kNow - absl::Minutes(uniform(0, 30));
    j.expected_duration = absl::Hours(1);
    c.state.running.push_back(std::move(j));
  }
  for (int w = 0; w < workspaces; ++w) {
    if (uniform(0, 1) == 0) c.state.workspace_turns[absl::StrCat("ws", w)] = uniform(1, 4);
  }
  const int64_t aging = uniform(0, 2);
  c.policy.aging_interval = aging == 0 ? absl::ZeroDuration()
                                       : absl::Minutes(aging == 1 ? 30 : 120) / grain;
  if (uniform(0, 5) == 0) c.policy.ranking = &FifoRanking();
  if (uniform(0, 3) == 0) {
    c.state.reservation_holder = c.state.queued[uniform(0, n - 1)].id;
  }
  return c;
}

uint64_t Seed() {
  if (const char* s = std::getenv("RANK_ARITHMETIC_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

// Sorting the queued jobs by their explained keys (AheadByKeys) gives the
// planner's ranking exactly; every job ahead has a reason, counted once.
TEST(RankArithmeticTest, ExplainedKeysReproduceThePlannersOrder) {
  const uint64_t seed = Seed();
  SCOPED_TRACE(absl::StrCat("seed ", seed, " (RANK_ARITHMETIC_SEED=", seed, " replays)"));
  std::mt19937_64 rng(seed);
  int reasons_seen[static_cast<int>(AheadReason::kReservation) + 1] = {};
  for (int round = 0; round < 400; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    const Case c = Generate(rng);
    const PlanResult result = Plan(c.state, c.budgets, c.policy, kNow);
    const RankingKeys keys = RankKeysOf(c.state, c.budgets, c.policy, kNow);
    ASSERT_EQ(keys.keys.size(), c.state.queued.size());

    // The planner's order, but for the holder (kept in its place after
    // ranking: the one job AheadByKeys does not place).
    std::vector<uint32_t> planned;
    for (const Decision& d : result.decisions) {
      if (static_cast<int64_t>(d.job) != keys.holder) planned.push_back(d.job);
    }
    std::vector<uint32_t> sorted = planned;
    std::shuffle(sorted.begin(), sorted.end(), rng);
    std::sort(sorted.begin(), sorted.end(), [&](uint32_t a, uint32_t b) {
      return AheadByKeys(keys, c.state, a, b).has_value();
    });
    ASSERT_EQ(sorted, planned) << "policy " << keys.policy;
    for (uint32_t a = 0; a < c.state.queued.size(); ++a) {
      const uint32_t b = static_cast<uint32_t>(rng() % c.state.queued.size());
      if (a == b) continue;
      ASSERT_NE(AheadByKeys(keys, c.state, a, b).has_value(),
                AheadByKeys(keys, c.state, b, a).has_value());
    }

    for (size_t k = 0; k < result.decisions.size(); ++k) {
      const RankArithmetic r =
          ExplainRank(c.state, keys, result, k, c.policy.aging_interval, 3);
      int32_t total = 0;
      for (const auto& row : r.ahead_by_reason) {
        total += row.count;
        ++reasons_seen[static_cast<int>(row.reason)];
        // Only the holder is ahead for holding the reservation.
        if (row.reason == AheadReason::kReservation) {
          ASSERT_EQ(row.count, 1);
          ASSERT_GE(keys.holder, 0);
        }
      }
      ASSERT_EQ(total, static_cast<int32_t>(result.decisions[k].jobs_ahead));
      ASSERT_LE(r.first_ahead.size(), 3u);
      const uint32_t job = result.decisions[k].job;
      ASSERT_EQ(r.effective_priority, EffectivePriority(c.state.queued[job], result));
      ASSERT_EQ(r.aged_levels, r.effective_priority - r.priority);
      ASSERT_EQ(r.holds_reservation, static_cast<int64_t>(job) == keys.holder);
    }
  }
  // The generator reaches every reason (else the test proves less than it says).
  for (int why = 0; why <= static_cast<int>(AheadReason::kReservation); ++why) {
    EXPECT_GT(reasons_seen[why], 0) << AheadReasonText(static_cast<AheadReason>(why));
  }
}

// A worked example (tools/ctl/format_rank_test.cc prints it for the docs):
// two workspaces, one with a running job, and an aged job; the share, turn and reasons are the
// ranking's.
TEST(RankArithmeticTest, SharesAndTurnsOfAWorkedExample) {
  const testing::RankExample ex = testing::MakeRankExample(kNow);
  const State& s = ex.state;
  const Budgets& b = ex.budgets;
  Policy policy;
  const PlanResult result = Plan(s, b, policy, kNow);
  const RankingKeys keys = RankKeysOf(s, b, policy, kNow);
  std::vector<std::string> order;
  for (const Decision& d : result.decisions) order.push_back(s.queued[d.job].id);
  ASSERT_EQ(order, (std::vector<std::string>{"urgent", "old", "etl-1", "etl-2", "train"}));
  const RankArithmetic old = ExplainRank(s, keys, result, 1, policy.aging_interval);
  EXPECT_EQ(old.priority, 0);
  EXPECT_EQ(old.effective_priority, 2);
  EXPECT_EQ(old.reached_level_at, kNow - absl::Minutes(300) + absl::Hours(4));
  ASSERT_EQ(old.first_ahead.size(), 1u);
  EXPECT_EQ(old.first_ahead[0].reason, AheadReason::kOwnPriority);
  const RankArithmetic train = ExplainRank(s, keys, result, 4, policy.aging_interval);
  EXPECT_EQ(train.workspace, "ml");
  // ml: 64 GiB running + 8 GiB of "urgent" (ranked ahead, a higher level).
  EXPECT_DOUBLE_EQ(train.memory_share, 72.0 / 128);
  EXPECT_DOUBLE_EQ(train.cpu_share, 5000.0 / 32000);
  EXPECT_FLOAT_EQ(static_cast<float>(train.dominant_share), 72.0f / 128);
  EXPECT_EQ(train.turn, 7u);
  EXPECT_EQ(train.position, 0u);
  ASSERT_EQ(train.first_ahead.size(), 4u);
  EXPECT_EQ(train.first_ahead[0].reason, AheadReason::kHigherPriority);
  EXPECT_EQ(train.first_ahead[1].reason, AheadReason::kHigherPriority);
  EXPECT_EQ(train.first_ahead[2].reason, AheadReason::kLowerShare);
  EXPECT_EQ(train.first_ahead[3].reason, AheadReason::kLowerShare);
  const RankArithmetic etl2 = ExplainRank(s, keys, result, 3, policy.aging_interval);
  // data: the aged job (4 GiB, ranked ahead) and etl-1 (16 GiB).
  EXPECT_DOUBLE_EQ(etl2.memory_share, 20.0 / 128);
  EXPECT_EQ(etl2.position, 1u);
  ASSERT_EQ(etl2.first_ahead.size(), 3u);
  EXPECT_EQ(etl2.first_ahead[2].reason, AheadReason::kSameWorkspace);
}

}  // namespace
}  // namespace berth::planner
