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
#include "planner/plan/plan.h"
#include "tools/ctl/format.h"

namespace berth::ctl {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);  // 2027-01-15 08:00 UTC

// Two workspaces at priority 1 ("ml" runs a 64 GiB job), a priority-2 job
// and a priority-0 job that waited five hours (aged two levels, to 2).
struct Example {
  planner::State state;
  planner::Budgets budgets;
  planner::Policy policy;
  planner::PlanResult result;
  planner::RankingKeys keys;

  Example() {
    auto q = [&](std::string id, std::string ws, int32_t prio, int64_t gib, int minutes_ago) {
      planner::QueuedJob j;
      j.id = std::move(id);
      j.workspace = std::move(ws);
      j.priority = prio;
      j.resources = {1000, gib * kGiB};
      j.created_at = kNow - absl::Minutes(minutes_ago);
      j.queued_at = j.created_at;
      j.expected_duration = absl::Hours(1);
      state.queued.push_back(j);
    };
    q("urgent", "ml", 2, 8, 5);
    q("old", "data", 0, 4, 300);
    q("etl-1", "data", 1, 16, 30);
    q("etl-2", "data", 1, 16, 20);
    q("train", "ml", 1, 16, 10);
    planner::RunningJob r;
    r.id = "big";
    r.workspace = "ml";
    r.resources = {4000, 64 * kGiB};
    r.started_at = kNow - absl::Minutes(10);
    r.expected_duration = absl::Hours(2);
    state.running.push_back(r);
    state.workspace_turns = {{"ml", 7}, {"data", 3}};
    budgets.memory_bytes = 128 * kGiB;
    budgets.cpu_millis = 32000;
    budgets.max_workers = 8;
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
