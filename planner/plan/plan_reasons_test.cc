// Table-driven tests of Plan(): one case per reason code and per budget
// dimension, and a check that every reason code has a case.
#include <cctype>
#include <ostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "planner/model/model.h"
#include "planner/plan/plan.h"
#include "planner/plan/plan_test_builders.h"

namespace berth::planner {
namespace {

using testing::B;
using testing::kGiB;
using testing::kNow;
using testing::Of;
using testing::Q;
using testing::R;

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

}  // namespace
}  // namespace berth::planner
