// Helpers for tests against a real swarm (tools/swarm_cluster.sh up): where
// the manager is, whether the tests must run, options for a unique instance,
// and a cleanup that removes the instance's services through the manager
// directly (so it works even when the runtime under test is broken).
#ifndef BERTH_EXECUTOR_RUNTIME_SWARM_TESTING_SWARM_TEST_UTIL_H_
#define BERTH_EXECUTOR_RUNTIME_SWARM_TESTING_SWARM_TEST_UTIL_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
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

// The id ("sha256:...") of an image on the manager.
absl::StatusOr<std::string> ManagerImageId(const std::string& reference);

// Removes every service labelled berth.instance=<instance>; how many.
absl::StatusOr<int> RemoveInstanceServices(const std::string& instance);

// The worker nodes that are Ready and active, by id.
std::vector<NodeInfo> ReadyWorkers(Runtime& rt);

// Sets a node's availability ("active", "pause", "drain") through the
// manager's API (POST /nodes/{id}/update).
absl::Status SetNodeAvailability(const std::string& node_id, const std::string& availability);

// The worker daemons of tools/swarm_cluster.sh: name ("w1", ...) -> the
// node id its own socket reports (those that answer).
std::map<std::string, std::string> WorkerNodeIds();

// kill -9 of the dockerd of worker `name` (by its pidfile), after creating
// its `hold` file so that the cluster's keeper leaves it down.
absl::Status KillWorkerDaemon(const std::string& name);

// Removes every worker's `hold` (tools/swarm_cluster.sh's keeper, which runs
// outside the test, then restarts dead daemons: one started by a test would
// be killed with it when the test ends), waits until they answer, sets every
// worker active and waits until every node is Ready and active.
// FAILED_PRECONDITION if the keeper is not running.
absl::Status RestoreCluster(absl::Duration timeout);

// One sample of the manager's view of an instance's jobs: its services and
// the tasks of those services that have not ended.
struct ClusterSample {
  // Node id -> memory reserved (Spec.Resources.Reservations.MemoryBytes)
  // by the instance's live tasks there.
  std::map<std::string, int64_t> reserved_by_node;
  // Job id -> its services (one per attempt) that exist now.
  std::map<std::string, std::vector<std::string>> services_by_job;
  // Job id -> nodes of its live tasks (more than one = two runs at once).
  std::map<std::string, std::vector<std::string>> live_nodes_by_job;
};
absl::StatusOr<ClusterSample> SampleCluster(const std::string& instance);

// When the running task of `job_id` (this instance's service of it) really
// started: its container's State.StartedAt as the node's own engine reports
// it (read from the node's socket under /run/berth-swarm, the cluster of
// tools/swarm_cluster.sh), with the service's CreatedAt beside it.
// NOT_FOUND when the job has no running task (yet) or no node knows the
// container.
struct TaskStart {
  std::string node_id;
  std::string container_id;
  absl::Time container_started_at;
  absl::Time service_created_at;
};
absl::StatusOr<TaskStart> RunningTaskStart(const std::string& instance, const std::string& job_id);

// What really runs: the instance's running containers as each node's own
// engine reports them (GET /containers/json on the node sockets of
// tools/swarm_cluster.sh, not the manager's task list), with the memory limit
// each was given.
struct NodeProcesses {
  // Job id (berth.job) -> node names ("mgr", "w1", ...), one per container.
  std::map<std::string, std::vector<std::string>> nodes_by_job;
  // Node name -> memory limits of those containers, summed.
  std::map<std::string, int64_t> memory_by_node;
  // Node name -> its swarm node id (as its engine reports it).
  std::map<std::string, std::string> node_ids;
  // Nodes whose engine did not answer (only with skip_unreachable).
  std::vector<std::string> unreachable;
};
// Nodes whose socket does not exist are skipped; one that exists and does
// not answer is an error (UNAVAILABLE), unless skip_unreachable: a test that
// kills a node's dockerd on purpose samples the others and counts that
// node's containers from the host's process table instead.
absl::StatusOr<NodeProcesses> SampleNodeProcesses(const std::string& instance,
                                                  bool skip_unreachable = false);

}  // namespace testing
}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_SWARM_TESTING_SWARM_TEST_UTIL_H_
