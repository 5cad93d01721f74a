// The Docker Swarm side of the Engine API (1.41) as Runtime types: service
// names, the service spec Berth creates for a job, and the parsing of the
// service, task and node lists into one bulk ContainerList.
//
// Pure functions, no I/O. Malformed input gives INTERNAL (the engine broke its
// contract); missing optional fields give defaults. Thread-safe (stateless).
#ifndef BERTH_EXECUTOR_RUNTIME_SWARM_SWARM_JSON_H_
#define BERTH_EXECUTOR_RUNTIME_SWARM_SWARM_JSON_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "executor/runtime/runtime.h"

namespace berth {

// InstanceNamePrefix (executor/runtime/container_names.h), the same as the
// Docker runtime's container names: every service (and so every task, whose
// name starts with its service's) of one Berth instance starts with it, which
// lets one GET /tasks?filters={"name":[prefix]} list exactly this instance's.
std::string SwarmServicePrefix(absl::string_view instance);

// The service of one run of a job: prefix + the job id made a DNS label
// (dots and underscores become '-', at most 20 chars) + "-" + 12 hex of a
// hash of (instance, job id) + "-a<attempt counted from 1, as the API's>"
// (`attempt` is 0-based; services of an older berthd count from 0 and are
// found by their labels, ParseAttemptLabel). Deterministic, at most 63
// chars ([A-Za-z0-9-], as Swarm requires): a second create of the same run is
// refused by the manager (409) however often berthd crashes and retries.
std::string SwarmServiceName(absl::string_view instance,
                             absl::string_view job_id, int attempt);

// What shapes a job's service beyond its ContainerSpec.
struct SwarmServiceOptions {
  std::string instance;
  std::string user = "65534:65534";
  int64_t pids_limit = 256;
  bool readonly_rootfs = true;
  int64_t tmp_size_bytes = 64 << 20;
  std::string log_max_size = "10m";
  int log_max_files = 3;
  absl::Duration stop_grace = absl::Seconds(10);
  // Mounted at /workspace as <workspaces_root>/<workspace> from the node the
  // task runs on (the directory must exist there: a shared filesystem).
  std::string workspaces_root;
  // The shared workspace group's gid, the task's one supplementary group
  // (ContainerSpec.Groups); -1: none (EngineRuntimeOptions::workspace_gid).
  int64_t workspace_gid = -1;
  // Extra placement constraints for every job, e.g. "node.role==worker".
  std::vector<std::string> constraints;
};

// The JSON body of POST /services/create: a replicated-job with one
// completion, restart condition none, image by id (never pulled), labels
// berth.job/workspace/action/instance/attempt/image on the service and its
// containers, reservations = limits = the job's resources plus a pids
// limit, placement on spec.node when set. REQUIRES: the spec passed
// validation; image_id is the "sha256:..." id of spec.image.
std::string BuildServiceSpec(const ContainerSpec& spec, absl::string_view image_id,
                             const SwarmServiceOptions& options);

// One service of this instance (GET /services).
struct SwarmService {
  std::string id;
  std::string name;
  std::string job_id;
  int attempt = 0;
  std::string image;  // the reference the job asked for (berth.image)
  // Berth asked Swarm to end its task (StopJobServiceSpec): zero completions.
  bool stopped = false;
};
// The body of POST /services/{id}/update that ends a job service's task:
// `inspected` is GET /services/{id} (its Spec), returned with zero
// completions and zero concurrency (and without the update and rollback
// configs, which a job may not carry). Docker 20.10 (swarmkit's replicated-job
// orchestrator) treats every update of a job as a new job iteration and sets
// the desired state of the older iteration's tasks that have not ended to
// "remove": the node's agent stops the container (SIGTERM, StopGracePeriod,
// SIGKILL), reports the task shut down with its exit code, and the task
// reaper then deletes the task's record. Zero completions: no new task.
// INTERNAL when `inspected` has no Spec.
absl::StatusOr<std::string> StopJobServiceSpec(absl::string_view inspected);

// GET /services answer -> services labelled berth.instance=`instance` with a
// berth.job label.
absl::StatusOr<std::vector<SwarmService>> ParseServiceList(
    absl::string_view body, absl::string_view instance);

// One task (GET /tasks).
struct SwarmTask {
  std::string id;
  std::string service_id;
  std::string node_id;
  std::string state;          // new ... running, complete, failed, shutdown...
  std::string desired_state;  // running, complete, shutdown, remove
  std::string err;            // Status.Err
  std::string message;        // Status.Message
  std::string container_id;   // Status.ContainerStatus.ContainerID
  int exit_code = 0;          // Status.ContainerStatus.ExitCode
  int64_t version = 0;        // Version.Index: newer tasks have larger ones
  std::optional<absl::Time> created_at;
  std::optional<absl::Time> status_at;  // Status.Timestamp: last change
  std::string job_id;                   // its container's berth.job label
  int64_t reserved_memory_bytes = 0;    // Spec.Resources.Reservations
  int64_t reserved_nano_cpus = 0;
};
absl::StatusOr<std::vector<SwarmTask>> ParseTaskList(absl::string_view body);

// GET /nodes answer -> nodes sorted by id; GET /nodes/{id} -> one node.
absl::StatusOr<std::vector<NodeInfo>> ParseNodeList(absl::string_view body);
absl::StatusOr<NodeInfo> ParseNode(absl::string_view body);

// GET /images/{name}/json answer -> the image id ("sha256:...").
absl::StatusOr<std::string> ParseImageId(absl::string_view body);
// POST /services/create answer -> the new service's id.
absl::StatusOr<std::string> ParseServiceCreate(absl::string_view body);

// A task's state as a ContainerObservation (job_id and container_id are the
// caller's). node_ready: whether the task's node is Ready (ignored once the
// task is terminal). Mapping:
//   new ... starting             -> kCreated (accepted, not yet running)
//   running                      -> kRunning
//   complete                     -> kExited, exit 0
//   failed with an exit code     -> kExited with it; 137 -> oom_killed (the
//                                   manager does not carry the node's
//                                   OOMKilled: Berth's own stops never end a
//                                   task in "failed" and Swarm's end it in
//                                   "shutdown", so a SIGKILL ending a task
//                                   in "failed" is the kernel's OOM killer)
//   rejected once its container existed (the constraint enforcer moving it
//   off a node that went away)  -> kDead, lost
//   failed without one, rejected -> kDead, start_failed
//   shutdown, remove, orphaned   -> kDead, lost (Swarm ended it, not the job)
//   not terminal on a node that is not Ready -> kDead, lost
ContainerObservation ObserveTask(const SwarmTask& task, bool node_ready);

// True for task states after which the task never runs again.
bool IsTerminalTaskState(absl::string_view state);

// The bulk list: for each job, the service with the highest attempt and its
// newest task seen through `observe` (a service without a task yet is
// kCreated). Tasks of other services (e.g. of removed ones, which Docker
// 20.10 keeps: moby#44312) are ignored. container_id is the service id;
// started_at is the observation's (the task's running timestamp).
ContainerList BuildContainerList(
    const std::vector<SwarmService>& services, const std::vector<SwarmTask>& tasks,
    const std::function<ContainerObservation(const SwarmTask&)>& observe);

// Stray tasks: this instance's tasks (`tasks`, listed by the instance's name
// prefix) that have not ended, are placed on a node and belong to no job's
// newest live service (`services`): the task of a removed service (Docker
// 20.10 leaves it running: a stop by removal, e.g. by an older berthd) or of
// an older attempt. They hold memory and CPU on their node whatever their
// service's state.
std::vector<SwarmTask> StrayTasks(const std::vector<SwarmService>& services,
                                  const std::vector<SwarmTask>& tasks);

// The newest task (highest version) of `service_id`, or nullptr.
const SwarmTask* NewestTask(const std::vector<SwarmTask>& tasks,
                            absl::string_view service_id);

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_SWARM_SWARM_JSON_H_
