// Tests of Plan(): the reservation and backfill rules, admission in rank
// order, pending dependencies and budgets already exceeded. The per-reason
// cases are in plan_reasons_test.cc.
#include "planner/plan/plan.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "planner/model/model.h"
#include "planner/plan/plan_test_builders.h"

namespace berth::planner {
namespace {

using testing::B;
using testing::kGiB;
using testing::kNow;
using testing::Of;
using testing::Q;
using testing::R;

TEST(PlanTest, HeadGetsReservationAtEarliestRelease) {
  State s;
  s.running = {R("r1", 60, 1000, absl::Hours(1)), R("r2", 60, 1000, absl::Hours(3))};
  s.queued = {Q("head", 100, 1000)};
  const PlanResult r = Plan(s, B(), Policy(), kNow);
  const Decision& d = Of(s, r, "head");
  EXPECT_EQ(d.reason, Reason::kWaitingForMemory);
  EXPECT_TRUE(d.reserved);
  EXPECT_EQ(r.reserved_decision, 0);
  // 8 free now; +60 at 1 h = 68 (< 100); +60 at 3 h = 128.
  EXPECT_EQ(r.reservation_start, kNow + absl::Hours(3));
}

TEST(PlanTest, ShortJobBackfillsBeforeTheReservation) {
  State s;
  s.running = {R("r", 100, 1000, absl::Hours(2))};
  QueuedJob head = Q("head", 120, 1000), small = Q("small", 20, 1000);
  head.priority = 1;
  small.expected_duration = absl::Hours(1);  // ends before the 2 h reservation
  s.queued = {small, head};
  const PlanResult r = Plan(s, B(), Policy(), kNow);
  EXPECT_EQ(r.decisions[0].job, 1u);  // head ranks first
  EXPECT_TRUE(Of(s, r, "head").reserved);
  EXPECT_EQ(r.reservation_start, kNow + absl::Hours(2));
  EXPECT_EQ(Of(s, r, "small").verdict, Verdict::kAdmit);
}

TEST(PlanTest, LongJobBackfillsIntoTheSpareOnly) {
  State s;
  s.running = {R("r", 100, 1000, absl::Hours(2))};
  QueuedJob head = Q("head", 110, 1000);
  head.priority = 1;
  // At 2 h: 128 free, head takes 110, 18 spare.
  QueuedJob fits = Q("fits", 10, 1000), too_big = Q("too_big", 10, 1000);
  fits.expected_duration = too_big.expected_duration = absl::Hours(5);
  fits.created_at -= absl::Minutes(1);  // ranks before too_big
  s.queued = {too_big, head, fits};
  const PlanResult r = Plan(s, B(), Policy(), kNow);
  EXPECT_EQ(Of(s, r, "fits").verdict, Verdict::kAdmit);
  const Decision& d = Of(s, r, "too_big");
  EXPECT_EQ(d.reason, Reason::kWaitingForPriority);
  EXPECT_EQ(d.dimension, Dimension::kMemory);
  EXPECT_EQ(d.free, 8 * kGiB);  // spare left at the reservation
  EXPECT_EQ(d.fits_memory_bytes, 8 * kGiB);
}

TEST(PlanTest, StrictOrderWithoutBackfill) {
  State s;
  s.running = {R("r", 100, 1000, absl::Hours(2))};
  QueuedJob head = Q("head", 120, 1000), small = Q("small", 1, 100);
  head.priority = 1;
  small.expected_duration = absl::Minutes(1);
  s.queued = {head, small};
  Policy p;
  p.backfill = false;
  const PlanResult r = Plan(s, B(), p, kNow);
  EXPECT_EQ(Of(s, r, "small").reason, Reason::kWaitingForPriority);
  EXPECT_EQ(r.admitted_count, 0);
}

TEST(PlanTest, AdmitsInRankOrderUntilMemoryIsFull) {
  State s;
  for (int i = 0; i < 10; ++i) {
    QueuedJob q = Q("j" + std::to_string(i), 30, 100);
    q.created_at = kNow - absl::Minutes(100 - i);
    s.queued.push_back(q);
  }
  Policy fifo;
  fifo.ranking = &FifoRanking();
  const PlanResult r = Plan(s, B(), fifo, kNow);
  EXPECT_EQ(r.admitted_count, 4);  // 4 * 30 <= 128 < 5 * 30
  for (int k = 0; k < 10; ++k) {
    EXPECT_EQ(r.decisions[k].job, static_cast<uint32_t>(k));
    EXPECT_EQ(r.decisions[k].verdict, k < 4 ? Verdict::kAdmit : Verdict::kWait);
  }
  EXPECT_EQ(r.used_after.memory_bytes, 120 * kGiB);
  EXPECT_EQ(r.used_after.workers, 4);
  EXPECT_EQ(r.used_before.workers, 0);
}

TEST(PlanTest, PendingDependenciesAreListed) {
  State s;
  s.running = {R("run", 1, 100, absl::Hours(1))};
  s.finished["done"] = DependencyOutcome::kSucceeded;
  QueuedJob a = Q("a", 1, 100), q = Q("q", 1, 100);
  a.depends_on = {"done", "run", "q"};
  s.queued = {a, q};
  const PlanResult r = Plan(s, B(), Policy(), kNow);
  std::vector<uint32_t> positions;
  for (const PendingDependency& p : r.pending_dependencies) {
    EXPECT_EQ(s.queued[r.decisions[p.decision].job].id, "a");
    positions.push_back(p.position);
  }
  EXPECT_EQ(positions, (std::vector<uint32_t>{1, 2}));
}

TEST(PlanTest, RunningJobsOverABudgetAdmitNothingInThatDimension) {
  State s;
  s.running = {R("r", 200, 1000, absl::Hours(1))};  // budget since reduced
  s.queued = {Q("a", 1, 100)};
  const PlanResult r = Plan(s, B(), Policy(), kNow);
  const Decision& d = Of(s, r, "a");
  EXPECT_EQ(d.reason, Reason::kWaitingForMemory);
  EXPECT_EQ(d.free, -72 * kGiB);
  EXPECT_EQ(d.shortfall(), 73 * kGiB);
}

}  // namespace
}  // namespace berth::planner
