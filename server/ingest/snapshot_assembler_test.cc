#include "server/ingest/snapshot_assembler.h"

#include <string>
#include <vector>

#include "executor/store/spec_fingerprint.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

v1::SyncSnapshotRequest Header(uint64_t generation, uint64_t expected) {
  v1::SyncSnapshotRequest r;
  r.mutable_header()->set_generation(generation);
  r.mutable_header()->set_expected_job_count(expected);
  return r;
}

v1::SyncSnapshotRequest Batch(std::vector<std::string> ids) {
  v1::SyncSnapshotRequest r;
  for (const std::string& id : ids) r.mutable_batch()->add_jobs()->set_id(id);
  return r;
}

v1::SyncSnapshotRequest End(uint64_t count) {
  v1::SyncSnapshotRequest r;
  r.mutable_end()->set_job_count(count);
  return r;
}

TEST(SnapshotAssemblerTest, AssemblesBatchesInOrder) {
  SnapshotAssembler a;
  auto h = Header(5, 3);
  h.mutable_header()->set_allow_mass_cancel(true);
  auto b1 = Batch({"a", "b"});
  auto b2 = Batch({"c"});
  auto e = End(3);
  ASSERT_TRUE(a.Add(h).ok());
  ASSERT_TRUE(a.Add(b1).ok());
  ASSERT_TRUE(a.Add(b2).ok());
  ASSERT_TRUE(a.Add(e).ok());
  absl::StatusOr<ReceivedSnapshot> s = a.Finish();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->generation, 5u);
  EXPECT_TRUE(s->allow_mass_cancel);
  ASSERT_EQ(s->jobs.size(), 3u);
  EXPECT_EQ(s->jobs[0].id(), "a");
  EXPECT_EQ(s->jobs[2].id(), "c");
  // Each job's fingerprint, computed as its batch arrived.
  ASSERT_EQ(s->fingerprints.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(s->fingerprints[i], SpecFingerprint(s->jobs[i])) << i;
  }
  EXPECT_NE(s->fingerprints[0], s->fingerprints[1]);
}

TEST(SnapshotAssemblerTest, EmptySnapshotIsValid) {
  SnapshotAssembler a;
  auto h = Header(1, 0);
  auto e = End(0);
  ASSERT_TRUE(a.Add(h).ok());
  ASSERT_TRUE(a.Add(e).ok());
  absl::StatusOr<ReceivedSnapshot> s = a.Finish();
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->jobs.empty());
}

struct StreamCase {
  const char* name;
  std::vector<v1::SyncSnapshotRequest> messages;
  absl::StatusCode code;
  const char* mentions;
};

class SnapshotAssemblerErrorTest : public ::testing::TestWithParam<StreamCase> {};

TEST_P(SnapshotAssemblerErrorTest, RefusesWithPreciseError) {
  const StreamCase& c = GetParam();
  SnapshotAssembler a(/*max_jobs=*/1000);
  absl::Status status;
  for (v1::SyncSnapshotRequest m : c.messages) {
    status = a.Add(m);
    if (!status.ok()) break;
  }
  if (status.ok()) status = a.Finish().status();
  EXPECT_EQ(status.code(), c.code) << status;
  EXPECT_NE(status.message().find(c.mentions), absl::string_view::npos)
      << status.message();
  // Sticky: the assembler never yields a snapshot after an error.
  EXPECT_EQ(a.Finish().status().code(), c.code);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SnapshotAssemblerErrorTest,
    ::testing::Values(
        StreamCase{"no_header", {Batch({"a"}), End(1)},
                   absl::StatusCode::kInvalidArgument, "before the header"},
        StreamCase{"end_without_header", {End(0)},
                   absl::StatusCode::kInvalidArgument, "before the header"},
        StreamCase{"empty_message", {v1::SyncSnapshotRequest()},
                   absl::StatusCode::kInvalidArgument, "none of header"},
        StreamCase{"second_header", {Header(1, 0), Header(2, 0)},
                   absl::StatusCode::kInvalidArgument, "second header"},
        StreamCase{"generation_zero", {Header(0, 0)},
                   absl::StatusCode::kInvalidArgument, "header.generation"},
        StreamCase{"duplicate_id", {Header(1, 3), Batch({"a", "b"}), Batch({"a"})},
                   absl::StatusCode::kInvalidArgument, "job id 'a' repeats jobs[0]"},
        StreamCase{"more_than_expected", {Header(1, 1), Batch({"a", "b"})},
                   absl::StatusCode::kInvalidArgument, "expected_job_count"},
        StreamCase{"end_count_mismatch", {Header(1, 2), Batch({"a", "b"}), End(3)},
                   absl::StatusCode::kInvalidArgument,
                   "end.job_count: 3 but 2 jobs were received (as header.expected_job_count says)"},
        // The header's count is the wrong one: it is the one blamed.
        StreamCase{"fewer_than_expected", {Header(1, 2), Batch({"a"}), End(1)},
                   absl::StatusCode::kInvalidArgument,
                   "header.expected_job_count: 2 but 1 jobs were received (as end.job_count says)"},
        StreamCase{"both_counts_wrong", {Header(1, 3), Batch({"a"}), End(2)},
                   absl::StatusCode::kInvalidArgument,
                   "end.job_count: 2 and header.expected_job_count: 3 but 1 jobs were received"},
        StreamCase{"batch_after_end", {Header(1, 0), End(0), Batch({"a"})},
                   absl::StatusCode::kInvalidArgument, "after the end"},
        StreamCase{"end_twice", {Header(1, 0), End(0), End(0)},
                   absl::StatusCode::kInvalidArgument, "twice"},
        StreamCase{"truncated", {Header(1, 2), Batch({"a"})},
                   absl::StatusCode::kInvalidArgument, "truncated"},
        StreamCase{"too_many_announced", {Header(1, 1001)},
                   absl::StatusCode::kResourceExhausted, "limit of 1000"}),
    [](const ::testing::TestParamInfo<StreamCase>& info) {
      return info.param.name;
    });

TEST(SnapshotAssemblerTest, FromSnapshotChecksDuplicates) {
  v1::Snapshot s;
  s.set_generation(2);
  s.add_jobs()->set_id("x");
  s.add_jobs()->set_id("x");
  EXPECT_EQ(SnapshotAssembler::FromSnapshot(s).status().code(),
            absl::StatusCode::kInvalidArgument);
  s.mutable_jobs(1)->set_id("y");
  absl::StatusOr<ReceivedSnapshot> ok = SnapshotAssembler::FromSnapshot(s);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->jobs.size(), 2u);
}

}  // namespace
}  // namespace berth
