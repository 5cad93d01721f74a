// berthd serves health while it recovers: the gRPC server starts before the
// store is opened; "" and "berth.v1.Executor" are NOT_SERVING and the
// Executor's RPCs answer UNAVAILABLE "recovering" until the store is open,
// then SERVING. The jobs then load in the background: GetBudgets and GetJob
// answer at once (right), ListJobs waits for the load. Test hooks hold
// recovery and the load (no sleeps: the test awaits a hook, then releases it).
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "berth/v1/executor.grpc.pb.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "executor/store/rocks_store.h"
#include "server/daemon/berthd.h"

namespace berth {
namespace {

constexpr char kPusher[] = "pusher-token-0123456789abcdef";

BerthdConfig Config() {
  BerthdConfig c;
  const char* t = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(t ? t : "/tmp", "/recovery");
  mkdir(dir.c_str(), 0700);
  c.listen = "127.0.0.1:0";
  c.token_file = dir + "/tokens";
  std::ofstream(c.token_file) << "pusher js " << kPusher << "\n";
  chmod(c.token_file.c_str(), 0600);
  c.data_dir = dir + "/data";
  c.instance = testing::UniqueName("recovery");
  c.allowed_images = {"berth-test/*"};
  c.memory_bytes = int64_t{1} << 30;
  c.cpu_millis = 2000;
  c.tick = absl::Milliseconds(500);
  return c;
}

grpc::health::v1::HealthCheckResponse::ServingStatus Health(grpc::Channel& channel,
                                                            const std::string& service) {
  auto stub = grpc::health::v1::Health::NewStub(
      std::shared_ptr<grpc::Channel>(&channel, [](grpc::Channel*) {}));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status s = stub->Check(&ctx, request, &response);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return response.status();
}

TEST(BerthdRecoveryTest, HealthAnswersAndReadsSayRecoveringUntilLoaded) {
  BerthdConfig config = Config();
  testing::InstanceCleanup cleanup(config.instance);
  absl::Notification serving_port_known, release;
  int port = 0;
  BerthdTestHooks hooks;
  hooks.while_recovering = [&](int p) {
    port = p;
    serving_port_known.Notify();
    release.WaitForNotification();
  };
  absl::StatusOr<std::unique_ptr<Berthd>> started;
  std::thread starter([&] { started = Berthd::Start(config, hooks); });
  serving_port_known.WaitForNotification();

  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", port),
                                     grpc::InsecureChannelCredentials());
  using S = grpc::health::v1::HealthCheckResponse;
  EXPECT_EQ(Health(*channel, ""), S::NOT_SERVING);
  EXPECT_EQ(Health(*channel, "berth.v1.Executor"), S::NOT_SERVING);
  auto stub = v1::Executor::NewStub(channel);
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", absl::StrCat("Bearer ", kPusher));
    v1::GetJobRequest request;
    request.set_job_id("a");
    v1::Job job;
    grpc::Status s = stub->GetJob(&ctx, request, &job);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_TRUE(absl::StrContains(s.error_message(), "recovering")) << s.error_message();
  }
  {
    grpc::ClientContext ctx;  // no token: authentication still comes first
    v1::GetJobRequest request;
    v1::Job job;
    EXPECT_EQ(stub->GetJob(&ctx, request, &job).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", absl::StrCat("Bearer ", kPusher));
    auto reader = stub->WatchEvents(&ctx, v1::WatchEventsRequest());
    v1::Event e;
    EXPECT_FALSE(reader->Read(&e));
    grpc::Status s = reader->Finish();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_TRUE(absl::StrContains(s.error_message(), "recovering")) << s.error_message();
  }

  release.Notify();
  starter.join();
  ASSERT_TRUE(started.ok()) << started.status();
  EXPECT_EQ(Health(*channel, ""), S::SERVING);
  EXPECT_EQ(Health(*channel, "berth.v1.Executor"), S::SERVING);
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", absl::StrCat("Bearer ", kPusher));
    v1::GetJobRequest request;
    request.set_job_id("a");
    v1::Job job;
    EXPECT_EQ(stub->GetJob(&ctx, request, &job).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  (*started)->Shutdown();
}

TEST(BerthdRecoveryTest, ServesBudgetsAndJobsWhileTheJobsLoadAndListsOnceLoaded) {
  BerthdConfig config = Config();
  config.data_dir += "-load";
  testing::InstanceCleanup cleanup(config.instance);
  {
    // A store with jobs a (priority 7) and b, as a previous berthd left it.
    absl::StatusOr<std::unique_ptr<RocksStore>> store = RocksStore::Open(config.data_dir);
    ASSERT_TRUE(store.ok()) << store.status();
    SnapshotRequest snapshot;
    snapshot.generation = 5;
    for (const char* id : {"a", "b"}) {
      v1::JobSpec& spec = snapshot.jobs.emplace_back();
      spec.set_id(id);
      spec.set_workspace("ws");
      spec.set_image("berth-test/busybox:1");
      spec.add_argv("true");
      spec.mutable_resources()->set_cpu_millis(100);
      spec.mutable_resources()->set_memory_bytes(int64_t{64} << 20);
    }
    snapshot.jobs[0].set_priority(7);
    ASSERT_TRUE((*store)->ApplySnapshot(snapshot, absl::Now()).ok());
    ASSERT_TRUE((*store)->SetPaused(true, "held", absl::Now()).ok());
  }
  absl::Notification load_started, release_load;
  BerthdTestHooks hooks;
  hooks.before_jobs_load = [&] {
    load_started.Notify();
    release_load.WaitForNotification();
  };
  absl::StatusOr<std::unique_ptr<Berthd>> started = Berthd::Start(config, hooks);
  ASSERT_TRUE(started.ok()) << started.status();
  load_started.WaitForNotification();

  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", (*started)->port()),
                                     grpc::InsecureChannelCredentials());
  using S = grpc::health::v1::HealthCheckResponse;
  EXPECT_EQ(Health(*channel, "berth.v1.Executor"), S::SERVING);
  auto stub = v1::Executor::NewStub(channel);
  auto call = [](grpc::ClientContext& ctx) {
    ctx.AddMetadata("authorization", absl::StrCat("Bearer ", kPusher));
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  };
  {
    grpc::ClientContext ctx;
    call(ctx);
    v1::Budgets budgets;
    grpc::Status s = stub->GetBudgets(&ctx, v1::GetBudgetsRequest(), &budgets);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(budgets.cpu_millis(), 2000);
  }
  {
    grpc::ClientContext ctx;
    call(ctx);
    v1::GetJobRequest request;
    request.set_job_id("a");
    v1::Job job;
    grpc::Status s = stub->GetJob(&ctx, request, &job);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(job.spec().priority(), 7);
    EXPECT_EQ(job.state(), v1::JOB_STATE_QUEUED);
  }
  {
    grpc::ClientContext ctx;
    call(ctx);
    v1::GetJobRequest request;
    request.set_job_id("c");
    v1::Job job;
    EXPECT_EQ(stub->GetJob(&ctx, request, &job).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  // A list needs every job: it is answered once they are loaded, with all.
  grpc::Status listed;
  v1::ListJobsResponse jobs;
  std::thread lister([&] {
    grpc::ClientContext ctx;
    call(ctx);
    listed = stub->ListJobs(&ctx, v1::ListJobsRequest(), &jobs);
  });
  release_load.Notify();
  lister.join();
  ASSERT_TRUE(listed.ok()) << listed.error_message();
  ASSERT_EQ(jobs.jobs_size(), 2);
  EXPECT_EQ(jobs.jobs(0).spec().id(), "a");
  EXPECT_EQ(jobs.jobs(1).spec().id(), "b");
  (*started)->Shutdown();
}

}  // namespace
}  // namespace berth
