#include "tools/plan/input.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/base/proto_json.h"

namespace berth::plan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Write(const std::string& name, const std::string& contents) {
  std::string path = absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
  EXPECT_TRUE(WriteFileAtomically(path, contents).ok());
  return path;
}

std::string Job(const std::string& id, const std::string& extra = "",
                const std::string& resources = R"("cpuMillis":"1000","memoryBytes":"1073741824")") {
  return absl::StrCat(R"({"spec":{"id":")", id, R"(","workspace":"ws","resources":{)",
                      resources, "}", extra, "}}");
}

std::string Workload(const std::string& jobs) {
  return absl::StrCat(R"({"startTime":"2026-11-23T09:00:00Z","jobs":[)", jobs, "]}");
}

TEST(LoadPlanInput, ReadsTheExampleWorkloads) {
  for (const char* f : {"examples/burst.json", "examples/week.json",
                        "examples/starvation.json"}) {
    auto in = LoadPlanInput(f);
    ASSERT_TRUE(in.ok()) << in.status();
    EXPECT_FALSE(in->is_snapshot);
    EXPECT_TRUE(in->has_file_budgets);
    EXPECT_EQ(in->file_budgets.max_workers, 24);
    EXPECT_TRUE(ValidateBudgets(in->file_budgets, f).ok());
    EXPECT_TRUE(CheckPoolsKnown(*in, in->file_budgets).ok());
  }
  auto burst = LoadPlanInput("examples/burst.json");
  EXPECT_EQ(burst->sim.running.size(), 2u);
  EXPECT_EQ(burst->sim.start, absl::FromUnixSeconds(1795424400));  // 2026-11-23T09:00Z
}

TEST(LoadPlanInput, ReadsASnapshotWithAllJobsArrivingAtTheLatestCreatedAt) {
  auto in = LoadPlanInput("examples/snapshot-small.json");
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_TRUE(in->is_snapshot);
  EXPECT_FALSE(in->has_file_budgets);
  EXPECT_GE(in->sim.jobs.size(), 4u);
  for (const auto& j : in->sim.jobs) EXPECT_LE(j.job.created_at, in->sim.start);
}

// The file type is told from one scan of the bytes: keys inside strings and
// nested objects do not count; "generation" may come after the jobs.
TEST(LoadPlanInput, AWorkloadWithoutStartTimeStartsAtTheLatestTimeItCarries) {
  // Both readers (simdjson's first, then protobuf's alone) start at the
  // latest of the jobs' createdAt and queuedAt and the running jobs'
  // startedAt, not at the epoch.
  const std::string jobs = absl::StrCat(
      Job("a", R"(,"createdAt":"2026-11-20T10:00:00Z")"), ",",
      Job("b", R"(,"createdAt":"2026-11-20T11:30:00Z")"), ",",
      R"({"spec":{"id":"c","workspace":"ws","resources":{"cpuMillis":"1000","memoryBytes":"1"}},)",
      R"("queuedAt":"2026-11-20T12:00:00Z"})");
  const std::string running =
      R"({"spec":{"id":"r","workspace":"ws","resources":{"cpuMillis":"1000","memoryBytes":"1"}},)"
      R"("startedAt":"2026-11-20T12:45:00Z"})";
  struct Case {
    std::string file;
    absl::Time start;
  };
  const absl::Time noon = absl::FromUnixSeconds(1795176000);  // 2026-11-20T12:00:00Z
  for (const Case& c : std::vector<Case>{
           {absl::StrCat(R"({"jobs":[)", jobs, "]}"), noon},
           {absl::StrCat(R"({"jobs":[)", jobs, R"(],"running":[)", running, "]}"),
            noon + absl::Minutes(45)},
           {absl::StrCat(R"({"description":"x","jobs":[)", jobs, "]}"), noon},
           {absl::StrCat(R"({"jobs":[)", Job("a", R"(,"createdAt":"2026-11-20T11:30:00Z")"), "]}"),
            noon - absl::Minutes(30)}}) {
    for (bool fast : {true, false}) {
      auto in = LoadPlanInput(Write("nostart.json", c.file), fast);
      ASSERT_TRUE(in.ok()) << in.status();
      EXPECT_TRUE(in->start_from_file_times);
      EXPECT_EQ(in->sim.start, c.start) << c.file << " fast=" << fast;
    }
  }
  // With startTime, that is the start, whatever the jobs carry.
  auto given = LoadPlanInput(
      Write("start.json", Workload(Job("a", R"(,"createdAt":"2026-11-20T10:00:00Z")"))));
  ASSERT_TRUE(given.ok()) << given.status();
  EXPECT_FALSE(given->start_from_file_times);
  EXPECT_EQ(given->sim.start, absl::FromUnixSeconds(1795424400));  // 2026-11-23T09:00:00Z
}

TEST(LoadPlanInput, TellsSnapshotsFromWorkloadsWithoutParsingTwice) {
  const std::string snapshot = Write(
      "snap.json",
      R"({"jobs":[{"id":"x","action":"\"spec\":1","workspace":"ws","resources":)"
      R"({"cpuMillis":"1000","memoryBytes":"1"},"labels":{"spec":"s"}}],"generation":"3"})");
  auto in = LoadPlanInput(snapshot);
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_TRUE(in->is_snapshot);
  const std::string late = Write(
      "late.json", absl::StrCat(R"({"jobs":[)", Job("a"), R"(],"generation":"1"})"));
  auto l = LoadPlanInput(late);
  EXPECT_FALSE(l.ok());  // a snapshot by its key; its jobs are not bare specs
  const std::string workload =
      Write("wl.json", Workload(absl::StrCat(Job("a", R"(,"action":"\"generation\":1")"))));
  auto w = LoadPlanInput(workload);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_FALSE(w->is_snapshot);
}

TEST(LoadPlanInput, NamesFileJobAndFieldForEachProblem) {
  std::string path = Write(
      "bad.json",
      Workload(absl::StrCat(Job("a"), ",", Job("a"), ",",
                            Job("b", "", R"("cpuMillis":"0","memoryBytes":"-5")"), ",",
                            Job("c", R"(,"dependsOn":["zz"])"), ",",
                            Job("bad id!"))));
  auto in = LoadPlanInput(path);
  EXPECT_EQ(in.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string msg(in.status().message());
  EXPECT_THAT(msg, HasSubstr(path + ": job 'a' (jobs[1]): duplicate id (first used at "
                                    "job 'a' (jobs[0]))"));
  EXPECT_THAT(msg, HasSubstr(path + ": job 'b' (jobs[2]): spec.resources.cpuMillis must "
                                    "be > 0, got 0"));
  EXPECT_THAT(msg, HasSubstr(path + ": job 'b' (jobs[2]): spec.resources.memoryBytes must "
                                    "be > 0, got -5"));
  EXPECT_THAT(msg, HasSubstr(path + ": job 'c' (jobs[3]): dependsOn 'zz' is not a job of "
                                    "this file"));
  EXPECT_THAT(msg, HasSubstr("spec.id \"bad id!\" must be 1-128 characters"));
}

TEST(LoadPlanInput, RejectsCyclesEmptyWorkloadsAndBadDurations) {
  auto cycle = LoadPlanInput(Write(
      "cycle.json", Workload(absl::StrCat(Job("a", R"(,"dependsOn":["b"])"), ",",
                                          Job("b", R"(,"dependsOn":["a"])")))));
  EXPECT_THAT(cycle.status().message(), HasSubstr("forms a dependency cycle"));
  auto empty = LoadPlanInput(Write("empty.json", R"({"description":"nothing"})"));
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(empty.status().message(), HasSubstr("empty.json: no jobs"));
  auto dur = LoadPlanInput(Write(
      "dur.json", R"({"jobs":[{"spec":{"id":"a","workspace":"w","resources":{"cpuMillis":"1","memoryBytes":"1"}},"arrivalOffset":"-5s","actualDuration":"0s"}]})"));
  EXPECT_THAT(dur.status().message(), HasSubstr("job 'a' (jobs[0]): arrivalOffset must not be negative"));
  EXPECT_THAT(dur.status().message(), HasSubstr("job 'a' (jobs[0]): actualDuration must be > 0"));
}

TEST(LoadPlanInput, MalformedJsonUnknownFieldsAndWrongTypesNameTheFile) {
  auto broken = LoadPlanInput(Write("broken.json", "{\"jobs\": [ "));
  EXPECT_EQ(broken.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(broken.status().message(), HasSubstr("broken.json: "));
  auto unknown = LoadPlanInput(Write("unknown.json", Workload(Job("a", R"(,"colour":"red")"))));
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("colour"));
  auto type = LoadPlanInput(Write(
      "type.json", Workload(Job("a", "", R"("cpuMillis":"lots","memoryBytes":"1")"))));
  EXPECT_THAT(type.status().message(), HasSubstr("job 'a'"));
  auto missing = LoadPlanInput("/nonexistent/w.json");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

TEST(LoadPlanInput, AWorkloadWrittenWithASnapshotsJobsSaysWhichFormatWasRead) {
  // Budgets beside jobs that carry their own "id": read as a snapshot,
  // which has no budgets; the error says so and what a workload looks like.
  auto mixed = LoadPlanInput(Write(
      "mixed.json",
      R"({"budgets": {"maxWorkers": 8}, "jobs": [{"id": "a", "workspace": "ws"}]})"));
  EXPECT_EQ(mixed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(mixed.status().message(), HasSubstr("budgets"));
  EXPECT_THAT(mixed.status().message(), HasSubstr("read as a snapshot"));
  EXPECT_THAT(mixed.status().message(), HasSubstr("{\"spec\": {...}}"));
  // An unknown field of a snapshot's job is that, with no word of workloads.
  auto colour = LoadPlanInput(Write(
      "colour.json", R"({"generation": "1", "jobs": [{"id": "a", "colour": "red"}]})"));
  EXPECT_THAT(colour.status().message(), HasSubstr("colour"));
  EXPECT_THAT(colour.status().message(), Not(HasSubstr("read as a snapshot")));
}

TEST(CheckPoolsKnown, NamesTheJobAndSuggestsTheFlag) {
  auto in = LoadPlanInput(Write("pool.json", Workload(Job("a", R"(,"pool":"gpu")"))));
  ASSERT_TRUE(in.ok());
  planner::Budgets b;
  b.memory_bytes = b.cpu_millis = b.max_workers = 1;
  EXPECT_EQ(CheckPoolsKnown(*in, b).message(),
            in->path + ": job 'a' (jobs[0]): pool 'gpu' has no budget; add --pool-max gpu=N");
  b.pool_max_workers["gpu"] = 1;
  EXPECT_TRUE(CheckPoolsKnown(*in, b).ok());
}

TEST(ValidateBudgets, ZeroAndNegativeValues) {
  planner::Budgets b;
  b.memory_bytes = 0;
  b.cpu_millis = 1000;
  b.max_workers = -1;
  EXPECT_EQ(ValidateBudgets(b, "flags").message(),
            "flags: budgets: memory must be > 0, got 0; max workers must be > 0, got -1");
}

}  // namespace
}  // namespace berth::plan
