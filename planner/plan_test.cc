// Table-driven tests of Plan(): one case per reason code and per budget
// dimension, plus the backfill rules.
#include "planner/plan.h"

#include <ostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "planner/model.h"

namespace berth::planner {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

QueuedJob Q(std::string id, int64_t mem_gib, int64_t cpu_millis,
            std::string workspace = "ws") {
  QueuedJob q;
  q.id = std::move(id);
  q.workspace = std::move(workspace);
  q.resources = {cpu_millis, mem_gib * kGiB};
  q.created_at = kNow - absl::Minutes(10);
  q.expected_duration = absl::Hours(1);
  return q;
}

RunningJob R(std::string id, int64_t mem_gib, int64_t cpu_millis,
             absl::Duration left, std::string workspace = "other") {
  RunningJob r;
  r.id = std::move(id);
  r.workspace = std::move(workspace);
  r.resources = {cpu_millis, mem_gib * kGiB};
  r.started_at = kNow - absl::Minutes(5);
  r.expected_duration = absl::Minutes(5) + left;
  return r;
}

Budgets B(int64_t mem_gib = 128, int64_t cpu = 64'000, int32_t workers = 24) {
  Budgets b;
  b.memory_bytes = mem_gib * kGiB;
  b.cpu_millis = cpu;
  b.max_workers = workers;
  b.pool_max_workers["database"] = 2;
  return b;
}

const Decision& Of(const State& s, const PlanResult& r, const std::string& id) {
  for (const Decision& d : r.decisions) {
    if (s.queued[d.job].id == id) return d;
  }
  static const Decision kMissing;
  ADD_FAILURE() << "no decision for " << id;
  return kMissing;
}

struct ReasonCase {
  std::string name;
  State state;
  Budgets budgets;
  std::string job;  // the job under test
  Verdict verdict;
  Reason reason;
  Problem problem;
  Dimension dimension;
  int64_t needed;
  int64_t free;
  int64_t capacity;
};

void PrintTo(const ReasonCase& c, std::ostream* os) { *os << c.name; }

std::vector<ReasonCase> ReasonCases() {
  std::vector<ReasonCase> cases;
  auto add = [&](ReasonCase c) { cases.push_back(std::move(c)); };
  const int64_t G = kGiB;
  {
    State s;
    s.queued = {Q("a", 16, 1000)};
    add({"admitted", s, B(), "a", Verdict::kAdmit, Reason::kAdmitted,
         Problem::kNone, Dimension::kUnspecified, 0, 0, 0});
  }
  {
    State s;  // 122 GiB running: 6 GiB free of 128.
    s.running = {R("r", 122, 1000, absl::Hours(2))};
    s.queued = {Q("a", 16, 1000)};
    add({"memory", s, B(), "a", Verdict::kWait, Reason::kWaitingForMemory,
         Problem::kNone, Dimension::kMemory, 16 * G, 6 * G, 128 * G});
  }
  {
    State s;
    s.running = {R("r", 1, 63'000, absl::Hours(2))};
    s.queued = {Q("a", 1, 1500)};
    add({"cpu", s, B(), "a", Verdict::kWait, Reason::kWaitingForCpu,
         Problem::kNone, Dimension::kCpu, 1500, 1000, 64'000});
  }
  {
    State s;
    for (int i = 0; i < 24; ++i)
      s.running.push_back(R("r" + std::to_string(i), 1, 100, absl::Hours(1)));
    s.queued = {Q("a", 1, 100)};
    add({"worker slot", s, B(), "a", Verdict::kWait,
         Reason::kWaitingForWorkerSlot, Problem::kNone, Dimension::kWorkerSlots,
         1, 0, 24});
  }
  {
    State s;
    RunningJob r1 = R("r1", 1, 100, absl::Hours(1)), r2 = R("r2", 1, 100, absl::Hours(1));
    r1.pool = r2.pool = "database";
    s.running = {r1, r2};
    QueuedJob a = Q("a", 1, 100);
    a.pool = "database";
    s.queued = {a};
    add({"pool slot", s, B(), "a", Verdict::kWait, Reason::kWaitingForPoolSlot,
         Problem::kNone, Dimension::kPoolSlots, 1, 0, 2});
  }
  {
    State s;
    s.running = {R("r1", 1, 100, absl::Hours(1), "ws"),
                 R("r2", 1, 100, absl::Hours(1), "ws")};
    s.queued = {Q("a", 1, 100, "ws")};
    Budgets b = B();
    b.workspace_max_workers = 2;
    add({"workspace cap", s, b, "a", Verdict::kWait,
         Reason::kWaitingForWorkspaceCap, Problem::kNone,
         Dimension::kWorkspaceSlots, 1, 0, 2});
  }
  {
    State s;
    s.running = {R("dep", 1, 100, absl::Hours(1))};
    QueuedJob a = Q("a", 1, 100);
    a.depends_on = {"dep"};
    s.queued = {a};
    add({"dependencies (running)", s, B(), "a", Verdict::kWait,
         Reason::kWaitingForDependencies, Problem::kNone,
         Dimension::kUnspecified, 0, 0, 0});
  }
  {
    State s;
    QueuedJob a = Q("a", 1, 100), d = Q("d", 1, 100);
    a.depends_on = {"d"};
    s.queued = {a, d};
    add({"dependencies (queued)", s, B(), "a", Verdict::kWait,
         Reason::kWaitingForDependencies, Problem::kNone,
         Dimension::kUnspecified, 0, 0, 0});
  }
  {
    State s;
    QueuedJob a = Q("a", 1, 100);
    a.depends_on = {"done"};
    s.finished["done"] = DependencyOutcome::kSucceeded;
    s.queued = {a};
    add({"dependency succeeded", s, B(), "a", Verdict::kAdmit,
         Reason::kAdmitted, Problem::kNone, Dimension::kUnspecified, 0, 0, 0});
  }
  {
    // head: needs 110 GiB, 28 free; reserved in 1 h. "b" fits now (20 GiB),
    // runs 2 h, and would take memory the reservation needs.
    State s;
    s.running = {R("r", 100, 1000, absl::Hours(1))};
    QueuedJob head = Q("head", 110, 1000), b = Q("b", 20, 1000);
    head.priority = 1;
    b.expected_duration = absl::Hours(2);
    s.queued = {head, b};
    // At 1 h: 128 free, head takes 110: 18 spare < 20.
    add({"priority", s, B(), "b", Verdict::kWait, Reason::kWaitingForPriority,
         Problem::kNone, Dimension::kMemory, 20 * G, 18 * G, 128 * G});
  }
  {
    State s;
    s.paused = true;
    s.queued = {Q("a", 1, 100)};
    add({"paused", s, B(), "a", Verdict::kWait, Reason::kPaused, Problem::kNone,
         Dimension::kUnspecified, 0, 0, 0});
  }
  {
    State s;
    s.pools_in_maintenance = {"database"};
    QueuedJob a = Q("a", 1, 100);
    a.pool = "database";
    s.queued = {a};
    add({"pool in maintenance", s, B(), "a", Verdict::kWait,
         Reason::kPoolInMaintenance, Problem::kNone, Dimension::kUnspecified, 0,
         0, 0});
  }
  {
    State s;
    s.queued = {Q("a", 200, 100)};
    add({"never fits memory", s, B(), "a", Verdict::kReject, Reason::kNeverFits,
         Problem::kExceedsBudget, Dimension::kMemory, 200 * G, 128 * G, 128 * G});
  }
  {
    State s;
    s.queued = {Q("a", 1, 65'000)};
    add({"never fits cpu", s, B(), "a", Verdict::kReject, Reason::kNeverFits,
         Problem::kExceedsBudget, Dimension::kCpu, 65'000, 64'000, 64'000});
  }
  {
    State s;
    s.queued = {Q("a", 1, 100)};
    add({"never fits: max_workers 0", s, B(128, 64'000, 0), "a",
         Verdict::kReject, Reason::kNeverFits, Problem::kExceedsBudget,
         Dimension::kWorkerSlots, 1, 0, 0});
  }
  {
    State s;
    s.queued = {Q("a", 0, 100)};
    add({"zero memory", s, B(), "a", Verdict::kReject, Reason::kNeverFits,
         Problem::kInvalidResources, Dimension::kMemory, 0, 128 * G, 128 * G});
  }
  {
    State s;
    s.queued = {Q("a", 1, -5)};
    add({"negative cpu", s, B(), "a", Verdict::kReject, Reason::kNeverFits,
         Problem::kInvalidResources, Dimension::kCpu, -5, 64'000, 64'000});
  }
  {
    State s;
    QueuedJob a = Q("a", 1, 100);
    a.pool = "gpu";
    s.queued = {a};
    add({"unknown pool", s, B(), "a", Verdict::kReject, Reason::kNeverFits,
         Problem::kUnknownPool, Dimension::kPoolSlots, 1, 0, 0});
  }
  {
    State s;
    s.queued = {Q("a", 1, 100), Q("a", 2, 100)};
    add({"duplicate id", s, B(), "a", Verdict::kReject, Reason::kNeverFits,
         Problem::kDuplicateId, Dimension::kUnspecified, 0, 0, 0});
  }
  {
    State s;
    s.running = {R("a", 1, 100, absl::Hours(1))};
    s.queued = {Q("a", 1, 100)};
    add({"id of a running job", s, B(), "a", Verdict::kReject,
         Reason::kNeverFits, Problem::kDuplicateId, Dimension::kUnspecified, 0,
         0, 0});
  }
  {
    State s;
    QueuedJob a = Q("a", 1, 100);
    a.depends_on = {"ghost"};
    s.queued = {a};
    add({"unknown dependency", s, B(), "a", Verdict::kReject,
         Reason::kNeverFits, Problem::kUnknownDependency,
         Dimension::kUnspecified, 0, 0, 0});
  }
  {
    State s;
    QueuedJob a = Q("a", 1, 100);
    a.depends_on = {"a"};
    s.queued = {a};
    add({"self dependency", s, B(), "a", Verdict::kReject, Reason::kNeverFits,
         Problem::kDependencyCycle, Dimension::kUnspecified, 0, 0, 0});
  }
  {
    State s;
    QueuedJob a = Q("a", 1, 100), b = Q("b", 1, 100), c = Q("c", 1, 100);
    a.depends_on = {"b"};
    b.depends_on = {"c"};
    c.depends_on = {"a"};
    s.queued = {a, b, c};
    add({"cycle", s, B(), "b", Verdict::kReject, Reason::kNeverFits,
         Problem::kDependencyCycle, Dimension::kUnspecified, 0, 0, 0});
  }
  {
    State s;
    QueuedJob a = Q("a", 1, 100);
    a.depends_on = {"ok", "bad"};
    s.finished["ok"] = DependencyOutcome::kSucceeded;
    s.finished["bad"] = DependencyOutcome::kFailed;
    s.queued = {a};
    add({"dependency failed", s, B(), "a", Verdict::kReject,
         Reason::kDependencyFailed, Problem::kDependencyFailed,
         Dimension::kUnspecified, 0, 0, 0});
  }
  {
    State s;
    QueuedJob a = Q("a", 1, 100), big = Q("big", 999, 100);
    a.depends_on = {"big"};
    s.queued = {a, big};
    add({"dependency rejected", s, B(), "a", Verdict::kReject,
         Reason::kDependencyFailed, Problem::kDependencyRejected,
         Dimension::kUnspecified, 0, 0, 0});
  }
  {
    State s;  // downstream of a cycle
    QueuedJob a = Q("a", 1, 100), b = Q("b", 1, 100), c = Q("c", 1, 100);
    a.depends_on = {"b"};
    b.depends_on = {"c"};
    c.depends_on = {"b"};
    s.queued = {a, b, c};
    add({"depends on a cycle", s, B(), "a", Verdict::kReject,
         Reason::kDependencyFailed, Problem::kDependencyRejected,
         Dimension::kUnspecified, 0, 0, 0});
  }
  return cases;
}

class ReasonTest : public ::testing::TestWithParam<ReasonCase> {};

TEST_P(ReasonTest, DecidesAsExpected) {
  const ReasonCase& c = GetParam();
  const PlanResult r = Plan(c.state, c.budgets, Policy(), kNow);
  ASSERT_EQ(r.decisions.size(), c.state.queued.size());
  const Decision& d = Of(c.state, r, c.job);
  EXPECT_EQ(std::string(VerdictName(d.verdict)), std::string(VerdictName(c.verdict)));
  EXPECT_EQ(std::string(ReasonName(d.reason)), std::string(ReasonName(c.reason)));
  EXPECT_EQ(std::string(ProblemName(d.problem)), std::string(ProblemName(c.problem)));
  EXPECT_EQ(std::string(DimensionName(d.dimension)), std::string(DimensionName(c.dimension)));
  if (c.dimension != Dimension::kUnspecified) {
    EXPECT_EQ(d.needed, c.needed);
    EXPECT_EQ(d.free, c.free);
    EXPECT_EQ(d.capacity, c.capacity);
    EXPECT_EQ(d.shortfall(), c.needed - c.free);
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllReasons, ReasonTest, ::testing::ValuesIn(ReasonCases()),
    [](const ::testing::TestParamInfo<ReasonCase>& info) {
      std::string n;
      for (char ch : info.param.name) n += std::isalnum(ch) ? ch : '_';
      return n;
    });

TEST(PlanTest, EveryReasonCodeIsCovered) {
  std::vector<bool> seen(13, false);
  for (const ReasonCase& c : ReasonCases()) seen[static_cast<int>(c.reason)] = true;
  for (int r = 1; r <= 12; ++r) {
    EXPECT_TRUE(seen[r]) << ReasonName(static_cast<Reason>(r));
  }
}

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
