// Unit tests of aging's rule (docs/DESIGN.md
// "Aging"): aged jobs of one level rank by age, not workspace share; the top
// priority is remembered between its arrivals (State::top_priority); an aged
// reservation holder never stays ahead of the top priority's arrivals. The
// older aging rules are in promises_test.cc, whole-workload properties in
// planner/testing/promises_property_test.cc.
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "planner/model/model.h"
#include "planner/plan/plan.h"
#include "planner/plan/plan_test_builders.h"

namespace berth::planner {
namespace {

using testing::B;
using testing::kNow;
using testing::Of;
using testing::Q;
using testing::R;

// A 1 GiB job of `priority` in `ws`, created `age` before kNow.
QueuedJob Aged(std::string id, std::string ws, int priority, absl::Duration age,
               int64_t mem_gib = 1) {
  QueuedJob q = Q(std::move(id), mem_gib, 1000, std::move(ws));
  q.priority = priority;
  q.created_at = kNow - age;
  return q;
}

std::vector<std::string> Ids(const State& s, const PlanResult& r) {
  std::vector<std::string> ids;
  for (const Decision& d : r.decisions) ids.push_back(s.queued[d.job].id);
  return ids;
}

Policy Every30Minutes() {
  Policy p;
  p.aging_interval = absl::Minutes(30);
  return p;
}

// Jobs aged to one level rank oldest first whatever their
// workspace: a busy workspace's old job is not held behind a lighter
// workspace's younger one (fair share among the aged kept the lowest
// priority's longest wait where it was without aging). Jobs at their own
// level still go by fair share. Both ranking paths: few priorities (counting
// sort) and a far priority (comparison sort).
TEST(AgingRankTest, AgedJobsRankByAgeNotWorkspaceShare) {
  for (const bool far_priority : {false, true}) {
    State s;
    s.running = {R("busy-running", 100, 1000, absl::Hours(5), "busy")};
    s.queued = {Aged("top", "t", 2, absl::Minutes(1)),
                Aged("busy-old", "busy", 0, absl::Minutes(200)),   // -> level 2
                Aged("light-young", "light", 0, absl::Minutes(70)),  // -> level 2
                Aged("busy-mid", "busy", 1, absl::Minutes(100)),   // -> level 2
                Aged("busy-own", "busy", 1, absl::Minutes(5)),     // own level 1
                Aged("light-own", "light", 1, absl::Minutes(1))};  // own level 1
    std::vector<std::string> want = {"top",       "busy-old",  "busy-mid",
                                     "light-young", "light-own", "busy-own"};
    if (far_priority) {
      s.queued.push_back(Aged("far", "t", -3000, absl::Minutes(1)));
      want.push_back("far");
    }
    EXPECT_EQ(Ids(s, Plan(s, B(), Every30Minutes(), kNow)), want)
        << (far_priority ? "comparison sort" : "counting sort");
  }
}

// The top priority is remembered (State::top_priority,
// Policy::aging_top_memory): after its jobs have started, an aged job ranks
// ahead of the next level's own jobs, not behind them; a new top-priority
// job still goes first; once the memory lapses the top is the highest
// queued priority again.
TEST(AgingTopTest, TopPriorityIsRememberedBetweenItsArrivals) {
  State s;
  s.queued = {Aged("top", "t", 3, absl::Minutes(1)), Aged("p2", "w", 2, absl::Minutes(1))};
  const Policy p = Every30Minutes();
  const PlanResult first = Plan(s, B(), p, kNow);
  EXPECT_EQ(first.queued_top_priority, 3);
  CarryReservation(s, first, s);
  EXPECT_EQ(s.top_priority, 3);
  EXPECT_EQ(s.top_priority_seen, kNow);

  // "top" started; an old priority-0 job and a new priority-2 job are queued.
  s.queued = {Aged("old", "w", 0, absl::Hours(10)), Aged("p2-new", "w", 2, absl::Minutes(1))};
  const PlanResult remembered = Plan(s, B(), p, kNow);
  EXPECT_EQ(remembered.aging_ceiling, 3);
  EXPECT_EQ(EffectivePriority(s.queued[0], remembered), 3);
  EXPECT_EQ(Ids(s, remembered), (std::vector<std::string>{"old", "p2-new"}));

  // A top-priority arrival still ranks first.
  s.queued.push_back(Aged("top-2", "t", 3, absl::Minutes(1)));
  EXPECT_EQ(Ids(s, Plan(s, B(), p, kNow)),
            (std::vector<std::string>{"top-2", "old", "p2-new"}));
  s.queued.pop_back();

  // The test can fail: without the memory the old job stops below the
  // priority-2 job's own level, as it does once the memory has lapsed.
  Policy no_memory = p;
  no_memory.aging_top_memory = absl::ZeroDuration();
  EXPECT_EQ(Ids(s, Plan(s, B(), no_memory, kNow)),
            (std::vector<std::string>{"p2-new", "old"}));
  const absl::Time later = kNow + p.aging_top_memory + absl::Minutes(1);
  const PlanResult lapsed = Plan(s, B(), p, later);
  EXPECT_EQ(lapsed.aging_ceiling, 2);
  EXPECT_EQ(Ids(s, lapsed), (std::vector<std::string>{"p2-new", "old"}));
  CarryReservation(s, lapsed, s);
  EXPECT_EQ(s.top_priority, 2);
  EXPECT_EQ(s.top_priority_seen, later);
}

// An aged reservation holder keeps its place ahead of the jobs
// whose own priority it reached if they were queued before it reached it
// (the top level dropped to theirs after the promise), but a top-priority
// job created after that takes the reservation: aging never delays the top
// priority's arrivals (week3000: the top's longest wait was 1.7x of no
// aging because of this).
TEST(AgingHolderTest, AgedHolderYieldsOnlyToLaterTopArrivals) {
  State s;
  s.running = {R("running", 100, 1000, absl::Hours(1))};
  // Priority 0, 10 h old: at the top level 2 since 9 h (every 30 min).
  s.queued = {Aged("holder", "a", 0, absl::Hours(10), 100),
              Aged("earlier-top", "b", 2, absl::Hours(9) + absl::Minutes(30), 100)};
  s.reservation_holder = "holder";
  const Policy p = Every30Minutes();
  PlanResult r = Plan(s, B(), p, kNow);
  EXPECT_EQ(Ids(s, r), (std::vector<std::string>{"holder", "earlier-top"}));
  EXPECT_TRUE(Of(s, r, "holder").reserved);

  s.queued[1] = Aged("later-top", "b", 2, absl::Minutes(1), 100);
  r = Plan(s, B(), p, kNow);
  EXPECT_EQ(Ids(s, r), (std::vector<std::string>{"later-top", "holder"}));
  EXPECT_TRUE(Of(s, r, "later-top").reserved);
  EXPECT_FALSE(Of(s, r, "holder").reserved);
}

// Aging counts the wait in Berth (QueuedJob::queued_at), not created_at: a
// backlog pushed now with creation times a day old keeps its levels, and
// created_at still orders the jobs of one level and workspace. A job whose
// queued_at is unknown ages from created_at as before.
TEST(AgingSinceQueuedTest, BacklogWithOldCreatedAtKeepsItsLevels) {
  State s;
  auto pushed = [](std::string id, int priority, absl::Duration created_age) {
    QueuedJob q = Aged(std::move(id), "w", priority, created_age);
    q.queued_at = kNow - absl::Minutes(1);
    return q;
  };
  s.queued = {pushed("p0-older", 0, absl::Hours(21)), pushed("p0", 0, absl::Hours(20)),
              pushed("p1", 1, absl::Hours(20)), pushed("p2", 2, absl::Hours(20))};
  const Policy p = Every30Minutes();
  const PlanResult r = Plan(s, B(), p, kNow);
  for (const QueuedJob& q : s.queued) EXPECT_EQ(EffectivePriority(q, r), q.priority) << q.id;
  EXPECT_EQ(Ids(s, r), (std::vector<std::string>{"p2", "p1", "p0-older", "p0"}));

  // Without queued_at the same jobs age from created_at: all reach the top.
  for (QueuedJob& q : s.queued) q.queued_at = absl::UnixEpoch();
  const PlanResult unknown = Plan(s, B(), p, kNow);
  EXPECT_EQ(EffectivePriority(s.queued[0], unknown), 2);
  EXPECT_EQ(EffectivePriority(s.queued[2], unknown), 2);
}

// Aged jobs of one level rank by when they reached it (at 30 min a level,
// priority 1 reaches the top level 2 after 30 min, priority 0 after 60 min):
// of a priority-0 and a priority-1 job that waited equally long (70 min),
// the priority-1 job goes first; a priority-0 job passes a priority-1 job
// only if it waited longer by more than the level between them (p0-70 vs
// p1-31). Before, aged jobs of a level were one queue by age, and a level
// of lower-priority jobs that waited longer held the higher ones back.
TEST(AgingRankTest, AgedJobsOfALevelRankByWhenTheyReachedIt) {
  State s;
  s.queued = {Aged("top", "t", 2, absl::Minutes(1)),
              Aged("p0-80", "a", 0, absl::Minutes(80)),   // reached 2 at 60 min
              Aged("p1-70", "b", 1, absl::Minutes(70)),   // reached 2 at 30 min
              Aged("p0-70", "c", 0, absl::Minutes(70)),   // reached 2 at 60 min
              Aged("p1-31", "d", 1, absl::Minutes(31))};  // reached 2 at 30 min
  EXPECT_EQ(Ids(s, Plan(s, B(), Every30Minutes(), kNow)),
            (std::vector<std::string>{"top", "p1-70", "p0-80", "p0-70", "p1-31"}));
}

}  // namespace
}  // namespace berth::planner
