// The planner's memory in a workload file: read back as written, used by a
// simulation of the file, and bad values rejected naming the field and job.
#include "tools/plan/memory.h"

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/base/proto_json.h"
#include "planner/convert/workload_state.h"
#include "planner/simulator/simulator.h"
#include "tools/plan/input.h"

namespace berth::plan {
namespace {

using ::testing::HasSubstr;

std::string Write(const std::string& name, const std::string& contents) {
  std::string path = absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
  EXPECT_TRUE(WriteFileAtomically(path, contents).ok());
  return path;
}

// Two one-job workspaces, identical (created and queued at the same time),
// one worker: only the fair turns in `memory` tell which goes first.
std::string TwoWorkspaces(const std::string& memory, const std::string& extra_job = "") {
  auto job = [](const std::string& id, const std::string& ws) {
    return absl::StrCat(R"({"spec":{"id":")", id, R"(","workspace":")", ws,
                        R"(","resources":{"cpuMillis":"1000","memoryBytes":"1073741824"},)",
                        R"("expectedDuration":"600s","createdAt":"2026-11-23T08:00:00Z"},)",
                        R"("queuedAt":"2026-11-23T08:30:00Z"})");
  };
  return absl::StrCat(R"({"startTime":"2026-11-23T09:00:00Z",)",
                      R"("budgets":{"memoryBytes":"17179869184","cpuMillis":"8000","maxWorkers":1},)",
                      R"("jobs":[)", job("a1", "a"), ",", job("b1", "b"), extra_job, "]",
                      memory.empty() ? "" : absl::StrCat(R"(,"plannerMemory":)", memory), "}");
}

// The job of `in` that starts first when simulated.
std::string FirstToStart(const PlanInput& in) {
  planner::SimInput sim = in.sim;
  sim.budgets = in.file_budgets;
  const planner::SimResult r = planner::Simulate(sim, planner::SimOptions());
  size_t first = 0;
  for (size_t i = 1; i < r.jobs.size(); ++i) {
    if (r.jobs[i].start < r.jobs[first].start) first = i;
  }
  return sim.jobs[first].job.id;
}

TEST(PlannerMemoryFile, ReadsTheMemoryAndQueuedAtAndTheSimulationUsesThem) {
  auto a_last = LoadPlanInput(Write(
      "a_last.json",
      TwoWorkspaces(
          R"({"workspaceTurns":[{"workspace":"a","turn":2},{"workspace":"b","turn":1}]})")));
  ASSERT_TRUE(a_last.ok()) << a_last.status();
  EXPECT_EQ(a_last->sim.jobs[0].job.queued_at, absl::FromUnixSeconds(1795422600));
  EXPECT_EQ(a_last->sim.memory.workspace_turns.at("a"), 2u);
  EXPECT_EQ(FirstToStart(*a_last), "b1");
  auto b_last = LoadPlanInput(Write(
      "b_last.json",
      TwoWorkspaces(
          R"({"workspaceTurns":[{"workspace":"a","turn":1},{"workspace":"b","turn":2}]})")));
  ASSERT_TRUE(b_last.ok()) << b_last.status();
  EXPECT_EQ(FirstToStart(*b_last), "a1");

  auto full = LoadPlanInput(Write(
      "full.json",
      TwoWorkspaces(R"({"reservationHolder":"b1","reservationPromised":"2026-11-23T09:10:00Z",)"
                    R"("topPriority":3,"topPrioritySeen":"2026-11-23T08:59:00Z"})")));
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ(full->sim.memory.reservation_holder, "b1");
  EXPECT_EQ(full->sim.memory.reservation_promised, absl::FromUnixSeconds(1795424400 + 600));
  EXPECT_EQ(full->sim.memory.top_priority, 3);
  EXPECT_EQ(full->sim.memory.top_priority_seen, absl::FromUnixSeconds(1795424400 - 60));
  // Written back, the same memory.
  const v1::PlannerMemory again = planner::MemoryToProto(full->sim.memory);
  EXPECT_EQ(again.reservation_holder(), "b1");
  EXPECT_EQ(again.top_priority(), 3);
  EXPECT_TRUE(again.has_reservation_promised());
}

TEST(PlannerMemoryFile, BadMemoryIsAnErrorNamingTheFieldAndTheJob) {
  const std::string late =
      R"(,{"spec":{"id":"late","workspace":"a","resources":{"cpuMillis":"1000",)"
      R"("memoryBytes":"1073741824"}},"arrivalOffset":"3600s"})";
  struct Case {
    std::string memory, extra, want;
  };
  const Case cases[] = {
      {R"({"reservationHolder":"ghost"})", "",
       "plannerMemory.reservationHolder 'ghost' is not a job of the workload's jobs"},
      {R"({"reservationHolder":"late"})", late,
       "plannerMemory.reservationHolder 'late' is not queued at startTime"},
      {R"({"reservationPromised":"2026-11-23T09:10:00Z"})", "",
       "plannerMemory.reservationPromised is set without a reservationHolder"},
      {R"({"workspaceTurns":[{"workspace":"a","turn":0}]})", "",
       "plannerMemory.workspaceTurns[0] 'a': turn must be > 0"},
      {R"({"workspaceTurns":[{"workspace":"a","turn":1},{"workspace":"a","turn":2}]})", "",
       "plannerMemory.workspaceTurns[1] 'a' is listed twice"},
      {R"({"topPriority":2,"topPrioritySeen":"2026-11-23T10:00:00Z"})", "",
       "plannerMemory.topPrioritySeen 2026-11-23T10:00:00+00:00 is after startTime"},
      {R"({"topPriority":2})", "", "plannerMemory.topPriority 2 is given without topPrioritySeen"},
  };
  int n = 0;
  for (const Case& c : cases) {
    const std::string path =
        Write(absl::StrCat("bad_", n++, ".json"), TwoWorkspaces(c.memory, c.extra));
    auto in = LoadPlanInput(path);
    ASSERT_FALSE(in.ok()) << c.memory;
    EXPECT_EQ(in.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(in.status().message(), HasSubstr(absl::StrCat(path, ": ", c.want))) << c.memory;
  }
  // A job queued after it arrives.
  std::string after = TwoWorkspaces("");
  after.replace(after.find("08:30:00Z"), 9, "09:30:00Z");
  auto in = LoadPlanInput(Write("queued_after.json", after));
  ASSERT_FALSE(in.ok());
  EXPECT_THAT(in.status().message(),
              HasSubstr("job 'a1' (jobs[0]): queuedAt 2026-11-23T09:30:00+00:00 is after its "
                        "arrival (startTime + arrivalOffset)"));
}

}  // namespace
}  // namespace berth::plan
