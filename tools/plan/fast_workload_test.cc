// The simdjson reader gives what protobuf's reader gives: on the examples,
// and on seeded generated workloads with mutations (fields dropped, renamed,
// repeated, given wrong types or bad values), LoadPlanInput with and without
// it returns the same error or the same PlanInput. The seed is printed on
// failure ($FAST_WORKLOAD_SEED replays it).
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "planner/base/proto_json.h"
#include "tools/plan/fast_workload.h"
#include "tools/plan/input.h"

namespace berth::plan {
namespace {

void ExpectSame(const absl::StatusOr<PlanInput>& fast, const absl::StatusOr<PlanInput>& ref,
                const std::string& what) {
  ASSERT_EQ(fast.ok(), ref.ok()) << what << ": " << fast.status() << " vs " << ref.status();
  if (!ref.ok()) {
    EXPECT_EQ(fast.status(), ref.status()) << what;
    return;
  }
  EXPECT_EQ(fast->description, ref->description) << what;
  EXPECT_EQ(fast->is_snapshot, ref->is_snapshot) << what;
  EXPECT_EQ(fast->sim.start, ref->sim.start) << what;
  EXPECT_EQ(fast->has_file_budgets, ref->has_file_budgets) << what;
  EXPECT_EQ(fast->file_budgets.memory_bytes, ref->file_budgets.memory_bytes) << what;
  EXPECT_EQ(fast->file_budgets.max_workers, ref->file_budgets.max_workers) << what;
  EXPECT_EQ(fast->file_budgets.pool_max_workers, ref->file_budgets.pool_max_workers) << what;
  ASSERT_EQ(fast->sim.running.size(), ref->sim.running.size()) << what;
  for (size_t i = 0; i < ref->sim.running.size(); ++i) {
    const auto &a = fast->sim.running[i], &b = ref->sim.running[i];
    EXPECT_TRUE(a.id == b.id && a.workspace == b.workspace && a.pool == b.pool &&
                a.resources.cpu_millis == b.resources.cpu_millis &&
                a.resources.memory_bytes == b.resources.memory_bytes &&
                a.started_at == b.started_at && a.expected_duration == b.expected_duration &&
                a.node == b.node)
        << what << ": running " << b.id;
  }
  ASSERT_EQ(fast->sim.jobs.size(), ref->sim.jobs.size()) << what;
  ASSERT_EQ(fast->actuals.size(), ref->actuals.size()) << what;
  for (size_t i = 0; i < ref->sim.jobs.size(); ++i) {
    const auto &a = fast->sim.jobs[i], &b = ref->sim.jobs[i];
    const bool same =
        a.job.id == b.job.id && a.job.workspace == b.job.workspace && a.job.pool == b.job.pool &&
        a.job.priority == b.job.priority &&
        a.job.resources.cpu_millis == b.job.resources.cpu_millis &&
        a.job.resources.memory_bytes == b.job.resources.memory_bytes &&
        a.job.created_at == b.job.created_at &&
        a.job.expected_duration == b.job.expected_duration &&
        a.job.depends_on == b.job.depends_on && a.arrival_offset == b.arrival_offset &&
        a.actual_duration == b.actual_duration && a.fails == b.fails &&
        a.max_duration == b.max_duration && a.job.queued_at == b.job.queued_at &&
        fast->actuals[i].action == ref->actuals[i].action &&
        fast->actuals[i].peak_memory_bytes == ref->actuals[i].peak_memory_bytes;
    EXPECT_TRUE(same) << what << ": jobs[" << i << "] " << b.job.id;
    if (!same) return;
  }
}

void ExpectSameMemory(const PlanInput& fast, const PlanInput& ref, const std::string& what) {
  const planner::PlannerMemory &a = fast.sim.memory, &b = ref.sim.memory;
  EXPECT_TRUE(a.reservation_holder == b.reservation_holder &&
              a.reservation_promised == b.reservation_promised &&
              a.workspace_turns == b.workspace_turns && a.top_priority == b.top_priority &&
              a.top_priority_seen == b.top_priority_seen)
      << what << ": plannerMemory";
}

void Compare(const std::string& path, const std::string& what) {
  const absl::StatusOr<PlanInput> fast = LoadPlanInput(path, true);
  const absl::StatusOr<PlanInput> ref = LoadPlanInput(path, false);
  ExpectSame(fast, ref, what);
  if (fast.ok() && ref.ok()) ExpectSameMemory(*fast, *ref, what);
}

TEST(FastWorkload, ExamplesReadAsProtobufReadsThem) {
  for (const char* f : {"examples/burst.json", "examples/week.json", "examples/starvation.json",
                        "tools/plan/testdata/running_above.json",
                        "tools/plan/testdata/late_dependency.json",
                        "tools/plan/testdata/duplicate.json", "tools/plan/testdata/zero.json",
                        "tools/plan/testdata/unknown_field.json"}) {
    Compare(f, f);
  }
  // The valid examples take the fast path (else the test above proves
  // nothing about it).
  for (const char* f : {"examples/burst.json", "examples/week.json", "examples/starvation.json",
                        "tools/plan/testdata/running_above.json"}) {
    auto json = ReadFileToString(f);
    ASSERT_TRUE(json.ok()) << json.status();
    PlanInput in;
    in.path = f;
    EXPECT_TRUE(FastLoadWorkload(*json, &in)) << f;
  }
}

// The fast reader runs before the snapshot check: it must decline every
// snapshot (its top-level keys, or jobs without "spec"), which the reference
// reader then reads as one.
TEST(FastWorkload, SnapshotsNeverTakeTheFastPath) {
  const std::string dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/");
  const std::string job =
      R"({"id":"a","workspace":"w","resources":{"cpuMillis":"100","memoryBytes":"1000"}})";
  const std::vector<std::pair<std::string, std::string>> files = {
      {"examples/snapshot-small.json", ""},
      {"examples/snapshot-demo.json", ""},
      {dir + "no_generation.json", absl::StrCat(R"({"jobs":[)", job, "]}")},
      {dir + "mass_cancel.json", absl::StrCat(R"({"allowMassCancel":true,"jobs":[)", job, "]}")},
  };
  for (const auto& [path, text] : files) {
    if (!text.empty()) {
      ASSERT_TRUE(WriteFileAtomically(path, text).ok()) << path;
    }
    auto json = ReadFileToString(path);
    ASSERT_TRUE(json.ok()) << json.status();
    PlanInput in;
    in.path = path;
    EXPECT_FALSE(FastLoadWorkload(*json, &in)) << path;
    const absl::StatusOr<PlanInput> read = LoadPlanInput(path, true);
    ASSERT_TRUE(read.ok()) << path << ": " << read.status();
    EXPECT_TRUE(read->is_snapshot) << path;
    Compare(path, path);
  }
}

std::string Job(std::mt19937_64& rng, int i) {
  auto pick = [&rng](int n) { return static_cast<int>(rng() % n); };
  std::string spec = absl::StrCat(
      R"("id":"j)", i, R"(","workspace":"ws)", pick(3), R"(","action":"a)", pick(2),
      R"(","priority":)", pick(4), R"(,"resources":{"cpuMillis":")", 500 * (1 + pick(8)),
      R"(","memoryBytes":)", int64_t{1 + pick(16)} << 28, R"(},"expectedDuration":")", 60 * (1 + pick(90)),
      R"(s","createdAt":"2026-11-2)", 1 + pick(2), R"(T0)", pick(10), R"(:1)", pick(6),
      R"(:00.5Z")");
  if (pick(4) == 0) absl::StrAppend(&spec, R"(,"pool":"database")");
  if (i > 0 && pick(5) == 0) absl::StrAppend(&spec, R"(,"dependsOn":["j)", pick(i), R"("])");
  if (pick(6) == 0) absl::StrAppend(&spec, R"(,"argv":["sh","-c","x"],"env":{"A":"1"},"labels":{"k":"v"},"image":"i")");
  if (pick(8) == 0) absl::StrAppend(&spec, R"(,"maxDuration":"7200s")");
  std::string job = absl::StrCat(R"({"spec":{)", spec, "}");
  if (pick(2) == 0) absl::StrAppend(&job, R"(,"arrivalOffset":")", pick(3600), "s\"");
  if (pick(3) == 0) absl::StrAppend(&job, R"(,"actualDuration":"1.25s","fails":true)");
  if (pick(4) == 0) absl::StrAppend(&job, R"(,"actualPeakMemoryBytes":")", pick(1 << 30), "\"");
  if (pick(3) == 0) absl::StrAppend(&job, R"(,"queuedAt":"2026-11-22T0)", pick(10), R"(:00:00Z")");
  return job + "}";
}

// One change a writer of files might make, good or bad.
const std::vector<std::pair<std::string, std::string>>& Mutations() {
  static const auto* m = new std::vector<std::pair<std::string, std::string>>{
      {R"("cpuMillis":")", R"("cpuMillis":"-)"},
      {R"("memoryBytes":)", R"("memoryBytes":0.5+)"},
      {R"("expectedDuration":")", R"("expected_duration":")"},
      {R"("expectedDuration":")", R"("expectedDuration":"-)"},
      {R"("workspace":"ws)", R"("workspace":"","x":"ws)"},
      {R"("priority":)", R"("priority":"1","priority":)"},
      {R"("createdAt":"2026-11-2)", R"("createdAt":"2026-11-32)"},
      {R"("id":"j1")", R"("id":"j2")"},
      {R"("id":"j)", R"("id":"j/)"},
      {R"("dependsOn":["j)", R"("dependsOn":["nope)"},
      {R"(:00.5Z")", R"(:00.5+01:00")"},
      {R"("fails":true)", R"("fails":"yes")"},
      {R"("arrivalOffset":")", R"("arrivalOffset":null,"x":")"},
      {R"("labels":{"k":"v"})", R"("labels":{"k":1})"},
      {R"("priority":)", R"("priority":1e0,"p":)"},
      {R"("resources":{)", R"("resources":{"gpu":1,)"},
      {R"(]})", R"(]} trailing)"},
      {R"("startTime")", R"("start_time")"},
      {R"("maxWorkers":8)", R"("maxWorkers":"8")"},
      {R"("queuedAt":"2026-11-22)", R"("queuedAt":"2026-11-24)"},
      {R"("workspace":"ws1","turn":2)", R"("workspace":"ws1","turn":0)"},
      {R"("reservationHolder":"j0")", R"("reservationHolder":"nope")"},
  };
  return *m;
}

TEST(FastWorkload, GeneratedAndMutatedWorkloadsReadAsProtobufReadsThem) {
  const char* fixed = std::getenv("FAST_WORKLOAD_SEED");
  const uint64_t seed0 = fixed ? std::strtoull(fixed, nullptr, 10) : std::random_device()();
  for (uint64_t seed = seed0; seed < seed0 + 300; ++seed) {
    std::mt19937_64 rng(seed);
    std::string jobs;
    const int n = 1 + static_cast<int>(rng() % 30);
    bool first_queued = false;  // j0 is queued at the start: it may hold the reservation
    for (int i = 0; i < n; ++i) {
      const std::string job = Job(rng, i);
      if (i == 0) first_queued = job.find("arrivalOffset") == std::string::npos;
      absl::StrAppend(&jobs, i ? "," : "", job);
    }
    std::string json = absl::StrCat(
        R"({"description":"gen \"q\"","startTime":"2026-11-23T09:00:00Z",)",
        R"("budgets":{"memoryBytes":"68719476736","cpuMillis":"16000","maxWorkers":8,)",
        R"("pools":{"database":{"maxWorkers":2}}},)",
        rng() % 2 ? R"("running":[{"spec":{"id":"r0","workspace":"ws0","resources":{"cpuMillis":"1000","memoryBytes":"1073741824"},"expectedDuration":"600s"},"startedAt":"2026-11-23T08:55:00Z","node":"n1"}],)"
                  : "",
        R"("jobs":[)", jobs, "]",
        first_queued && rng() % 2 == 0
            ? R"(,"plannerMemory":{"reservationHolder":"j0",)"
              R"("workspaceTurns":[{"workspace":"ws1","turn":2}],)"
              R"("topPriority":2,"topPrioritySeen":"2026-11-23T08:00:00Z"})"
            : "",
        "}");
    // Half the files mutated once, somewhere; the others take the fast path.
    const bool mutate = rng() % 2;
    if (!mutate) {
      PlanInput in;
      in.path = "gen";
      const std::string p = absl::StrCat(std::getenv("TEST_TMPDIR"), "/valid.json");
      ASSERT_TRUE(WriteFileAtomically(p, json).ok());
      EXPECT_TRUE(FastLoadWorkload(json, &in))
          << "seed " << seed << " (reference: " << LoadPlanInput(p, false).status() << "): " << json;
    }
    if (mutate) {
      const auto& [from, to] = Mutations()[rng() % Mutations().size()];
      const size_t at = json.find(from, rng() % json.size());
      const size_t where = at != std::string::npos ? at : json.find(from);
      if (where != std::string::npos) json.replace(where, from.size(), to);
    }
    const std::string path =
        absl::StrCat(std::getenv("TEST_TMPDIR"), "/gen_", seed % 16, ".json");
    ASSERT_TRUE(WriteFileAtomically(path, json).ok());
    Compare(path, absl::StrCat("seed ", seed, " (FAST_WORKLOAD_SEED=", seed0, ")"));
    if (HasFailure()) break;
  }
}

}  // namespace
}  // namespace berth::plan
