#include "planner/forecast/eta.h"

#include <algorithm>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "planner/model/model.h"
#include "planner/plan/plan.h"

namespace berth::planner {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

QueuedJob Q(std::string id, int64_t mem_gib, absl::Duration run, int minutes_ago) {
  QueuedJob q;
  q.id = std::move(id);
  q.workspace = "ws";
  q.resources = {1000, mem_gib * kGiB};
  q.expected_duration = run;
  q.created_at = kNow - absl::Minutes(minutes_ago);
  return q;
}

RunningJob R(std::string id, int64_t mem_gib, absl::Duration ago, absl::Duration est) {
  RunningJob r;
  r.id = std::move(id);
  r.workspace = "ws";
  r.resources = {1000, mem_gib * kGiB};
  r.started_at = kNow - ago;
  r.expected_duration = est;
  return r;
}

Budgets B() {
  Budgets b;
  b.memory_bytes = 100 * kGiB;
  b.cpu_millis = 100'000;
  b.max_workers = 10;
  return b;
}

StartEstimate Of(const State& s, const PlanResult& r,
                 const std::vector<StartEstimate>& e, const std::string& id) {
  for (size_t k = 0; k < r.decisions.size(); ++k) {
    if (s.queued[r.decisions[k].job].id == id) return e[k];
  }
  ADD_FAILURE() << id;
  return {};
}

// The executor's model: a start slot at a time, each start 1 s, 0.5 s to
// see an end. a and b start now, one after the other (b's container a
// second after a's); c waits for memory until b's capacity is back.
TEST(EtaTest, ExecutorModelDelaysEndsByTheStartsAndTheFinish) {
  State s;
  s.queued = {Q("a", 40, absl::Minutes(20), 3), Q("b", 40, absl::Minutes(10), 2),
              Q("c", 40, absl::Minutes(5), 1)};
  const PlanResult r = Plan(s, B(), Policy(), kNow);
  ForecastOptions options;
  options.executor.start_latency = absl::Seconds(1);
  options.executor.start_parallelism = 1;
  options.executor.finish_latency = absl::Milliseconds(500);
  const std::vector<StartEstimate> with = EstimateStarts(s, B(), Policy(), r, options);
  EXPECT_EQ(Of(s, r, with, "a").kind, EtaKind::kNow);
  EXPECT_EQ(Of(s, r, with, "b").kind, EtaKind::kNow);
  EXPECT_EQ(Of(s, r, with, "c").time, kNow + absl::Seconds(2) + absl::Minutes(10) +
                                          absl::Milliseconds(500));
  // Two slots: b's container no longer waits for a's.
  options.executor.start_parallelism = 2;
  EXPECT_EQ(Of(s, r, EstimateStarts(s, B(), Policy(), r, options), "c").time,
            kNow + absl::Seconds(1) + absl::Minutes(10) + absl::Milliseconds(500));
  // Without the model: the planner alone.
  EXPECT_EQ(Of(s, r, EstimateStarts(s, B(), Policy(), r), "c").time, kNow + absl::Minutes(10));
}

// 60 GiB runs 20 more minutes (by its estimate); 50 GiB is overdue (10 min
// estimate, 30 min in: expected at 40 min, i.e. in 10 min).
TEST(EtaTest, StrictOrderOnTheTimelineNeverNow) {
  State s;
  s.running = {R("r60", 60, absl::Minutes(10), absl::Minutes(30)),
               R("r30", 30, absl::Minutes(30), absl::Minutes(10))};
  s.queued = {Q("admit", 10, absl::Minutes(5), 9),
              Q("head", 70, absl::Minutes(30), 8),
              Q("next", 40, absl::Minutes(30), 7),
              Q("fits-but-waits", 5, absl::Hours(2), 6)};
  Policy p;
  const PlanResult r = Plan(s, B(), p, kNow);
  const std::vector<StartEstimate> e = EstimateStarts(s, B(), p, r);
  EXPECT_EQ(Of(s, r, e, "admit").kind, EtaKind::kNow);
  // head: 70 GiB needs r60 gone (in 20 min): 10 (admit's ends at +5) ...
  const StartEstimate head = Of(s, r, e, "head");
  EXPECT_EQ(head.kind, EtaKind::kReserved);
  EXPECT_EQ(head.time, r.reservation_start);
  EXPECT_EQ(head.time, kNow + absl::Minutes(20));
  // next: 40 GiB after head (70) holds its share: at +20 free is 100 - 70
  // = 30; head ends at +50.
  const StartEstimate next = Of(s, r, e, "next");
  EXPECT_EQ(next.kind, EtaKind::kIfEstimatesHold);
  EXPECT_EQ(next.time, kNow + absl::Minutes(50));
  // Fits now in memory but waits for priority: never "now". The forecast's
  // plan at +5 (admit ends) lets it backfill into what the reservation
  // leaves spare, as the planner will then.
  const StartEstimate last = Of(s, r, e, "fits-but-waits");
  EXPECT_EQ(last.kind, EtaKind::kIfEstimatesHold);
  EXPECT_EQ(last.time, kNow + absl::Minutes(5));
}

TEST(EtaTest, UnknownWhenPausedOrNeverFits) {
  State s;
  s.queued = {Q("a", 10, absl::Minutes(5), 1)};
  s.paused = true;
  const PlanResult r = Plan(s, B(), Policy(), kNow);
  EXPECT_EQ(EstimateStarts(s, B(), Policy(), r)[0].kind, EtaKind::kUnknown);
}

// With nodes, a job must fit one node: "next" fits the cluster's free memory
// at +20 min but no node until n2 empties at +40. On the cluster timeline
// alone it would be +20. Each estimate names its node.
TEST(EtaTest, WithNodesAJobWaitsForANodeThatFreesEnough) {
  auto on = [](RunningJob r, const char* node) {
    r.node = node;
    return r;
  };
  State s;
  s.running = {on(R("r1", 10, absl::Minutes(10), absl::Minutes(30)), "n1"),   // ends +20
               on(R("r2", 10, absl::Minutes(10), absl::Minutes(50)), "n2"),   // ends +40
               on(R("r3", 2, absl::Minutes(5), absl::Minutes(10)), "n2")};    // ends +5
  s.queued = {Q("frag", 12, absl::Hours(1), 8), Q("next", 8, absl::Minutes(10), 7)};
  Budgets b = B();
  b.memory_bytes = 32 * kGiB;
  b.nodes = {Node{"n1", 16 * kGiB, 50'000, 0, {}}, Node{"n2", 16 * kGiB, 50'000, 0, {}}};
  const PlanResult r = Plan(s, b, Policy(), kNow);
  ASSERT_EQ(r.nodes, (std::vector<std::string>{"n1", "n2"}));
  const std::vector<StartEstimate> e = EstimateStarts(s, b, Policy(), r);
  // The head's reservation: n1 frees 16 GiB at +20.
  const StartEstimate frag = Of(s, r, e, "frag");
  EXPECT_EQ(frag.kind, EtaKind::kReserved);
  EXPECT_EQ(frag.time, kNow + absl::Minutes(20));
  EXPECT_EQ(frag.node, 0);
  // 10 GiB free in the cluster now, but 6 on n1 and 4 on n2: never "now".
  const StartEstimate next = Of(s, r, e, "next");
  EXPECT_EQ(next.kind, EtaKind::kIfEstimatesHold);
  EXPECT_EQ(next.time, kNow + absl::Minutes(40));
  EXPECT_EQ(next.node, 1);

  // The same jobs on one 32 GiB host: the cluster timeline, +20, no node.
  b.nodes.clear();
  for (RunningJob& j : s.running) j.node.clear();
  const PlanResult one = Plan(s, b, Policy(), kNow);
  const StartEstimate single = Of(s, one, EstimateStarts(s, b, Policy(), one), "next");
  EXPECT_EQ(single.time, kNow + absl::Minutes(20));
  EXPECT_EQ(single.node, -1);
}

// An admitted job's estimate is now, on the node it was placed on.
TEST(EtaTest, WithNodesAnAdmittedJobStartsNowOnItsNode) {
  State s;
  s.queued = {Q("a", 10, absl::Minutes(5), 1)};
  Budgets b = B();
  b.nodes = {Node{"n1", 8 * kGiB, 50'000, 0, {}}, Node{"n2", 16 * kGiB, 50'000, 0, {}}};
  const PlanResult r = Plan(s, b, Policy(), kNow);
  const StartEstimate a = EstimateStarts(s, b, Policy(), r)[0];
  EXPECT_EQ(a.kind, EtaKind::kNow);
  EXPECT_EQ(a.node, 1);
}

void ExpectSame(const StartEstimate& a, const StartEstimate& b, size_t k) {
  EXPECT_EQ(a.kind, b.kind) << k;
  EXPECT_EQ(a.time, b.time) << k;
  EXPECT_EQ(a.node, b.node) << k;
}

// The kept table (berthd's, one pass per plan) answers exactly what the walk
// answers, on generated plans with and without nodes, with times that are
// whole nanoseconds after now and times that are not.
TEST(EtaTest, TheTableAgreesWithTheWalkEverywhere) {
  for (uint32_t seed = 0; seed < 60; ++seed) {
    std::mt19937 rng(seed);
    auto uniform = [&](int64_t lo, int64_t hi) {
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    // A quarter of a nanosecond after a whole second: no estimate is then a
    // whole number of nanoseconds after now but "now" itself.
    const absl::Time now = seed % 3 == 2 ? kNow + absl::Nanoseconds(1) / 4 : kNow;
    Budgets b = B();
    b.memory_bytes = uniform(16, 64) * kGiB;
    b.pool_max_workers["database"] = 1;
    const bool nodes = seed % 2 == 1;
    if (nodes) {
      b.nodes = {Node{"n1", 24 * kGiB, 50'000, 0, {}}, Node{"n2", 40 * kGiB, 50'000, 0, {}}};
    }
    State s;
    s.paused = seed % 10 == 9;
    for (int i = 0; i < uniform(0, 4); ++i) {
      RunningJob r = R("r" + std::to_string(i), uniform(1, 12),
                       absl::Minutes(uniform(0, 40)), absl::Minutes(uniform(1, 60)));
      r.started_at = now - (kNow - r.started_at);
      if (nodes) r.node = i % 2 == 0 ? "n1" : "n2";
      s.running.push_back(r);
    }
    for (int i = 0; i < uniform(1, 40); ++i) {
      QueuedJob q = Q("q" + std::to_string(i), uniform(1, 30),
                      absl::Seconds(uniform(0, 3600)), static_cast<int>(uniform(0, 90)));
      q.priority = static_cast<int32_t>(uniform(0, 3));
      if (uniform(0, 4) == 0) q.pool = "database";
      if (i > 0 && uniform(0, 6) == 0) q.depends_on = {"q" + std::to_string(i - 1)};
      s.queued.push_back(q);
    }
    const PlanResult r = Plan(s, b, Policy(), now);
    const Forecast whole = ForecastStarts(s, b, Policy(), r);
    const std::vector<StartEstimate>& walk = whole.starts;
    const StartEstimateTable table(s, b, Policy(), r);
    ASSERT_EQ(table.size(), walk.size()) << seed;
    // Read in any order: the forecast advances as each read needs, and
    // ends where the whole forecast ends.
    std::vector<size_t> order(walk.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t k : order) ExpectSame(table[k], walk[k], k);
    EXPECT_EQ(table.bounded(), whole.bounded) << seed;
    EXPECT_EQ(table.covered(), whole.covered) << seed;
    EXPECT_EQ(table.plans(), whole.plans) << seed;
    EXPECT_TRUE(table.complete()) << seed;
  }
}

// A read of the head job makes only the plans that settle it: the rest of
// the forecast is made when (and if) a later read needs it, and agrees
// with the whole forecast then. 40 one-job waves: job k starts in the k-th
// forecast plan.
TEST(EtaTest, TheTablePlansOnlyAsFarAsItIsRead) {
  State s;
  s.running = {R("r", 100, absl::ZeroDuration(), absl::Minutes(10))};
  for (int i = 0; i < 40; ++i) {
    s.queued.push_back(Q("q" + std::to_string(i), 100, absl::Minutes(10), 100 - i));
  }
  const PlanResult r = Plan(s, B(), Policy(), kNow);
  const Forecast whole = ForecastStarts(s, B(), Policy(), r);
  ASSERT_EQ(whole.plans, 40);
  const StartEstimateTable table(s, B(), Policy(), r);
  EXPECT_EQ(table.plans(), 0);
  EXPECT_FALSE(table.complete());
  ExpectSame(table[0], whole.starts[0], 0);
  EXPECT_EQ(table.plans(), 1);
  ExpectSame(table[4], whole.starts[4], 4);
  EXPECT_EQ(table.plans(), 5);
  ExpectSame(table[2], whole.starts[2], 2);  // already settled: no plan
  EXPECT_EQ(table.plans(), 5);
  EXPECT_FALSE(table.complete());
  // A deadline already past: one more plan, then it stops, keeping it.
  EXPECT_FALSE(table.Complete(absl::InfinitePast()));
  EXPECT_EQ(table.plans(), 6);
  ExpectSame(table[39], whole.starts[39], 39);
  EXPECT_EQ(table.plans(), 40);
  EXPECT_TRUE(table.complete());
  EXPECT_EQ(whole.starts[39].time, kNow + absl::Minutes(400));
}

// Readers on several threads share one forecast and each gets the whole
// forecast's answer.
TEST(EtaTest, ConcurrentReadersShareOneForecast) {
  State s;
  s.running = {R("r", 60, absl::ZeroDuration(), absl::Minutes(7))};
  for (int i = 0; i < 200; ++i) {
    s.queued.push_back(Q("q" + std::to_string(i), 10 + i % 50, absl::Minutes(1 + i % 13),
                         300 - i));
  }
  const PlanResult r = Plan(s, B(), Policy(), kNow);
  const Forecast whole = ForecastStarts(s, B(), Policy(), r);
  const StartEstimateTable table(s, B(), Policy(), r);
  std::vector<std::thread> readers;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&, t] {
      for (size_t i = 0; i < table.size(); ++i) {
        const size_t k = t % 2 == 0 ? i : table.size() - 1 - i;
        const StartEstimate e = table[k];
        const StartEstimate& w = whole.starts[k];
        if (e.kind != w.kind || e.time != w.time || e.node != w.node) ++mismatches[t];
      }
    });
  }
  // And one completing it in the background, as the dashboard does.
  readers.emplace_back([&] { table.Complete(); });
  for (std::thread& t : readers) t.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0) << "reader " << t;
  EXPECT_EQ(table.plans(), whole.plans);
  EXPECT_TRUE(table.complete());
}

// Times kept on the side: now a quarter of a nanosecond after a whole
// second, a release at a whole second (not a whole number of nanoseconds
// after now), and an unknown start (InfiniteFuture).
TEST(EtaTest, TheTableKeepsTimesNanosecondsCannotHold) {
  const absl::Time now = kNow + absl::Nanoseconds(1) / 4;
  State s;
  s.running = {R("r", 90, absl::Minutes(10), absl::Minutes(30))};  // ends kNow + 20 min
  s.queued = {Q("waits", 50, absl::Minutes(5), 2), Q("never", 200, absl::Minutes(5), 1)};
  const PlanResult r = Plan(s, B(), Policy(), now);
  const std::vector<StartEstimate> walk = EstimateStarts(s, B(), Policy(), r);
  const StartEstimateTable table(s, B(), Policy(), r);
  ASSERT_EQ(table.size(), 2u);
  for (size_t k = 0; k < walk.size(); ++k) ExpectSame(table[k], walk[k], k);
  EXPECT_EQ(Of(s, r, walk, "waits").time, kNow + absl::Minutes(20));
  EXPECT_EQ(Of(s, r, walk, "never").time, absl::InfiniteFuture());
}

}  // namespace
}  // namespace berth::planner
