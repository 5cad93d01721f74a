// Unit tests of the planner's promises: the overrun rule, the
// reservation holder that keeps its place, aging, and the fair tie-break
// between workspaces. Whole-workload properties are in
// promises_property_test.cc.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "planner/model/model.h"
#include "planner/plan/plan.h"
#include "planner/plan/prepare.h"

namespace berth::planner {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

QueuedJob Q(std::string id, std::string ws, int64_t mem_gib, int priority = 0,
            absl::Duration age = absl::Minutes(1)) {
  QueuedJob q;
  q.id = std::move(id);
  q.workspace = std::move(ws);
  q.priority = priority;
  q.resources = {1000, mem_gib * kGiB};
  q.created_at = kNow - age;
  q.expected_duration = absl::Minutes(20);
  return q;
}

RunningJob R(std::string id, int64_t mem_gib, absl::Duration ago,
             absl::Duration estimate, std::string ws = "small") {
  RunningJob r;
  r.id = std::move(id);
  r.workspace = std::move(ws);
  r.resources = {1000, mem_gib * kGiB};
  r.started_at = kNow - ago;
  r.expected_duration = estimate;
  return r;
}

Budgets B(int64_t mem_gib = 128) {
  Budgets b;
  b.memory_bytes = mem_gib * kGiB;
  b.cpu_millis = 1'000'000;
  b.max_workers = 1000;
  return b;
}

std::vector<std::string> Ids(const State& s, const PlanResult& r) {
  std::vector<std::string> ids;
  for (const Decision& d : r.decisions) ids.push_back(s.queued[d.job].id);
  return ids;
}

const Decision& Of(const State& s, const PlanResult& r, const std::string& id) {
  for (const Decision& d : r.decisions) {
    if (s.queued[d.job].id == id) return d;
  }
  static const Decision kMissing;
  ADD_FAILURE() << "no decision for " << id;
  return kMissing;
}

TEST(ExpectedEndTest, DoublesTheEstimateUntilTheEndIsAfterNow) {
  const absl::Duration est = absl::Minutes(10);
  // Not overdue: the estimate's end.
  EXPECT_EQ(internal::ExpectedEnd(kNow - absl::Minutes(4), est, kNow),
            kNow + absl::Minutes(6));
  // 15 min in: 2 x 10 min, ends in 5 min.
  EXPECT_EQ(internal::ExpectedEnd(kNow - absl::Minutes(15), est, kNow),
            kNow + absl::Minutes(5));
  // Exactly at 20 min: never "now", 40 min.
  EXPECT_EQ(internal::ExpectedEnd(kNow - absl::Minutes(20), est, kNow),
            kNow + absl::Minutes(20));
  // 100 min in: 160 min.
  EXPECT_EQ(internal::ExpectedEnd(kNow - absl::Minutes(100), est, kNow),
            kNow + absl::Minutes(60));
  EXPECT_EQ(internal::ExpectedEnd(absl::InfinitePast(), est, kNow),
            absl::InfiniteFuture());
}

// The first scenario at one instant: 2 GiB jobs estimated at 6.7 min
// have run 20 min. The 100 GiB job's reservation is not "in 0 s", and a
// small job that fits now does not backfill into what the big job needs.
TEST(OverrunTest, ReservationSurvivesOverrunningJobs) {
  State s;
  for (int i = 0; i < 31; ++i) {
    s.running.push_back(R(absl::StrCat("r", i), 2, absl::Minutes(20),
                          absl::Seconds(400)));
  }
  s.queued = {Q("big", "big", 120, 0, absl::Minutes(5)),
              Q("small", "small", 10, 0, absl::Minutes(1))};
  const PlanResult r = Plan(s, B(), Policy(), kNow);
  const Decision& big = Of(s, r, "big");
  ASSERT_TRUE(big.reserved);
  EXPECT_GT(r.reservation_start, kNow);
  // 20 min > 2 x 400 s: each is expected to end at 4 x 400 s = 26m40s.
  EXPECT_EQ(r.reservation_start, kNow + absl::Seconds(1600) - absl::Minutes(20));
  const Decision& small = Of(s, r, "small");
  EXPECT_EQ(small.verdict, Verdict::kWait);
  EXPECT_EQ(small.reason, Reason::kWaitingForPriority);
  EXPECT_EQ(small.dimension, Dimension::kMemory);
}

// Fair share moves workspace "a" ahead of the holder "b1"; the holder keeps
// its place. A job of higher priority still takes the reservation.
TEST(HolderTest, KeepsTheReservationUnlessHigherPriorityArrives) {
  State s;
  s.running = {R("rb", 60, absl::Minutes(1), absl::Hours(1), "b"),
               R("ra", 60, absl::Minutes(1), absl::Hours(2), "a")};
  s.queued = {Q("a1", "a", 100), Q("b1", "b", 100)};
  s.queued[0].created_at = s.queued[1].created_at = kNow - absl::Minutes(1);
  Policy p;
  const PlanResult free = Plan(s, B(), p, kNow);
  // Equal shares (60 GiB each), equal created_at: one of them holds.
  const std::string first = s.queued[free.decisions[free.reserved_decision].job].id;
  const std::string other = first == "a1" ? "b1" : "a1";
  s.reservation_holder = other;
  const PlanResult kept = Plan(s, B(), p, kNow);
  EXPECT_EQ(Ids(s, kept).front(), other);
  EXPECT_TRUE(Of(s, kept, other).reserved);

  s.queued.push_back(Q("urgent", "c", 100, 5));
  const PlanResult taken = Plan(s, B(), p, kNow);
  EXPECT_TRUE(Of(s, taken, "urgent").reserved);
  EXPECT_FALSE(Of(s, taken, other).reserved);

  // A holder no longer queued is ignored.
  s.reservation_holder.clear();
  const std::vector<std::string> none = Ids(s, Plan(s, B(), p, kNow));
  s.reservation_holder = "gone";
  EXPECT_EQ(Ids(s, Plan(s, B(), p, kNow)), none);
}

TEST(HolderTest, CarryReservationKeepsTheFirstPromise) {
  State s;
  s.running = {R("r", 100, absl::Minutes(1), absl::Minutes(30))};
  s.queued = {Q("big", "b", 100)};
  const PlanResult first = Plan(s, B(), Policy(), kNow);
  ASSERT_GE(first.reserved_decision, 0);
  State next = s;
  CarryReservation(s, first, next);
  EXPECT_EQ(next.reservation_holder, "big");
  EXPECT_EQ(next.reservation_promised, first.reservation_start);
  // Later, the estimate proved short: the new plan's start moves, the first
  // promise stays — and once it has passed, the reservation is overdue.
  const absl::Time later = first.reservation_start + absl::Minutes(1);
  const PlanResult second = Plan(next, B(), Policy(), later);
  State third = next;
  CarryReservation(next, second, third);
  EXPECT_EQ(third.reservation_promised, first.reservation_start);
  EXPECT_GT(second.reservation_start, first.reservation_start);
  // Nothing reserved: cleared.
  State empty;
  CarryReservation(empty, Plan(empty, B(), Policy(), kNow), third);
  EXPECT_TRUE(third.reservation_holder.empty());
  EXPECT_EQ(third.reservation_promised, absl::InfiniteFuture());
}

// Due but blocked: the holder's first promise has passed. A small job that
// would end before the (moved) reservation by its estimate, and fits what
// the plan expected running jobs to free, no longer backfills.
TEST(OverrunTest, OverdueReservationStopsBackfillOnEstimates) {
  State s;
  s.running = {R("r", 60, absl::Minutes(50), absl::Minutes(30))};
  s.queued = {Q("big", "b", 100), Q("small", "s", 10)};
  s.queued[1].expected_duration = absl::Minutes(1);
  const PlanResult before = Plan(s, B(), Policy(), kNow);
  ASSERT_TRUE(Of(s, before, "big").reserved);
  EXPECT_EQ(Of(s, before, "small").verdict, Verdict::kAdmit);  // ends first
  s.reservation_holder = "big";
  s.reservation_promised = kNow - absl::Minutes(1);
  const PlanResult overdue = Plan(s, B(), Policy(), kNow);
  EXPECT_TRUE(Of(s, overdue, "big").reserved);
  EXPECT_EQ(Of(s, overdue, "small").reason, Reason::kWaitingForPriority);
}

TEST(AgingTest, EffectivePriorityRisesToTheCeiling) {
  const absl::Duration step = absl::Minutes(30);
  EXPECT_EQ(internal::AgedPriority(0, kNow - absl::Minutes(29), kNow, step, 3), 0);
  EXPECT_EQ(internal::AgedPriority(0, kNow - absl::Minutes(30), kNow, step, 3), 1);
  EXPECT_EQ(internal::AgedPriority(0, kNow - absl::Minutes(61), kNow, step, 3), 2);
  EXPECT_EQ(internal::AgedPriority(0, kNow - absl::Hours(50), kNow, step, 3), 3);
  // Without a created_at (at or before the Unix epoch) a job does not age.
  EXPECT_EQ(internal::AgedPriority(0, absl::InfinitePast(), kNow, step, 3), 0);
  EXPECT_EQ(internal::AgedPriority(0, absl::UnixEpoch(), kNow, step, 3), 0);
  EXPECT_EQ(internal::AgedPriority(0, kNow - absl::Hours(5), kNow,
                                   absl::ZeroDuration(), 3), 0);
  EXPECT_EQ(internal::AgedPriority(5, kNow - absl::Hours(5), kNow, step, 3), 5);
}

TEST(AgingTest, OldLowPriorityJobRanksRightBelowTheTopLevel) {
  State s;
  s.queued = {Q("old-low", "w", 1, 0, absl::Minutes(65)),
              Q("new-high", "w", 1, 2, absl::Minutes(1)),
              Q("mid", "w", 1, 1, absl::Minutes(10))};
  Policy p;
  p.aging_interval = absl::Minutes(30);
  // Aged to 2 (the ceiling): after new-high, whose own priority 2 is (aging
  // never inverts the top priority), ahead of mid.
  EXPECT_EQ(Ids(s, Plan(s, B(), p, kNow)),
            (std::vector<std::string>{"new-high", "old-low", "mid"}));
  p.aging_interval = absl::ZeroDuration();
  EXPECT_EQ(Ids(s, Plan(s, B(), p, kNow)),
            (std::vector<std::string>{"new-high", "mid", "old-low"}));
  // Never above the highest queued priority: with only low jobs it is a
  // plain fair-share ranking.
  s.queued = {Q("x", "w", 1, 0, absl::Hours(9)), Q("y", "v", 1, 0, absl::Minutes(1))};
  p.aging_interval = absl::Minutes(30);
  const PlanResult r = Plan(s, B(), p, kNow);
  EXPECT_EQ(r.aging_ceiling, 0);
}

// One created_at for every job, long ago: every job below the top is aged
// to the top level, and they rank by when they reached it — the higher own
// priority earlier — so the order is the one without aging (a
// constant created_at never erases priorities).
TEST(AgingTest, ConstantCreatedAtKeepsThePriorityOrder) {
  State s;
  const absl::Time t = kNow - absl::Hours(100);
  for (int prio = 0; prio <= 3; ++prio) {
    for (int w = 0; w < 3; ++w) {
      QueuedJob q = Q(absl::StrCat("p", prio, "-w", w), absl::StrCat("w", w), 1, prio);
      q.created_at = t;
      s.queued.push_back(q);
    }
  }
  Policy p;
  p.aging_interval = absl::Minutes(30);
  // The priorities in ranking order (fair share may order the workspaces
  // of one level differently: aged jobs are dated by when they reached it).
  auto priorities = [&s](const PlanResult& r) {
    std::string out;
    for (const Decision& d : r.decisions) out += absl::StrCat(s.queued[d.job].priority);
    return out;
  };
  const PlanResult aged = Plan(s, B(), p, kNow);
  EXPECT_GT(EffectivePriority(s.queued[0], aged), 0);  // p0-w0 was aged
  EXPECT_EQ(priorities(aged), "333222111000");
  p.aging_interval = absl::ZeroDuration();
  EXPECT_EQ(priorities(Plan(s, B(), p, kNow)), "333222111000");
}

// Aged jobs of one level rank by when they reached it (here also oldest
// first: the longest wait is the one to bound), after the jobs whose own
// priority the level is; a job not aged that far ranks below.
TEST(AgingTest, AgedJobsOfOneLevelRankOldestFirst) {
  State s;
  // top: priority 2, its own. a: priority 0, waited 75 min -> level 2.
  // b: priority 1, waited 40 min -> level 2. c: priority 1, waited 100 min
  // -> level 2. d: priority 0, waited 40 min -> level 1. e: priority 1,
  // waited 10 min: its own level 1, ahead of d.
  s.queued = {Q("top", "w", 1, 2, absl::Minutes(1)), Q("a", "w", 1, 0, absl::Minutes(75)),
              Q("b", "w", 1, 1, absl::Minutes(40)), Q("c", "w", 1, 1, absl::Minutes(100)),
              Q("d", "w", 1, 0, absl::Minutes(40)), Q("e", "w", 1, 1, absl::Minutes(10))};
  Policy p;
  p.aging_interval = absl::Minutes(30);
  EXPECT_EQ(Ids(s, Plan(s, B(), p, kNow)),
            (std::vector<std::string>{"top", "c", "a", "b", "e", "d"}));
}

// Equal shares, jobs queued together: the workspace admitted least recently
// goes first, whatever its jobs' created_at (created_at orders jobs within a
// workspace) and whatever the names.
TEST(TieBreakTest, TurnsNotCreatedAtDecideBetweenEqualWorkspaces) {
  State s;
  s.queued = {Q("a-1", "aaa", 1, 0, absl::Minutes(1)),
              Q("z-1", "zzz", 1, 0, absl::Minutes(60))};
  Budgets b = B();
  s.running = {R("r", 1, absl::Minutes(1), absl::Hours(1), "other")};
  b.max_workers = 2;
  // Queued together (one snapshot): turns decide.
  for (QueuedJob& q : s.queued) q.queued_at = kNow - absl::Seconds(30);
  s.workspace_turns = {{"aaa", 1}, {"zzz", 5}};
  EXPECT_EQ(Ids(s, Plan(s, b, Policy(), kNow)).front(), "a-1");
  s.workspace_turns = {{"aaa", 5}, {"zzz", 1}};
  EXPECT_EQ(Ids(s, Plan(s, b, Policy(), kNow)).front(), "z-1");
  // The newer created_at, admitted least recently, still goes first.
  s.queued[0].created_at = kNow - absl::Hours(5);
  EXPECT_EQ(Ids(s, Plan(s, b, Policy(), kNow)).front(), "z-1");
}

// Equal shares and equal created_at: no workspace always wins; over many
// instants each goes first about equally often.
TEST(TieBreakTest, ExactTiesTakeTurns) {
  std::vector<int> first(10, 0);
  for (int t = 0; t < 400; ++t) {
    State s;
    for (int w = 0; w < 10; ++w) {
      QueuedJob q = Q(absl::StrCat("j", w), absl::StrCat("ws", w), 1);
      q.created_at = kNow - absl::Seconds(t * 37 + 1);
      s.queued.push_back(q);
    }
    const PlanResult r = Plan(s, B(), Policy(), kNow);
    ++first[s.queued[r.decisions[0].job].workspace.back() - '0'];
  }
  for (int w = 0; w < 10; ++w) {
    EXPECT_GT(first[w], 15) << "ws" << w;
    EXPECT_LT(first[w], 70) << "ws" << w;
  }
}

}  // namespace
}  // namespace berth::planner
