// Helpers for tests and the benchmark that run against the real dockerd
// (testonly). Every user picks a unique instance label and a unique job-id
// prefix (container names are global on the host) and cleans up with
// RemoveInstanceContainers, which talks to the engine directly so it works
// even when the runtime under test is broken.
#ifndef BERTH_EXECUTOR_RUNTIME_DOCKER_TESTING_DOCKER_TEST_UTIL_H_
#define BERTH_EXECUTOR_RUNTIME_DOCKER_TESTING_DOCKER_TEST_UTIL_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "executor/runtime/runtime.h"

namespace berth {
namespace testing {

// The busybox image tools/setup.sh builds.
inline constexpr char kTestImage[] = "berth-test/busybox:1";

// "<prefix>-<pid>-<random hex>": unique across processes and runs.
std::string UniqueName(absl::string_view prefix);

// Options for `instance` on the default socket (or $BERTH_DOCKER_URL), with
// the test image allowed and quick retries.
DockerRuntimeOptions TestOptions(const std::string& instance);

// A spec for the test image: 0.5 CPU, 64 MiB.
ContainerSpec TestSpec(const std::string& job, std::vector<std::string> argv);

// Removes (force) every container labelled berth.instance=<instance>.
// Returns how many were removed.
absl::StatusOr<int> RemoveInstanceContainers(const std::string& instance,
                                             const std::string& docker_url =
                                                 "unix:///var/run/docker.sock");

// Polls `cond` every `poll` until it returns true or `timeout` passes.
bool WaitFor(const std::function<bool()>& cond, absl::Duration timeout,
             absl::Duration poll = absl::Milliseconds(100));

// Polls Inspect until the container has finished; DEADLINE_EXCEEDED if not
// within `timeout`; other errors are returned at once unless transient.
absl::StatusOr<ContainerObservation> WaitFinished(Runtime& rt,
                                                  const std::string& job,
                                                  absl::Duration timeout);

// Removes the instance's containers when destroyed (test failures included).
class InstanceCleanup {
 public:
  explicit InstanceCleanup(std::string instance) : instance_(std::move(instance)) {}
  ~InstanceCleanup();
  InstanceCleanup(const InstanceCleanup&) = delete;
  InstanceCleanup& operator=(const InstanceCleanup&) = delete;

 private:
  std::string instance_;
};

}  // namespace testing
}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_DOCKER_TESTING_DOCKER_TEST_UTIL_H_
