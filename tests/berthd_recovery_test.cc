// berthd serves health while it recovers: the gRPC server starts before the
// store is opened; "" and "berth.v1.Executor" are NOT_SERVING and the
// Executor's RPCs answer UNAVAILABLE "recovering" until the store has
// loaded, then SERVING. A test hook holds recovery (no sleeps: the test
// awaits the hook, then releases it).
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

}  // namespace
}  // namespace berth
