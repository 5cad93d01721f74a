#include "tools/files/snapshot_files.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using google::protobuf::util::MessageDifferencer;

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir ? dir : "/tmp", "/", name);
}

v1::Snapshot SampleSnapshot() {
  v1::Snapshot s;
  s.set_generation(7);
  s.set_allow_mass_cancel(true);
  v1::JobSpec* job = s.add_jobs();
  job->set_id("ws1.job-1");
  job->set_workspace("ws1");
  job->set_action("extract");
  job->set_image("berth-test/busybox:1");
  job->add_argv("sh");
  job->add_argv("-c");
  job->add_argv("echo hi");
  (*job->mutable_env())["MODE"] = "full";
  job->set_priority(3);
  job->mutable_resources()->set_cpu_millis(1500);
  job->mutable_resources()->set_memory_bytes(int64_t{16} << 30);
  job->set_pool("database");
  job->mutable_expected_duration()->set_seconds(3600);
  job->mutable_max_duration()->set_seconds(7200);
  job->add_depends_on("ws1.job-0");
  job->mutable_created_at()->set_seconds(1'790'000'000);
  (*job->mutable_labels())["owner"] = "r17";
  return s;
}

TEST(ProtoJsonTest, SnapshotRoundTripsThroughJson) {
  v1::Snapshot original = SampleSnapshot();
  absl::StatusOr<std::string> json = ToJson(original);
  ASSERT_TRUE(json.ok()) << json.status();
  // The JSON mapping uses lowerCamelCase and strings for 64-bit integers.
  EXPECT_NE(json->find("\"memoryBytes\": \"17179869184\""), std::string::npos) << *json;
  EXPECT_NE(json->find("\"expectedDuration\": \"3600s\""), std::string::npos) << *json;

  v1::Snapshot parsed;
  ASSERT_TRUE(ParseJsonMessage(*json, "mem", &parsed).ok());
  EXPECT_TRUE(MessageDifferencer::Equals(original, parsed))
      << parsed.DebugString();
}

TEST(ProtoJsonTest, WorkloadRoundTripsThroughFile) {
  v1::Workload original;
  original.set_description("two jobs");
  original.mutable_start_time()->set_seconds(1'790'000'000);
  v1::WorkloadJob* job = original.add_jobs();
  *job->mutable_spec() = SampleSnapshot().jobs(0);
  job->mutable_arrival_offset()->set_seconds(90);
  job->mutable_actual_duration()->set_seconds(4000);
  job->set_fails(true);
  original.mutable_budgets()->set_memory_bytes(int64_t{256} << 30);
  original.mutable_budgets()->set_max_workers(24);
  (*original.mutable_budgets()->mutable_pools())["database"].set_max_workers(4);

  std::string path = TempPath("workload.json");
  absl::StatusOr<std::string> json = ToJson(original);
  ASSERT_TRUE(json.ok());
  ASSERT_TRUE(WriteFileAtomically(path, *json).ok());
  absl::StatusOr<v1::Workload> read = ReadWorkloadFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(MessageDifferencer::Equals(original, *read)) << read->DebugString();
}

TEST(ProtoJsonTest, ExampleSnapshotParses) {
  absl::StatusOr<v1::Snapshot> s = ReadSnapshotFile("examples/snapshot-small.json");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->generation(), 1u);
  ASSERT_EQ(s->jobs_size(), 4);
  EXPECT_EQ(s->jobs(1).depends_on(0), "ws-alpha.extract-1");
  EXPECT_EQ(s->jobs(3).pool(), "database");
  EXPECT_EQ(s->jobs(0).resources().memory_bytes(), 64 << 20);
}

struct BadInputCase {
  const char* name;
  const char* json;
  // Substrings the error message must contain.
  std::vector<std::string> mentions;
};

class ProtoJsonBadInputTest : public ::testing::TestWithParam<BadInputCase> {};

TEST_P(ProtoJsonBadInputTest, IsInvalidArgumentNamingFileFieldAndJob) {
  const BadInputCase& c = GetParam();
  v1::Snapshot snapshot;
  snapshot.set_generation(99);
  absl::Status s = ParseJsonMessage(c.json, "in.json", &snapshot);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().find("in.json: "), 0u) << s.message();
  for (const std::string& m : c.mentions) {
    EXPECT_NE(s.message().find(m), absl::string_view::npos)
        << "'" << m << "' not in: " << s.message();
  }
  // Nothing half-parsed is left behind.
  EXPECT_EQ(snapshot.ByteSizeLong(), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ProtoJsonBadInputTest,
    ::testing::Values(
        BadInputCase{"unknown_top_level", R"({"generation": "1", "bogus": 1})",
                     {"bogus", "Cannot find field"}},
        BadInputCase{"unknown_job_field",
                     R"({"jobs": [{"id": "a"}, {"id": "job-b", "cpu": 1}]})",
                     {"job 'job-b'", "jobs[1]", "cpu"}},
        BadInputCase{"bad_int64",
                     R"({"jobs": [{"id": "j1", "resources": {"memoryBytes": "lots"}}]})",
                     {"job 'j1'", "jobs[0].resources.memory_bytes", "lots"}},
        BadInputCase{"bad_enum_like_int", R"({"jobs": [{"id": "j2", "priority": "high"}]})",
                     {"job 'j2'", "jobs[0].priority"}},
        BadInputCase{"bad_duration",
                     R"({"jobs": [{"id": "j3", "expectedDuration": "3 hours"}]})",
                     {"job 'j3'", "expected_duration"}},
        BadInputCase{"truncated", R"({"jobs": [)", {"in.json"}}),
    [](const ::testing::TestParamInfo<BadInputCase>& info) {
      return info.param.name;
    });

TEST(ProtoJsonTest, MissingFileIsNotFound) {
  absl::StatusOr<v1::Snapshot> s = ReadSnapshotFile(TempPath("does-not-exist.json"));
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.status().message().find("does-not-exist.json"), absl::string_view::npos);
}

TEST(ProtoJsonTest, AtomicWriteToMissingDirectoryLeavesNothing) {
  std::string path = TempPath("no-such-dir/out.json");
  absl::Status s = WriteFileAtomically(path, "{}");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(access(path.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace berth
