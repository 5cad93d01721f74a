#include "planner/convert/workload_state.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "planner/convert/convert.h"

namespace berth::planner {
namespace {

QueuedJob Queued(const std::string& id, std::vector<std::string> deps) {
  QueuedJob q;
  q.id = id;
  q.workspace = "ws";
  q.resources.memory_bytes = int64_t{1} << 30;
  q.resources.cpu_millis = 500;
  q.depends_on = std::move(deps);
  q.queued_at = absl::FromUnixSeconds(900);
  return q;
}

std::vector<std::string> Ids(const v1::Workload& w) {
  std::vector<std::string> ids;
  for (const v1::WorkloadJob& j : w.jobs()) ids.push_back(j.spec().id());
  return ids;
}

TEST(WorkloadOfStateTest, DependenciesMetDroppedAndJobsThatCanNeverStartLeftOut) {
  State s;
  RunningJob r;
  r.id = "run";
  r.workspace = "ws";
  r.started_at = absl::FromUnixSeconds(500);
  r.node = "n1";
  s.running.push_back(r);
  s.finished["ok"] = DependencyOutcome::kSucceeded;
  s.finished["bad"] = DependencyOutcome::kFailed;
  s.queued = {Queued("a", {"ok"}),        Queued("b", {"bad"}),  Queued("c", {"b"}),
              Queued("d", {"run", "a"}), Queued("e", {"gone"}), Queued("f", {"c"})};
  s.reservation_holder = "b";
  s.reservation_promised = absl::FromUnixSeconds(2000);
  s.workspace_turns["ws"] = 3;
  int left_out = -1;
  const v1::Workload w = WorkloadOfState(s, Budgets(), absl::FromUnixSeconds(1000), "x", &left_out);
  EXPECT_EQ(Ids(w), (std::vector<std::string>{"a", "d"}));
  EXPECT_EQ(left_out, 4);  // b (failed), c and f (after b), e (unknown)
  EXPECT_EQ(w.jobs(0).spec().depends_on_size(), 0);
  ASSERT_EQ(w.jobs(1).spec().depends_on_size(), 2);
  EXPECT_EQ(w.jobs(1).spec().depends_on(0), "run");
  EXPECT_EQ(FromProto(w.jobs(1).queued_at()), absl::FromUnixSeconds(900));
  ASSERT_EQ(w.running_size(), 1);
  EXPECT_EQ(w.running(0).node(), "n1");
  EXPECT_EQ(FromProto(w.running(0).started_at()), absl::FromUnixSeconds(500));
  EXPECT_EQ(FromProto(w.start_time()), absl::FromUnixSeconds(1000));
  // The holder was left out: no holder and no promise; the turns stay.
  EXPECT_TRUE(w.planner_memory().reservation_holder().empty());
  EXPECT_FALSE(w.planner_memory().has_reservation_promised());
  ASSERT_EQ(w.planner_memory().workspace_turns_size(), 1);
  EXPECT_EQ(w.planner_memory().workspace_turns(0).turn(), 3u);
}

TEST(WorkloadOfStateTest, AJobQueuedDuringThePlanIsDatedByIt) {
  State s;
  s.queued = {Queued("late", {})};
  s.queued[0].queued_at = absl::FromUnixSeconds(1001);
  s.reservation_holder = "late";
  const v1::Workload w = WorkloadOfState(s, Budgets(), absl::FromUnixSeconds(1000), "x");
  EXPECT_EQ(FromProto(w.jobs(0).queued_at()), absl::FromUnixSeconds(1000));
  EXPECT_EQ(w.planner_memory().reservation_holder(), "late");
  EXPECT_FALSE(w.planner_memory().has_reservation_promised());
}

}  // namespace
}  // namespace berth::planner
