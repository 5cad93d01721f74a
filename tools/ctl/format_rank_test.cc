// berthctl explain's rank lines, printed from what the planner explains for
// a worked example (the one docs/operator-guide.md and docs/DESIGN.md show):
// the text is checked whole, so the docs' example is this output.
#include "tools/ctl/format_rank.h"

#include <sstream>
#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "planner/convert/rank_proto.h"
#include "planner/explain/rank_arithmetic.h"
#include "planner/explain/rank_example.h"
#include "planner/plan/plan.h"
#include "tools/ctl/format.h"

namespace berth::ctl {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);  // 2027-01-15 08:00 UTC

// The worked example (planner/explain/rank_example.h), planned.
struct Example {
  planner::State state;
  planner::Budgets budgets;
  planner::Policy policy;
  planner::PlanResult result;
  planner::RankingKeys keys;

  Example() {
    planner::testing::RankExample ex = planner::testing::MakeRankExample(kNow);
    state = std::move(ex.state);
    budgets = ex.budgets;
    result = planner::Plan(state, budgets, policy, kNow);
    keys = planner::RankKeysOf(state, budgets, policy, kNow);
  }

  std::string Printed(const std::string& id) const {
    for (size_t k = 0; k < result.decisions.size(); ++k) {
      if (state.queued[result.decisions[k].job].id != id) continue;
      std::ostringstream out;
      PrintRank(planner::ToProtoRank(planner::ExplainRank(state, keys, result, k,
                                                          policy.aging_interval, 3)),
                out);
      return out.str();
    }
    return "no such job";
  }
};

TEST(FormatRankTest, SharesTurnsAndTheJobsAhead) {
  const Example ex;
  EXPECT_EQ(ex.Printed("train"),
            "rank:            drf, priority 1 (its own; waiting since 2027-01-15 07:50:00 UTC, "
            "one level per 2h, at most 2)\n"
            "share:           ml 0.5625 before this job: memory 72 GiB of 128 GiB (0.5625), "
            "cpu 5 cores of 32 cores (0.1562)\n"
            "turn:            7 (last admission), next job queued 2027-01-15 07:50:00 UTC\n"
            "in workspace:    1st of ml's jobs at priority 1 (by createdAt)\n"
            "ahead by:        2 higher priority; 2 same priority, lower workspace share\n"
            "first ahead:     urgent (higher priority), old (higher priority), "
            "etl-1 (same priority, lower workspace share)\n");
}

TEST(FormatRankTest, AgedPriorityAndTheSameWorkspace) {
  const Example ex;
  EXPECT_EQ(ex.Printed("old"),
            "rank:            drf, priority 2, aged from 0 (waiting since 2027-01-15 03:00:00 UTC, "
            "one level per 2h, at most 2; reached 2 at 2027-01-15 07:00:00 UTC)\n"
            "share:           data 0.0000 before this job: memory 0 B of 128 GiB (0.0000), "
            "cpu 0 cores of 32 cores (0.0000)\n"
            "in workspace:    1st of the jobs aged to priority 2 (by when they reached it)\n"
            "ahead by:        1 same priority, its own (not aged)\n"
            "first ahead:     urgent (same priority, its own (not aged))\n");
  EXPECT_EQ(ex.Printed("etl-2"),
            "rank:            drf, priority 1 (its own; waiting since 2027-01-15 07:40:00 UTC, "
            "one level per 2h, at most 2)\n"
            "share:           data 0.1562 before this job: memory 20 GiB of 128 GiB (0.1562), "
            "cpu 2 cores of 32 cores (0.0625)\n"
            "turn:            3 (last admission), next job queued 2027-01-15 07:40:00 UTC\n"
            "in workspace:    2nd of data's jobs at priority 1 (by createdAt)\n"
            "ahead by:        2 higher priority; 1 same workspace, created earlier\n"
            "first ahead:     urgent (higher priority), old (higher priority), "
            "etl-1 (same workspace, created earlier)\n");
}

TEST(FormatRankTest, NothingForAJobThatIsNotQueued) {
  std::ostringstream out;
  PrintRank(v1::RankArithmetic(), out);
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace berth::ctl
