#include "planner/ranking/ranking.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "planner/plan/plan.h"
#include "planner/testing/workload.h"

namespace berth::planner {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

QueuedJob Q(std::string id, std::string ws, int priority, int minutes_ago,
            int64_t mem_gib = 1) {
  QueuedJob q;
  q.id = std::move(id);
  q.workspace = std::move(ws);
  q.priority = priority;
  q.created_at = kNow - absl::Minutes(minutes_ago);
  q.resources = {1000, mem_gib * kGiB};
  return q;
}

Budgets Big() {
  Budgets b;
  b.memory_bytes = 1024 * kGiB;
  b.cpu_millis = 1'000'000;
  b.max_workers = 1000;
  return b;
}

std::vector<std::string> Ranked(const State& s, const RankingPolicy& policy,
                                const Budgets& b = Big()) {
  Policy p;
  p.ranking = &policy;
  p.aging_interval = absl::ZeroDuration();  // the ranking alone (aging_test)
  const PlanResult r = Plan(s, b, p, kNow);
  std::vector<std::string> ids;
  for (const Decision& d : r.decisions) ids.push_back(s.queued[d.job].id);
  return ids;
}

using Ids = std::vector<std::string>;

TEST(RankingTest, FindByName) {
  EXPECT_EQ(*FindRankingPolicy("drf"), &DrfRanking());
  EXPECT_EQ(*FindRankingPolicy("fifo"), &FifoRanking());
  EXPECT_EQ(FindRankingPolicy("lifo").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(RankingPolicyNames(), (std::vector<absl::string_view>{"drf", "fifo"}));
}

TEST(RankingTest, FifoIsCreatedAtThenId) {
  State s;
  s.queued = {Q("c", "x", 9, 5), Q("b", "y", 0, 10), Q("a", "x", 0, 5)};
  EXPECT_EQ(Ranked(s, FifoRanking()), (Ids{"b", "a", "c"}));
}

TEST(RankingTest, DrfIsPriorityFirst) {
  State s;
  s.queued = {Q("low", "x", 0, 100), Q("high", "y", 5, 1), Q("mid", "x", 2, 50)};
  EXPECT_EQ(Ranked(s, DrfRanking()), (Ids{"high", "mid", "low"}));
}

TEST(RankingTest, DrfInterleavesWorkspacesByShare) {
  State s;
  // "a" submitted everything first; "b" later. Equal sizes alternate.
  s.queued = {Q("a1", "a", 0, 100), Q("a2", "a", 0, 99), Q("a3", "a", 0, 98),
              Q("b1", "b", 0, 10), Q("b2", "b", 0, 9)};
  EXPECT_EQ(Ranked(s, DrfRanking()), (Ids{"a1", "b1", "a2", "b2", "a3"}));
}

TEST(RankingTest, DrfCountsRunningJobs) {
  State s;
  RunningJob r;
  r.id = "r";
  r.workspace = "a";
  r.resources = {1000, 3 * kGiB};
  r.started_at = kNow;
  s.running = {r};
  s.queued = {Q("a1", "a", 0, 100), Q("b1", "b", 0, 10), Q("b2", "b", 0, 9),
              Q("b3", "b", 0, 8), Q("b4", "b", 0, 7)};
  // "a" holds 3 GiB: "b" catches up first (ties go to the name "a").
  EXPECT_EQ(Ranked(s, DrfRanking()), (Ids{"b1", "b2", "b3", "a1", "b4"}));
}

TEST(RankingTest, DrfTiesGoToTheWorkspaceAdmittedLeastRecently) {
  State s;
  // Equal shares and one created_at: the turns decide, never-admitted first,
  // then the oldest turn; the order repeats by turn, not by name or hash.
  s.queued = {Q("a1", "a", 0, 10), Q("a2", "a", 0, 10), Q("b1", "b", 0, 10),
              Q("b2", "b", 0, 10), Q("c1", "c", 0, 10), Q("c2", "c", 0, 10)};
  s.workspace_turns = {{"a", 7}, {"b", 3}};
  EXPECT_EQ(Ranked(s, DrfRanking()), (Ids{"c1", "b1", "a1", "c2", "b2", "a2"}));
  s.workspace_turns = {{"a", 1}, {"b", 9}, {"c", 4}, {"gone", 2}};
  EXPECT_EQ(Ranked(s, DrfRanking()), (Ids{"a1", "c1", "b1", "a2", "c2", "b2"}));
}

TEST(RankingTest, CarryReservationGivesAdmittedWorkspacesTheNewestTurns) {
  State s;
  s.queued = {Q("a1", "a", 0, 10), Q("b1", "b", 0, 10), Q("c1", "c", 0, 10)};
  s.workspace_turns = {{"c", 5}, {"gone", 9}};  // "gone" has nothing left
  Budgets b = Big();
  b.max_workers = 2;  // a and b are admitted (c ranks last: turn 5)
  Policy p;
  p.aging_interval = absl::ZeroDuration();
  const PlanResult r = Plan(s, b, p, kNow);
  State next;
  CarryReservation(s, r, next);
  EXPECT_EQ(next.workspace_turns.size(), 3u);
  EXPECT_EQ(next.workspace_turns["c"], 5u);
  EXPECT_EQ(next.workspace_turns["a"], 6u);
  EXPECT_EQ(next.workspace_turns["b"], 7u);
}

TEST(RankingTest, DrfUsesTheDominantResource) {
  State s;
  QueuedJob cpu_heavy = Q("a1", "a", 0, 100), a2 = Q("a2", "a", 0, 99);
  cpu_heavy.resources = {500'000, 1 * kGiB};  // half the cpu budget
  s.queued = {cpu_heavy, a2, Q("b1", "b", 0, 10, 100), Q("b2", "b", 0, 9, 100)};
  // After a1, a's share is 0.5 (cpu); b1 and b2 take 100/1024 memory each.
  EXPECT_EQ(Ranked(s, DrfRanking()), (Ids{"a1", "b1", "b2", "a2"}));
}

TEST(RankingTest, RejectedJobsDoNotCountTowardsShare) {
  State s;
  QueuedJob huge = Q("a0", "a", 0, 200, 4096);  // never fits
  s.queued = {huge, Q("a1", "a", 0, 100), Q("b1", "b", 0, 10)};
  EXPECT_EQ(Ranked(s, DrfRanking()), (Ids{"a0", "a1", "b1"}));
}

// The counting-sort path (few priorities) and the comparison-sort path (a
// wide priority range) rank alike.
// Large buckets take the radix sort, small ones std::sort; coarse created_at
// values make many ties for the id to break.
TEST(RankingTest, BothDrfSortPathsAgree) {
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    testing::WorkloadOptions o;
    o.seed = seed;
    o.num_queued = seed % 2 ? 500 : 6000;
    o.num_workspaces = seed % 2 ? 7 : 2;
    o.max_priority = seed % 2 ? 3 : 1;
    testing::Workload w = testing::MakeWorkload(o);
    if (seed % 3 == 0) {
      for (QueuedJob& q : w.state.queued) {
        q.created_at = absl::FromUnixSeconds(
            absl::ToUnixSeconds(q.created_at) / 3600 * 3600);
      }
    }
    const Ids narrow = Ranked(w.state, DrfRanking(), w.budgets);
    for (QueuedJob& q : w.state.queued) q.priority *= 1'000'000;
    const Ids wide = Ranked(w.state, DrfRanking(), w.budgets);
    ASSERT_EQ(narrow, wide) << "seed " << seed;
  }
}

TEST(RankingTest, ExtremePrioritiesAndTimes) {
  State s;
  QueuedJob a = Q("a", "x", INT32_MIN, 0), b = Q("b", "x", INT32_MAX, 0),
            c = Q("c", "x", 0, 0);
  a.created_at = absl::InfinitePast();
  b.created_at = absl::InfiniteFuture();
  s.queued = {a, b, c};
  EXPECT_EQ(Ranked(s, DrfRanking()), (Ids{"b", "c", "a"}));
  EXPECT_EQ(Ranked(s, FifoRanking()), (Ids{"a", "c", "b"}));
}

}  // namespace
}  // namespace berth::planner
