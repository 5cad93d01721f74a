// berthd's snapshot stream limits: --max_snapshot_jobs and
// --max_snapshot_message_bytes (BerthdConfig) are enforced against a real
// berthd (in-process: real gRPC on 127.0.0.1, real RocksDB, real Docker).
// A header announcing more jobs than the limit is refused at once, before
// the stream's batches are read; a message over the byte limit is refused
// naming it; neither changes anything; a stream within both is applied;
// batches read ahead of their assembly keep the errors in stream order.
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "berth/v1/executor.grpc.pb.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "server/daemon/berthd.h"
#include "tests/hostile_input_util.h"

namespace berth {
namespace {

using testing::BaseConfig;
using testing::GoodJob;
using testing::kPusher;

constexpr uint64_t kMaxJobs = 10;
constexpr int64_t kMaxMessageBytes = 4 << 10;

v1::SyncSnapshotRequest Header(uint64_t generation, uint64_t jobs) {
  v1::SyncSnapshotRequest m;
  m.mutable_header()->set_generation(generation);
  m.mutable_header()->set_expected_job_count(jobs);
  return m;
}

v1::SyncSnapshotRequest Batch(int first, int count) {
  v1::SyncSnapshotRequest m;
  for (int i = first; i < first + count; ++i) *m.mutable_batch()->add_jobs() = GoodJob(absl::StrCat("job-", i));
  return m;
}

v1::SyncSnapshotRequest End(uint64_t jobs) {
  v1::SyncSnapshotRequest m;
  m.mutable_end()->set_job_count(jobs);
  return m;
}

class SnapshotLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A fresh store per test: nothing but the test's own streams moves it.
    config_ = BaseConfig(absl::StrCat(
        "limits-", ::testing::UnitTest::GetInstance()->current_test_info()->name()));
    config_.max_snapshot_jobs = kMaxJobs;
    config_.max_snapshot_message_bytes = kMaxMessageBytes;
    cleanup_ = std::make_unique<testing::InstanceCleanup>(config_.instance);
    absl::StatusOr<std::unique_ptr<Berthd>> b = Berthd::Start(config_);
    ASSERT_TRUE(b.ok()) << b.status();
    berthd_ = *std::move(b);
    stub_ = v1::Executor::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", berthd_->port()), grpc::InsecureChannelCredentials()));
  }

  void Authorise(grpc::ClientContext* ctx) {
    ctx->AddMetadata("authorization", absl::StrCat("Bearer ", kPusher));
  }

  // Writes `messages` as one SyncSnapshot stream (stopping at the first
  // write the server no longer takes) and returns the status.
  grpc::Status Sync(const std::vector<v1::SyncSnapshotRequest>& messages,
                    v1::SyncSnapshotResponse* response) {
    grpc::ClientContext ctx;
    Authorise(&ctx);
    auto writer = stub_->SyncSnapshot(&ctx, response);
    for (const auto& m : messages) {
      if (!writer->Write(m)) break;
    }
    writer->WritesDone();
    return writer->Finish();
  }

  uint64_t Revision() {
    grpc::ClientContext ctx;
    Authorise(&ctx);
    v1::Plan plan;
    grpc::Status s = stub_->GetPlan(&ctx, v1::GetPlanRequest(), &plan);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return plan.revision();
  }

  BerthdConfig config_;
  std::unique_ptr<testing::InstanceCleanup> cleanup_;
  std::unique_ptr<Berthd> berthd_;
  std::unique_ptr<v1::Executor::Stub> stub_;
};

TEST_F(SnapshotLimitsTest, WithinBothLimitsIsApplied) {
  v1::SyncSnapshotResponse r;
  grpc::Status s = Sync({Header(1, kMaxJobs), Batch(0, 5), Batch(5, 5), End(kMaxJobs)}, &r);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(r.added(), static_cast<int32_t>(kMaxJobs));
}

TEST_F(SnapshotLimitsTest, TooManyJobsAreRefusedAtTheHeader) {
  const uint64_t before = Revision();
  // Only the header: a header within the limit would wait for the rest and
  // then be refused as truncated (INVALID_ARGUMENT).
  v1::SyncSnapshotResponse r;
  grpc::Status s = Sync({Header(1, kMaxJobs + 1)}, &r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_TRUE(absl::StrContains(s.error_message(), "header.expected_job_count: 11 jobs"))
      << s.error_message();
  EXPECT_TRUE(absl::StrContains(s.error_message(), "limit of 10 jobs per snapshot"))
      << s.error_message();
  EXPECT_TRUE(absl::StrContains(s.error_message(), "--max_snapshot_jobs")) << s.error_message();
  grpc::Status within = Sync({Header(1, kMaxJobs)}, &r);
  EXPECT_EQ(within.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << within.error_message();
  EXPECT_TRUE(absl::StrContains(within.error_message(), "end message")) << within.error_message();
  EXPECT_EQ(Revision(), before);
}

TEST_F(SnapshotLimitsTest, TheRefusalComesBeforeTheBatchesAreRead) {
  // The client keeps writing batches after an over-limit header: berthd has
  // answered already, so the stream stops taking them long before all of
  // them (or an end) are sent.
  const uint64_t before = Revision();
  grpc::ClientContext ctx;
  Authorise(&ctx);
  v1::SyncSnapshotResponse r;
  auto writer = stub_->SyncSnapshot(&ctx, &r);
  constexpr int kBatches = 20'000;
  ASSERT_TRUE(writer->Write(Header(1, 1'000'000)));
  int written = 0;
  while (written < kBatches && writer->Write(Batch(written, 1))) ++written;
  grpc::Status s = writer->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_LT(written, kBatches);
  EXPECT_EQ(Revision(), before);
}

TEST_F(SnapshotLimitsTest, AnOversizeMessageIsRefusedNamingIt) {
  const uint64_t before = Revision();
  // ~51 bytes per job: 120 jobs make a batch of ~6 KiB (> 4 KiB).
  v1::SyncSnapshotRequest big = Batch(0, 120);
  ASSERT_GT(big.ByteSizeLong(), static_cast<size_t>(kMaxMessageBytes));
  v1::SyncSnapshotResponse r;
  grpc::Status s = Sync({Header(1, 10), big, End(120)}, &r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_TRUE(absl::StrContains(s.error_message(), "message 2 of the stream"))
      << s.error_message();
  EXPECT_TRUE(absl::StrContains(s.error_message(), "the maximum is 4 KiB")) << s.error_message();
  EXPECT_TRUE(absl::StrContains(s.error_message(), "--max_snapshot_message_bytes"))
      << s.error_message();
  EXPECT_EQ(Revision(), before);
}

TEST_F(SnapshotLimitsTest, AnEarlierBatchsErrorWinsOverALaterOversizeMessage) {
  // Batches are read ahead of their assembly (snapshot_stream.cc): the
  // oversize message 4 may be read before message 3's repeated id is
  // found, but the answer is the error a sequential reader gives.
  const uint64_t before = Revision();
  v1::SyncSnapshotRequest big = Batch(0, 120);
  ASSERT_GT(big.ByteSizeLong(), static_cast<size_t>(kMaxMessageBytes));
  v1::SyncSnapshotResponse r;
  grpc::Status s = Sync({Header(1, 10), Batch(0, 2), Batch(1, 1), big, End(10)}, &r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_TRUE(absl::StrContains(s.error_message(), "job id 'job-1' repeats jobs[1]"))
      << s.error_message();
  EXPECT_FALSE(absl::StrContains(s.error_message(), "message 4")) << s.error_message();
  EXPECT_EQ(Revision(), before);
}

}  // namespace
}  // namespace berth
