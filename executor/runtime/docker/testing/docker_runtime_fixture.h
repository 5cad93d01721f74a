// The fixture of the DockerRuntime tests against the real dockerd: a runtime
// with its own instance label and job-id prefix, whose containers are removed
// when the test ends, pass or fail. Test-only.
#ifndef BERTH_EXECUTOR_RUNTIME_DOCKER_TESTING_DOCKER_RUNTIME_FIXTURE_H_
#define BERTH_EXECUTOR_RUNTIME_DOCKER_TESTING_DOCKER_RUNTIME_FIXTURE_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "executor/runtime/docker/docker_runtime.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "gtest/gtest.h"

namespace berth::testing {

class DockerRuntimeTest : public ::testing::Test {
 protected:
  DockerRuntimeTest()
      : instance_(UniqueName("it")), cleanup_(instance_), prefix_(instance_) {}

  void SetUp() override {
    absl::StatusOr<std::unique_ptr<DockerRuntime>> rt =
        DockerRuntime::Create(TestOptions(instance_));
    ASSERT_TRUE(rt.ok()) << rt.status();
    rt_ = std::move(*rt);
    ASSERT_TRUE(rt_->Ping().ok()) << "dockerd not reachable; run tools/setup.sh";
  }

  std::string Job(const std::string& name) { return prefix_ + "-" + name; }

  // Starts, waits for the end, returns the observation.
  ContainerObservation RunToEnd(const ContainerSpec& spec) {
    absl::StatusOr<StartResult> r = rt_->Start(spec);
    EXPECT_TRUE(r.ok()) << r.status();
    absl::StatusOr<ContainerObservation> obs =
        WaitFinished(*rt_, spec.job_id, absl::Seconds(60));
    EXPECT_TRUE(obs.ok()) << obs.status();
    return obs.ok() ? *obs : ContainerObservation{};
  }

  ExitOutcome Classify(const ContainerObservation& obs, StopIntent intent) {
    std::optional<ExitOutcome> out = ClassifyExit(obs, intent);
    EXPECT_TRUE(out.has_value());
    return out.value_or(ExitOutcome{});
  }

  const std::string instance_;
  InstanceCleanup cleanup_;
  const std::string prefix_;
  std::unique_ptr<DockerRuntime> rt_;
};


}  // namespace berth::testing

#endif  // BERTH_EXECUTOR_RUNTIME_DOCKER_TESTING_DOCKER_RUNTIME_FIXTURE_H_
