// Shared by hostile_input_test and hostile_start_test: tokens, a
// valid job, a berthd configuration in the test's temp dir, raw streams, and
// the suite fixture with one running berthd (testonly).
#ifndef BERTH_TESTS_HOSTILE_INPUT_UTIL_H_
#define BERTH_TESTS_HOSTILE_INPUT_UTIL_H_

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "berth/v1/job.pb.h"
#include "absl/strings/str_cat.h"
#include "berth/v1/executor.grpc.pb.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "server/daemon/berthd.h"
#include "server/daemon/config.h"
#include "tools/base/subprocess.h"

namespace berth::testing {

inline constexpr char kPusher[] = "pusher-token-0123456789abcdef";
inline constexpr char kOperator[] = "operator-token-0123456789abcdef";

using berth::TmpDir;  // tools/base/subprocess.h

// Replaces `path` with `text` and sets its mode.
void WriteFile(const std::string& path, const std::string& text, mode_t mode);

// A job every check accepts: the test image, 0.1 CPU, 64 MiB, workspace "ws".
v1::JobSpec GoodJob(const std::string& id);

// A config in TmpDir()/name: loopback ports, a token file with kPusher and
// kOperator, 1 GiB / 2 cores, a workspaces root holding "ws".
BerthdConfig BaseConfig(const std::string& name);

// Sends `messages` (serialized SyncSnapshotRequests, or any bytes) as one
// SyncSnapshot (or DryRun) stream with `token`; the reply's bytes go to
// `response_bytes` (may be null) when it succeeds.
grpc::Status SendRaw(grpc::Channel& channel, const std::string& token,
                     const std::vector<std::string>& messages, bool dry_run,
                     std::string* response_bytes = nullptr);

// A well-formed stream: header, one batch of `jobs`, end.
std::vector<std::string> Stream(uint64_t generation, const std::vector<v1::JobSpec>& jobs);

// One berthd for the whole suite (admission paused, one applied snapshot
// with the queued job "base"): the state every case must leave unchanged.
class HostileInputTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    config_ = new BerthdConfig(BaseConfig("suite"));
    cleanup_ = new InstanceCleanup(config_->instance);
    absl::StatusOr<std::unique_ptr<Berthd>> b = Berthd::Start(*config_);
    ASSERT_TRUE(b.ok()) << b.status();
    berthd_ = b->release();
    channel_ = new std::shared_ptr<grpc::Channel>(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", berthd_->port()), grpc::InsecureChannelCredentials()));
    // Admission paused, so nothing moves on its own: the state every case
    // must leave unchanged is one applied snapshot with a queued job.
    {
      auto pause_ctx = Context(kOperator);
      v1::PauseRequest pause;
      pause.set_reason("hostile input test");
      v1::ControlState state;
      grpc::Status paused =
          v1::Executor::NewStub(*channel_)->Pause(pause_ctx.get(), pause, &state);
      ASSERT_TRUE(paused.ok()) << paused.error_message();
    }
    std::unique_ptr<grpc::ClientContext> ctx = Context(kPusher);
    v1::SyncSnapshotResponse r;
    auto stub = v1::Executor::NewStub(*channel_);
    auto writer = stub->SyncSnapshot(ctx.get(), &r);
    v1::SyncSnapshotRequest m;
    m.mutable_header()->set_generation(10);
    m.mutable_header()->set_expected_job_count(1);
    writer->Write(m);
    m.Clear();
    v1::JobSpec base = GoodJob("base");
    *m.mutable_batch()->add_jobs() = base;
    writer->Write(m);
    m.Clear();
    m.mutable_end()->set_job_count(1);
    writer->Write(m);
    writer->WritesDone();
    grpc::Status s = writer->Finish();
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  static void TearDownTestSuite() {
    delete berthd_;
    delete channel_;
    delete cleanup_;
    delete config_;
  }

  static std::unique_ptr<grpc::ClientContext> Context(const std::string& token) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->AddMetadata("authorization", absl::StrCat("Bearer ", token));
    return ctx;
  }
  std::unique_ptr<v1::Executor::Stub> Stub() { return v1::Executor::NewStub(*channel_); }

  // What "unchanged" compares: every job's state and the revision of its
  // last change. (Not the plan's revision: GetPlan may answer with the
  // previous plan while the reconciler computes the next one, so it can
  // move with no change at all.)
  std::string State() {
    auto ctx = Context(kOperator);
    v1::ListJobsRequest req;
    v1::ListJobsResponse jobs;
    EXPECT_TRUE(Stub()->ListJobs(ctx.get(), req, &jobs).ok());
    std::string out;
    for (const v1::Job& j : jobs.jobs()) {
      absl::StrAppend(&out, j.spec().id(), "=", v1::JobState_Name(j.state()), "@",
                      j.revision(), ";");
    }
    return out;
  }

  grpc::Status SendRaw(const std::vector<std::string>& messages, bool dry_run,
                       std::string* response_bytes = nullptr) {
    return ::berth::testing::SendRaw(**channel_, kPusher, messages, dry_run, response_bytes);
  }

  static inline BerthdConfig* config_ = nullptr;
  static inline InstanceCleanup* cleanup_ = nullptr;
  static inline Berthd* berthd_ = nullptr;
  static inline std::shared_ptr<grpc::Channel>* channel_ = nullptr;
};

}  // namespace berth::testing

#endif  // BERTH_TESTS_HOSTILE_INPUT_UTIL_H_
