// The worked example of the rank arithmetic that DESIGN and the API cookbook
// show: two workspaces at priority 1 ("ml" runs a 64 GiB job, its turn 7,
// "data" its turn 3), a priority-2 job, and a priority-0 job that waited
// five hours (aged two levels, to 2). One definition for the test that
// checks its numbers and the test that prints it. Testonly.
#ifndef BERTH_PLANNER_EXPLAIN_RANK_EXAMPLE_H_
#define BERTH_PLANNER_EXPLAIN_RANK_EXAMPLE_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "planner/model/model.h"

namespace berth::planner::testing {

struct RankExample {
  State state;
  Budgets budgets;  // 128 GiB, 32 cores, 8 workers
};

inline RankExample MakeRankExample(absl::Time now) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  RankExample ex;
  auto q = [&](std::string id, std::string ws, int32_t prio, int64_t gib, int minutes_ago) {
    QueuedJob j;
    j.id = std::move(id);
    j.workspace = std::move(ws);
    j.priority = prio;
    j.resources = {1000, gib * kGiB};
    j.created_at = now - absl::Minutes(minutes_ago);
    j.queued_at = j.created_at;
    j.expected_duration = absl::Hours(1);
    ex.state.queued.push_back(j);
  };
  q("urgent", "ml", 2, 8, 5);
  q("old", "data", 0, 4, 300);  // waited 5 h: aged two levels, to 2
  q("etl-1", "data", 1, 16, 30);
  q("etl-2", "data", 1, 16, 20);
  q("train", "ml", 1, 16, 10);
  RunningJob r;
  r.id = "big";
  r.workspace = "ml";
  r.resources = {4000, 64 * kGiB};
  r.started_at = now - absl::Minutes(10);
  r.expected_duration = absl::Hours(2);
  ex.state.running.push_back(r);
  ex.state.workspace_turns = {{"ml", 7}, {"data", 3}};
  ex.budgets.memory_bytes = 128 * kGiB;
  ex.budgets.cpu_millis = 32000;
  ex.budgets.max_workers = 8;
  return ex;
}

}  // namespace berth::planner::testing

#endif  // BERTH_PLANNER_EXPLAIN_RANK_EXAMPLE_H_
