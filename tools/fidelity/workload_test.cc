#include "tools/fidelity/workload.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/fidelity/py_random.h"

namespace berth::fidelity {
namespace {

// Values printed by CPython 3.11:
//   r = random.Random(1); [r.random() for _ in range(3)]
TEST(PyRandomTest, RandomMatchesCPython) {
  PyRandom r(1);
  EXPECT_DOUBLE_EQ(r.Random(), 0.13436424411240122);
  EXPECT_DOUBLE_EQ(r.Random(), 0.8474337369372327);
  EXPECT_DOUBLE_EQ(r.Random(), 0.763774618976614);
}

// r = random.Random(3); r.uniform(1, 10), r.choice([250, 500, 1000]),
// r.choice([64, 96, 128, 192, 256])
TEST(PyRandomTest, UniformAndChoiceMatchCPython) {
  PyRandom r(3);
  EXPECT_DOUBLE_EQ(r.Uniform(1, 10), 3.141681643827022);
  EXPECT_EQ(r.Choice(std::vector<int>{250, 500, 1000}), 1000);
  EXPECT_EQ(r.Choice(std::vector<int>{64, 96, 128, 192, 256}), 96);
}

// Seeds wider than 32 bits are split into words; 0 is one word 0.
TEST(PyRandomTest, SeedWordsMatchCPython) {
  EXPECT_EQ(PyRandom((uint64_t{1} << 40) + 5).GetRandBits(32), 2166296868U);
  EXPECT_EQ(PyRandom(0).GetRandBits(32), 3626764237U);
}

TEST(PythonFloatReprTest, ShortestWithOneDecimal) {
  EXPECT_EQ(PythonFloatRepr(5.0), "5.0");
  EXPECT_EQ(PythonFloatRepr(9.06), "9.06");
  EXPECT_EQ(PythonFloatRepr(17.623), "17.623");
  EXPECT_EQ(PythonFloatRepr(0.25), "0.25");
}

struct ExpectedJob {
  std::string id;  // without the tag
  std::string seconds;
  int64_t cpu_millis;
  int64_t mebibytes;
  int64_t max_seconds;
};

// What the Python tool (tools/fidelity/berth_fidelity.py, before the port)
// generated for these seeds, printed by it.
const std::vector<ExpectedJob>& Seed1Jobs16Scale1() {
  static const auto* kJobs = new std::vector<ExpectedJob>{
      {"proj-a.000", "8.627", 250, 128, 146},       {"proj-b.001", "7.849", 500, 192, 138},
      {"proj-c.002", "1.845", 250, 192, 78},        {"background.003", "17.623", 250, 192, 236},
      {"proj-a.004", "8.216", 1000, 64, 142},       {"background.005", "10.306", 250, 256, 163},
      {"proj-c.006", "8.931", 1000, 96, 149},       {"background.007", "17.259", 1000, 96, 233},
      {"proj-a.008", "9.453", 1000, 96, 155},       {"proj-b.009", "7.092", 500, 128, 131},
      {"background.010", "14.162", 1000, 64, 202},  {"background.011", "19.925", 500, 64, 259},
      {"proj-a.012", "9.06", 1000, 256, 151},       {"background.013", "14.221", 1000, 96, 202},
      {"proj-c.014", "6.288", 500, 256, 123},       {"background.015", "18.533", 500, 96, 245},
  };
  return *kJobs;
}

void ExpectJobs(const v1::Snapshot& snapshot, const std::vector<ExpectedJob>& expected,
                const std::string& tag) {
  ASSERT_EQ(snapshot.jobs_size(), static_cast<int>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) {
    const v1::JobSpec& job = snapshot.jobs(static_cast<int>(i));
    const ExpectedJob& want = expected[i];
    SCOPED_TRACE(want.id);
    EXPECT_EQ(job.id(), want.id + "." + tag);
    EXPECT_EQ(job.workspace(), want.id.substr(0, want.id.find('.')));
    EXPECT_EQ(job.priority(), job.workspace() == "background" ? 0 : 1);
    EXPECT_THAT(job.argv(), testing::ElementsAre("sleep", want.seconds));
    EXPECT_EQ(job.resources().cpu_millis(), want.cpu_millis);
    EXPECT_EQ(job.resources().memory_bytes(), want.mebibytes << 20);
    EXPECT_EQ(job.max_duration().seconds(), want.max_seconds);
    const double seconds = std::stod(want.seconds);
    EXPECT_EQ(job.expected_duration().seconds(), static_cast<int64_t>(seconds));
    EXPECT_EQ(job.expected_duration().nanos() / 1000000,
              std::llround(seconds * 1000) % 1000);
  }
}

WorkloadOptions Options(int jobs, double scale, uint64_t seed, std::string tag) {
  WorkloadOptions options;
  options.jobs = jobs;
  options.scale = scale;
  options.seed = seed;
  options.tag = std::move(tag);
  return options;
}

TEST(WorkloadTest, SameSeedSameWorkloadAsThePythonTool) {
  WorkloadOptions options = Options(16, 1.0, 1, "abc123");
  options.created = absl::FromUnixSeconds(1700000000);
  const v1::Snapshot snapshot = GenerateWorkload(options);
  EXPECT_EQ(snapshot.generation(), 1u);
  ExpectJobs(snapshot, Seed1Jobs16Scale1(), "abc123");
  for (const v1::JobSpec& job : snapshot.jobs()) {
    EXPECT_EQ(job.created_at().seconds(), 1700000000);
    EXPECT_EQ(job.action(), "run");
    EXPECT_EQ(job.image(), "berth-test/busybox:1");
  }
}

TEST(WorkloadTest, ScaleAndSeedChangeTheWorkload) {
  ExpectJobs(GenerateWorkload(Options(6, 0.5, 3, "t")),
             {{"proj-a.000", "2.949", 500, 256, 89},
              {"proj-b.001", "3.114", 1000, 64, 91},
              {"background.002", "7.346", 1000, 96, 133},
              {"background.003", "8.586", 1000, 256, 146},
              {"proj-a.004", "3.376", 250, 96, 94},
              {"proj-b.005", "4.406", 1000, 192, 104}},
             "t");
}

TEST(WorkloadTest, Deterministic) {
  const WorkloadOptions options = Options(40, 0.5, 7, "t");
  EXPECT_EQ(GenerateWorkload(options).SerializeAsString(),
            GenerateWorkload(options).SerializeAsString());
  WorkloadOptions other = options;
  other.seed = 8;
  EXPECT_NE(GenerateWorkload(options).SerializeAsString(),
            GenerateWorkload(other).SerializeAsString());
}

}  // namespace
}  // namespace berth::fidelity
