// Every proto compiles for C++ and the descriptors describe the API DESIGN.md
// promises: the Executor service with its 14 methods and their streaming
// shapes, plus the grpc.health.v1 and v1alpha reflection services.
#include <string>
#include <vector>

#include "berth/v1/budgets.pb.h"
#include "berth/v1/event.pb.h"
#include "berth/v1/executor.grpc.pb.h"
#include "berth/v1/executor.pb.h"
#include "berth/v1/files.pb.h"
#include "berth/v1/job.pb.h"
#include "berth/v1/plan.pb.h"
#include "google/protobuf/descriptor.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using google::protobuf::DescriptorPool;
using google::protobuf::MethodDescriptor;
using google::protobuf::ServiceDescriptor;

struct MethodShape {
  std::string name;
  bool client_streaming;
  bool server_streaming;
};

TEST(ProtoCompileTest, ExecutorServiceHasEveryMethodWithItsShape) {
  const ServiceDescriptor* service =
      DescriptorPool::generated_pool()->FindServiceByName("berth.v1.Executor");
  ASSERT_NE(service, nullptr);
  const std::vector<MethodShape> expected = {
      {"SyncSnapshot", true, false},      {"DryRun", true, false},
      {"WatchEvents", false, true},       {"GetPlan", false, false},
      {"ListJobs", false, false},         {"GetJob", false, false},
      {"ExplainJob", false, false},       {"GetBudgets", false, false},
      {"SetBudgets", false, false},       {"Pause", false, false},
      {"Resume", false, false},           {"SetPoolMaintenance", false, false},
      {"Drain", false, false},            {"RightSize", false, false},
      {"Backup", false, false},
      {"ReadJobLog", false, true},
  };
  EXPECT_EQ(service->method_count(), static_cast<int>(expected.size()));
  for (const MethodShape& m : expected) {
    const MethodDescriptor* method = service->FindMethodByName(m.name);
    ASSERT_NE(method, nullptr) << m.name;
    EXPECT_EQ(method->client_streaming(), m.client_streaming) << m.name;
    EXPECT_EQ(method->server_streaming(), m.server_streaming) << m.name;
  }
}

TEST(ProtoCompileTest, JobSpecHasEveryDesignField) {
  const auto* spec = v1::JobSpec::descriptor();
  for (const char* field :
       {"id", "workspace", "action", "image", "argv", "env", "priority",
        "resources", "pool", "expected_duration", "max_duration", "depends_on",
        "created_at", "labels"}) {
    EXPECT_NE(spec->FindFieldByName(field), nullptr) << field;
  }
}

TEST(ProtoCompileTest, ReasonCodesCoverDesign) {
  const auto* reason = v1::WaitReason_descriptor();
  for (const char* value :
       {"WAITING_FOR_MEMORY", "WAITING_FOR_CPU", "WAITING_FOR_WORKER_SLOT",
        "WAITING_FOR_POOL_SLOT", "WAITING_FOR_DEPENDENCIES",
        "WAITING_FOR_PRIORITY", "PAUSED", "POOL_IN_MAINTENANCE",
        "NEVER_FITS"}) {
    EXPECT_NE(reason->FindValueByName(value), nullptr) << value;
  }
  const auto* cause = v1::FailureCause_descriptor();
  for (const char* value :
       {"FAILURE_CAUSE_NONZERO_EXIT", "FAILURE_CAUSE_OOM_KILLED",
        "FAILURE_CAUSE_TIMED_OUT", "FAILURE_CAUSE_START_FAILED",
        "FAILURE_CAUSE_LOST", "FAILURE_CAUSE_DEPENDENCY_FAILED"}) {
    EXPECT_NE(cause->FindValueByName(value), nullptr) << value;
  }
}

TEST(ProtoCompileTest, HealthAndReflectionServicesAreRegistered) {
  const DescriptorPool* pool = DescriptorPool::generated_pool();
  const ServiceDescriptor* health = pool->FindServiceByName("grpc.health.v1.Health");
  ASSERT_NE(health, nullptr);
  EXPECT_NE(health->FindMethodByName("Check"), nullptr);
  EXPECT_NE(health->FindMethodByName("Watch"), nullptr);
  const ServiceDescriptor* reflection =
      pool->FindServiceByName("grpc.reflection.v1alpha.ServerReflection");
  ASSERT_NE(reflection, nullptr);
  EXPECT_TRUE(reflection->FindMethodByName("ServerReflectionInfo")->client_streaming());
}

}  // namespace
}  // namespace berth
