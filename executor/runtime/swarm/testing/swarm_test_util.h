// Helpers for tests against a real swarm (tools/swarm_cluster.sh up): where
// the manager is, whether the tests must run, options for a unique instance,
// and a cleanup that removes the instance's services through the manager
// directly (so it works even when the runtime under test is broken).
#ifndef BERTH_EXECUTOR_RUNTIME_SWARM_TESTING_SWARM_TEST_UTIL_H_
#define BERTH_EXECUTOR_RUNTIME_SWARM_TESTING_SWARM_TEST_UTIL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "executor/runtime/runtime.h"
#include "executor/runtime/swarm/swarm_runtime.h"

namespace berth {
namespace testing {

// $BERTH_SWARM_MANAGER, else unix:///run/berth-swarm/mgr/docker.sock.
std::string SwarmManagerUrl();
// True when the manager answers /_ping.
bool SwarmAvailable();

// The test image allowed, quick retries, jobs on workers only.
SwarmRuntimeOptions SwarmTestOptions(const std::string& instance);

// Removes every service labelled berth.instance=<instance>; how many.
absl::StatusOr<int> RemoveInstanceServices(const std::string& instance);

// The worker nodes that are Ready and active, by id.
std::vector<NodeInfo> ReadyWorkers(Runtime& rt);

}  // namespace testing
}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_SWARM_TESTING_SWARM_TEST_UTIL_H_
