#include "planner/explain/explain.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/plan/plan.h"

namespace berth::planner {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kGiB = int64_t{1} << 30;
const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);  // 2027-01-15 08:00

QueuedJob Q(std::string id, int64_t mem_gib, int64_t cpu, int priority = 0) {
  QueuedJob q;
  q.id = std::move(id);
  q.workspace = "ws";
  q.priority = priority;
  q.resources = {cpu, mem_gib * kGiB};
  q.created_at = kNow - absl::Minutes(priority);
  q.expected_duration = absl::Hours(1);
  return q;
}

RunningJob R(std::string id, int64_t mem_gib, int64_t cpu, absl::Duration left) {
  RunningJob r;
  r.id = std::move(id);
  r.workspace = "other";
  r.resources = {cpu, mem_gib * kGiB};
  r.started_at = kNow;
  r.expected_duration = left;
  return r;
}

Budgets B(int32_t workers = 24) {
  Budgets b;
  b.memory_bytes = 128 * kGiB;
  b.cpu_millis = 64'000;
  b.max_workers = workers;
  return b;
}

size_t IndexOf(const State& s, const PlanResult& r, const std::string& id) {
  for (size_t k = 0; k < r.decisions.size(); ++k)
    if (s.queued[r.decisions[k].job].id == id) return k;
  return SIZE_MAX;
}

// Explaining with the plan's kept estimates (berthd's ExplainJob) says
// exactly what explaining with a walk up to the job says, with and without
// nodes, for every decision (admitted, reserved, waiting, rejected).
TEST(ExplainTest, TheKeptEstimatesExplainAsTheWalkDoes) {
  State s;
  s.running = {R("r1", 40, 4000, absl::Minutes(30)), R("r2", 60, 4000, absl::Minutes(90))};
  s.running[0].node = "n1";
  s.running[1].node = "n2";
  for (int i = 0; i < 30; ++i) {
    QueuedJob q = Q("q" + std::to_string(i), 1 + (i * 7) % 40, 500 + 250 * (i % 5), i % 4);
    q.expected_duration = absl::Minutes(5 + 13 * i);
    s.queued.push_back(q);
  }
  s.queued.push_back(Q("never", 500, 1000));
  for (const bool nodes : {false, true}) {
    SCOPED_TRACE(nodes ? "nodes" : "one host");
    Budgets b = B();
    if (nodes) {
      b.nodes = {Node{"n1", 64 * kGiB, 32'000, 0, {}}, Node{"n2", 64 * kGiB, 32'000, 0, {}}};
    }
    const PlanResult r = Plan(s, b, Policy(), kNow);
    const StartEstimateTable table(s, b, Policy(), r);
    for (size_t k = 0; k < r.decisions.size(); ++k) {
      const Explanation walked = Explain(s, b, Policy(), r, k);
      const Explanation kept = Explain(s, b, r, k, table);
      EXPECT_EQ(kept.summary, walked.summary) << k;
      EXPECT_EQ(kept.projected.kind, walked.projected.kind) << k;
      EXPECT_EQ(kept.projected.time, walked.projected.time) << k;
      EXPECT_EQ(kept.projected.node, walked.projected.node) << k;
      EXPECT_EQ(kept.estimated_start, walked.estimated_start) << k;
    }
  }
}

TEST(ExplainTest, WaitingForMemory) {
  State s;
  s.running = {R("r", 122, 1000, absl::Minutes(140))};
  s.queued = {Q("first", 4, 1000, 3), Q("second", 2, 1000, 2), Q("me", 16, 1000, 1)};
  const Budgets b = B();
  const PlanResult r = Plan(s, b, Policy(), kNow);
  const size_t k = IndexOf(s, r, "me");
  const Explanation e = Explain(s, b, Policy(), r, k);
  EXPECT_EQ(e.reason, Reason::kWaitingForMemory);
  EXPECT_EQ(e.queue_position, 3);
  EXPECT_EQ(e.jobs_ahead, 2);
  EXPECT_EQ(e.ahead_job_ids, (std::vector<std::string>{"first", "second"}));
  ASSERT_TRUE(e.shortfall.has_value());
  EXPECT_EQ(e.shortfall->dimension, Dimension::kMemory);
  EXPECT_EQ(e.shortfall->needed, 16 * kGiB);
  EXPECT_EQ(e.shortfall->free, 0);  // 6 GiB were free; first and second took them
  EXPECT_EQ(e.shortfall->shortfall, 16 * kGiB);
  EXPECT_TRUE(e.estimated_start == kNow + absl::Minutes(140));
  EXPECT_THAT(e.summary, HasSubstr("Waiting for memory: needs 16 GiB, 0 B free of 128 GiB."));
  EXPECT_THAT(e.summary, HasSubstr("2 higher-ranked jobs ahead."));
  EXPECT_THAT(e.summary, HasSubstr("Reserved to start by 2027-01-15 10:20:00 UTC."));
  EXPECT_FALSE(e.smallest_change.has_value());  // nothing free to shrink into
}

// A reservation whose start slips says so every time, with the start first
// promised, as the clock moves past it (the plan carried from one pass to
// the next as berthd does, CarryReservation).
TEST(ExplainTest, ASlippedReservationSaysOverdueWasEveryTime) {
  State s;
  s.running = {R("r", 100, 1000, absl::Minutes(10))};
  s.queued = {Q("big", 100, 1000)};
  const PlanResult first = Plan(s, B(), Policy(), kNow);
  ASSERT_GE(first.reserved_decision, 0);
  const absl::Time promised = first.reservation_start;
  const Explanation before = Explain(s, B(), Policy(), first, IndexOf(s, first, "big"));
  EXPECT_EQ(before.first_promised_start, absl::InfiniteFuture());
  EXPECT_THAT(before.summary, ::testing::Not(HasSubstr("overdue")));
  State carried = s;
  CarryReservation(s, first, carried);
  // The running job overruns its estimate: every later plan moves the
  // start, and every explanation names the first promise.
  for (absl::Duration after : {absl::Seconds(1), absl::Seconds(26), absl::Minutes(5)}) {
    SCOPED_TRACE(absl::FormatDuration(after));
    const absl::Time now = promised + after;
    const PlanResult r = Plan(carried, B(), Policy(), now);
    const size_t k = IndexOf(carried, r, "big");
    ASSERT_NE(k, SIZE_MAX);
    ASSERT_TRUE(r.decisions[k].reserved);
    ASSERT_GT(r.reservation_start, promised);
    const Explanation e = Explain(carried, B(), Policy(), r, k);
    EXPECT_EQ(e.first_promised_start, promised);
    EXPECT_THAT(e.summary, HasSubstr("overdue (was 2027-01-15 08:10:00 UTC)"));
    State next = carried;
    CarryReservation(carried, r, next);
    carried = next;
  }
}

// The operator's maintenance reason is shown, in the explanation and in the
// plan's one-line summary; without one the sentence just ends.
TEST(ExplainTest, PoolInMaintenanceShowsTheReason) {
  State s;
  s.pools_in_maintenance = {"database"};
  s.maintenance_reasons = {{"database", "db upgrade"}};
  QueuedJob a = Q("a", 1, 100);
  a.pool = "database";
  s.queued = {a};
  Budgets b = B();
  b.pool_max_workers["database"] = 2;
  PlanResult r = Plan(s, b, Policy(), kNow);
  Explanation e = Explain(s, b, Policy(), r, 0);
  EXPECT_EQ(e.reason, Reason::kPoolInMaintenance);
  EXPECT_THAT(e.summary, ::testing::StartsWith("Pool database is in maintenance: db upgrade."));
  EXPECT_EQ(DecisionSummary(s, r, 0), "pool 'database' in maintenance: db upgrade");
  s.maintenance_reasons.clear();
  r = Plan(s, b, Policy(), kNow);
  e = Explain(s, b, Policy(), r, 0);
  EXPECT_THAT(e.summary, ::testing::StartsWith("Pool database is in maintenance."));
}

TEST(ExplainTest, SuggestsTheMemoryThatFitsNow) {
  State s;
  s.running = {R("r", 122, 1000, absl::Hours(2))};
  s.queued = {Q("me", 16, 1000)};
  const Budgets b = B();
  const PlanResult r = Plan(s, b, Policy(), kNow);
  const Explanation e = Explain(s, b, Policy(), r, 0);
  EXPECT_EQ(DecisionSummary(s, r, 0), "needs 16 GiB memory, 6 GiB free of 128 GiB");
  ASSERT_TRUE(e.smallest_change.has_value());
  EXPECT_EQ(e.smallest_change->text, "fits now if memory estimate <= 6 GiB");
  EXPECT_EQ(e.smallest_change->dimension, Dimension::kMemory);
  EXPECT_EQ(e.smallest_change->fits_if_at_most, 6 * kGiB);
  EXPECT_THAT(e.summary, HasSubstr("Fits now if memory estimate <= 6 GiB."));
  // Apply it: admitted.
  State changed = s;
  changed.queued[0].resources.memory_bytes = e.smallest_change->fits_if_at_most;
  EXPECT_EQ(Plan(changed, b, Policy(), kNow).decisions[0].verdict, Verdict::kAdmit);
}

TEST(ExplainTest, SuggestsBothDimensionsWhenBothAreShort) {
  State s;
  s.running = {R("r", 122, 63'000, absl::Hours(2))};
  s.queued = {Q("me", 16, 4000)};
  const PlanResult r = Plan(s, B(), Policy(), kNow);
  const auto change = SuggestionOf(s, r, 0);
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->text,
            "fits now if memory estimate <= 6 GiB and cpu estimate <= 1 core");
}

TEST(ExplainTest, WorkerSlot) {
  State s;
  for (int i = 0; i < 24; ++i)
    s.running.push_back(R("r" + std::to_string(i), 1, 100, absl::Hours(1)));
  s.queued = {Q("me", 1, 100)};
  const PlanResult r = Plan(s, B(), Policy(), kNow);
  const Explanation e = Explain(s, B(), Policy(), r, 0);
  ASSERT_TRUE(e.smallest_change.has_value());
  EXPECT_EQ(e.smallest_change->text, "needs a worker slot: 24/24 in use");
  EXPECT_EQ(e.smallest_change->fits_if_at_most, 0);
  EXPECT_EQ(DecisionSummary(s, r, 0), "needs a worker slot: 24/24 in use");
}

TEST(ExplainTest, WaitingForPriorityNamesTheReservation) {
  State s;
  s.running = {R("r", 100, 1000, absl::Hours(1))};
  QueuedJob head = Q("head", 110, 1000, 5), me = Q("me", 20, 1000, 1);
  me.expected_duration = absl::Hours(2);
  s.queued = {head, me};
  const PlanResult r = Plan(s, B(), Policy(), kNow);
  const size_t k = IndexOf(s, r, "me");
  const Explanation e = Explain(s, B(), Policy(), r, k);
  EXPECT_EQ(e.reason, Reason::kWaitingForPriority);
  EXPECT_THAT(e.summary, HasSubstr("would delay head, reserved to start around "
                                   "2027-01-15 09:00:00 UTC"));
  ASSERT_TRUE(e.smallest_change.has_value());
  EXPECT_EQ(e.smallest_change->text, "fits now if memory estimate <= 18 GiB");
  EXPECT_TRUE(e.estimate_is_lower_bound);
}

TEST(ExplainTest, DependenciesAndRejections) {
  State s;
  s.running = {R("dep", 1, 100, absl::Hours(1))};
  s.finished["bad"] = DependencyOutcome::kFailed;
  QueuedJob waits = Q("waits", 1, 100), fails = Q("fails", 1, 100),
            huge = Q("huge", 512, 100);
  waits.depends_on = {"dep"};
  fails.depends_on = {"bad"};
  s.queued = {waits, fails, huge};
  const PlanResult r = Plan(s, B(), Policy(), kNow);
  const Explanation w = Explain(s, B(), Policy(), r, IndexOf(s, r, "waits"));
  EXPECT_EQ(w.pending_dependencies, (std::vector<std::string>{"dep"}));
  // Its ETA follows its dependency's forecast end (dep ends at +1 h).
  EXPECT_EQ(w.summary,
            "Waiting for dependencies: dep. Expected to start around 2027-01-15 09:00:00 UTC if "
            "estimates hold.");
  EXPECT_EQ(w.projected.kind, EtaKind::kIfEstimatesHold);
  EXPECT_TRUE(w.estimated_start == absl::InfiniteFuture());
  const Explanation f = Explain(s, B(), Policy(), r, IndexOf(s, r, "fails"));
  EXPECT_EQ(f.reason, Reason::kDependencyFailed);
  EXPECT_EQ(f.summary, "Will not run: dependency bad did not succeed.");
  const Explanation h = Explain(s, B(), Policy(), r, IndexOf(s, r, "huge"));
  EXPECT_EQ(h.summary,
            "Never fits: needs 512 GiB memory, more than the whole budget of "
            "128 GiB. Fits the budget if memory estimate <= 128 GiB.");
}

TEST(ExplainTest, Admitted) {
  State s;
  s.queued = {Q("a", 1, 100)};
  const PlanResult r = Plan(s, B(), Policy(), kNow);
  const Explanation e = Explain(s, B(), Policy(), r, 0);
  EXPECT_EQ(e.summary, "Admitted: starts now.");
  EXPECT_TRUE(e.estimated_start == kNow);
  EXPECT_FALSE(e.shortfall.has_value());
  EXPECT_FALSE(e.smallest_change.has_value());
}

// Found by the plan fuzzer: an aging boost wider than int32 (a very low
// priority aged up to a very high one) is reported exactly, without overflow.
TEST(ExplainTest, AgingBoostWiderThanInt32) {
  State s;
  s.running = {R("r", 128, 1000, absl::Hours(2))};
  QueuedJob low = Q("low", 4, 1000);
  low.priority = -2'000'000'000;
  low.created_at = kNow - absl::Hours(24 * 365 * 50);  // after 1970
  QueuedJob high = Q("high", 4, 1000);
  high.priority = 1'000'000'000;
  s.queued = {high, low};
  Policy policy;
  policy.aging_interval = absl::Nanoseconds(1);
  const Budgets b = B();
  const PlanResult r = Plan(s, b, policy, kNow);
  const Explanation e = Explain(s, b, policy, r, IndexOf(s, r, "low"));
  EXPECT_EQ(e.aging_boost, int64_t{3'000'000'000});
  EXPECT_THAT(e.summary, HasSubstr("ranked as priority 1000000000"));
}

}  // namespace
}  // namespace berth::planner
