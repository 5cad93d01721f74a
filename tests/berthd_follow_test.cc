// Event followers across a berthd restart: a graceful
// stop ends WatchEvents with UNAVAILABLE (never OK), and `berthctl watch
// --follow` and the Python follower reconnect and resume from the last
// revision, with no gap and no repeat; `watch --from` ahead of the current
// revision is the same error with and without --follow; the last applied
// generation is told by GetPlan and by a refused SyncSnapshot's trailers, and
// the Python client starts above it. Real berthd, RocksDB, gRPC, python3.
#include <signal.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "berth/v1/executor.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "planner/base/proto_json.h"
#include "tests/berthctl_util.h"
#include "tests/berthd_process.h"
#include "tools/base/subprocess.h"

namespace berth {
namespace {

using ::berth::testing::Ctl;
using ::berth::testing::Describe;
using ::berth::testing::ExpectContiguousFromOne;
using ::berth::testing::Revisions;
using ::berth::testing::kBerthctl;

std::string Trailer(const grpc::ClientContext& context, const std::string& key) {
  auto trailers = context.GetServerTrailingMetadata();
  auto it = trailers.find(key);
  return it == trailers.end() ? "" : std::string(it->second.data(), it->second.size());
}

std::map<std::string, std::string> PythonEnv() {
  char cwd[4096];
  EXPECT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  return {{"PYTHONPATH", absl::StrCat(cwd, "/clients/python")},
          {"PYTHONDONTWRITEBYTECODE", "1"},
          {"BERTH_TOKEN", TokenFor(Role::kPusher)}};
}

std::vector<std::string> PythonClient(const BerthdProcess& b, const std::string& state_dir,
                                      std::vector<std::string> args) {
  std::vector<std::string> argv = {"/usr/bin/python3", "examples/job_server_client.py",
                                   "--server", b.target(), "--state-dir", state_dir};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

TEST(BerthdFollowTest, ShutdownEndsWatchUnavailableAndFollowersResume) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> started = BerthdProcess::Start({});
  ASSERT_TRUE(started.ok()) << started.status();
  BerthdProcess& b = **started;
  std::unique_ptr<BerthClient> op = b.Client(Role::kOperator);
  ASSERT_TRUE(op->Pause("follow test: before the restart").ok());

  // A raw stream, to see the status berthd ends it with.
  auto stub = v1::Executor::NewStub(
      grpc::CreateChannel(b.target(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext raw_context;
  raw_context.AddMetadata("authorization", "Bearer " + TokenFor(Role::kReader));
  absl::Mutex mu;
  uint64_t raw_last = 0;  // guarded by mu
  grpc::Status raw_status;
  std::thread raw([&] {
    v1::WatchEventsRequest request;
    auto reader = stub->WatchEvents(&raw_context, request);
    v1::Event e;
    while (reader->Read(&e)) {
      absl::MutexLock lock(&mu);
      raw_last = e.revision();
    }
    raw_status = reader->Finish();
  });

  // berthctl and the Python follower, both from the beginning.
  absl::StatusOr<std::unique_ptr<Subprocess>> ctl = Subprocess::Start(
      {kBerthctl, "--server", b.target(), "watch", "--follow", "--json"},
      {{"BERTH_TOKEN", TokenFor(Role::kReader)}});
  ASSERT_TRUE(ctl.ok()) << ctl.status();
  const std::string state_dir = TmpDir() + "/follow-state";
  const std::string log = TmpDir() + "/follow-events.jsonl";
  absl::StatusOr<std::unique_ptr<Subprocess>> py =
      Subprocess::Start(PythonClient(b, state_dir, {"follow", "--log", log}), PythonEnv());
  ASSERT_TRUE(py.ok()) << py.status();
  auto py_revisions = [&] {
    absl::StatusOr<std::string> text = ReadFileToString(log);
    return text.ok() ? Revisions(*text) : std::vector<uint64_t>{};
  };

  // Everyone has read up to the same revision (the raw stream's last).
  uint64_t before = 0;
  ASSERT_TRUE(WaitFor(
      [&] {
        absl::MutexLock lock(&mu);
        before = raw_last;
        std::vector<uint64_t> c = Revisions((*ctl)->Stdout());
        std::vector<uint64_t> p = py_revisions();
        return before > 0 && !c.empty() && c.back() == before && !p.empty() &&
               p.back() == before;
      },
      absl::Seconds(60)))
      << "ctl:\n" << (*ctl)->Stdout() << (*ctl)->Stderr() << "\npy:\n" << (*py)->Stderr();

  // A graceful stop: the stream ends UNAVAILABLE with the revision to resume
  // from; the followers keep running.
  ASSERT_EQ(b.Terminate(absl::Seconds(30)), 0) << b.Log();
  raw.join();
  EXPECT_EQ(raw_status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << raw_status.error_code() << ": " << raw_status.error_message();
  EXPECT_TRUE(absl::StrContains(raw_status.error_message(), "shutting down"))
      << raw_status.error_message();
  EXPECT_EQ(Trailer(raw_context, "berth-last-revision"), absl::StrCat(before));
  ASSERT_TRUE(WaitFor([&] { return absl::StrContains((*ctl)->Stderr(), "reconnecting"); },
                      absl::Seconds(20)))
      << (*ctl)->Stderr();
  EXPECT_TRUE((*ctl)->Running()) << (*ctl)->Stderr();
  EXPECT_TRUE((*py)->Running()) << (*py)->Stderr();

  // berthd again; a new event reaches both followers after the old ones.
  ASSERT_TRUE(b.Restart().ok()) << b.Log();
  ASSERT_TRUE(b.Client(Role::kOperator)->Resume().ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        std::vector<uint64_t> c = Revisions((*ctl)->Stdout());
        std::vector<uint64_t> p = py_revisions();
        return !c.empty() && c.back() > before && !p.empty() && p.back() > before;
      },
      absl::Seconds(60)))
      << "ctl:\n" << (*ctl)->Stderr() << "\npy:\n" << (*py)->Stderr() << b.Log();

  (*ctl)->Signal(SIGTERM);
  ProcessResult r = (*ctl)->Wait(absl::Seconds(20));
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.err, absl::StrCat("reconnecting from revision ", before)))
      << r.err;
  ExpectContiguousFromOne(Revisions(r.out));
  (*py)->Signal(SIGTERM);
  r = (*py)->Wait(absl::Seconds(20));
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.err, "UNAVAILABLE")) << r.err;
  ExpectContiguousFromOne(py_revisions());
}

TEST(BerthdFollowTest, WatchFromAheadIsTheSameErrorWithAndWithoutFollow) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> started = BerthdProcess::Start({});
  ASSERT_TRUE(started.ok()) << started.status();
  Ctl ctl(**started);
  ProcessResult once = ctl.Run(Role::kReader, {"watch", "--from", "1000000"});
  ProcessResult follow = ctl.Run(Role::kReader, {"watch", "--follow", "--from", "1000000"});
  for (const ProcessResult* r : {&once, &follow}) {
    EXPECT_EQ(r->exit_code, 1) << Describe(*r);
    EXPECT_TRUE(absl::StrContains(r->err, "FAILED_PRECONDITION")) << r->err;
    EXPECT_TRUE(absl::StrContains(r->err, "1000000 is ahead of the current revision")) << r->err;
    EXPECT_TRUE(r->out.empty()) << r->out;
    EXPECT_FALSE(absl::StrContains(r->err, "last revision")) << r->err;
  }
}

TEST(BerthdFollowTest, LastAppliedGenerationIsToldAndThePythonClientStartsAboveIt) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> started = BerthdProcess::Start({});
  ASSERT_TRUE(started.ok()) << started.status();
  BerthdProcess& b = **started;
  std::unique_ptr<BerthClient> pusher = b.Client(Role::kPusher);
  absl::StatusOr<v1::Plan> plan = pusher->GetPlan(1);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->last_applied_generation(), 0u);
  v1::Snapshot s;
  s.set_generation(10);
  ASSERT_TRUE(pusher->Sync(s).ok());
  plan = pusher->GetPlan(1);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->last_applied_generation(), 10u);

  // A stale generation: FAILED_PRECONDITION, the rule and the number in the
  // message and in trailing metadata.
  auto stub = v1::Executor::NewStub(
      grpc::CreateChannel(b.target(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + TokenFor(Role::kPusher));
  v1::SyncSnapshotResponse response;
  auto writer = stub->SyncSnapshot(&context, &response);
  v1::SyncSnapshotRequest header;
  header.mutable_header()->set_generation(3);
  v1::SyncSnapshotRequest end;
  end.mutable_end();
  ASSERT_TRUE(writer->Write(header));
  ASSERT_TRUE(writer->Write(end));
  writer->WritesDone();
  grpc::Status status = writer->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "send a generation > 10"))
      << status.error_message();
  EXPECT_EQ(Trailer(context, "berth-last-generation"), "10");

  // The Python client with a fresh state dir syncs generation 11 at once.
  const std::string records = TmpDir() + "/none.json";
  ASSERT_TRUE(WriteFileAtomically(records, "[]").ok());
  ProcessResult r = RunProcess(
      PythonClient(b, TmpDir() + "/fresh-state", {"sync", records}), PythonEnv());
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "\"generation\": 11")) << r.out;
}

}  // namespace
}  // namespace berth
