// SwarmRuntime: the Runtime over a Docker Swarm manager's Engine API (1.41).
//
// Each run of a job is one service (swarm_json.h SwarmServiceName: the
// instance, the job id and ContainerSpec::attempt), in replicated-job mode
// with one completion and restart condition none, placed by constraint on
// ContainerSpec::node when set, reservations = limits = the job's resources
// plus a pids limit, hardened as far as Swarm expresses it (user, read-only
// root with a tmpfs /tmp, CapDrop ALL, init, no network unless the pool names
// one; docs/cluster.md lists what Swarm cannot express). The image
// reference is checked against the allow-list, resolved to its id on the
// manager and the service names the id: nodes never pull (a tag would make
// each node's agent try its registry first).
//
// Observation is bulk: List() makes three calls whatever the number of jobs
// (this instance's services by label, its tasks by name prefix, the nodes).
// The service list is needed because Docker 20.10 keeps the tasks of removed
// replicated-job services forever (moby/moby#44312): only tasks of live
// services count. A task on a node that was lost is fenced (node_loss.h): it
// reads as still running (or still starting) until its attempt is known to
// have ended, then finished and `lost` (ClassifyExit: requeued) with a reason
// naming the node. Start answers running=false: a job is RUNNING only once
// a list shows its task running, with the task's own start time.
//
// Stop ends the job's task through the manager (swarm_json.h
// StopJobServiceSpec: an update to zero completions, which Docker 20.10 and
// later turn into the desired state "remove" for the running task; removing
// the service does NOT stop a replicated job's task before Docker 24), after
// reading the log tail (the agent removes the container). It returns once the
// engine says the task ended -- its record terminal (with its exit code) or
// deleted by the task reaper, which happens only after the node's agent
// reported it ended -- and keeps a tombstone (the job reads as exited with
// that code, or dead without one, with that log) until Remove. Not ended
// within stop_grace + call_timeout + stop_margin: DEADLINE_EXCEEDED, no
// tombstone (asked again next pass). On a lost node: UNAVAILABLE, no
// tombstone (the job stays held; node_loss.h). Tombstones live in memory:
// after a berthd crash the job reads as a task-less service (kCreated) and
// ClassifyExit uses the recorded stop intent. Remove never deletes a service
// whose task still runs on a Ready node: it asks the task to end and answers
// UNAVAILABLE until it has.
//
// Calls go through EngineClient (executor/runtime/docker/engine_client.h)
// and are retried like DockerRuntime's: reads, stop and remove are
// idempotent; create is made so by the fixed name (409 -> adopt).
//
// Thread-safe.
#ifndef BERTH_EXECUTOR_RUNTIME_SWARM_SWARM_RUNTIME_H_
#define BERTH_EXECUTOR_RUNTIME_SWARM_SWARM_RUNTIME_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "executor/runtime/docker/docker_http.h"
#include "executor/runtime/docker/engine_client.h"
#include "executor/runtime/runtime.h"
#include "executor/runtime/swarm/node_loss.h"
#include "executor/runtime/swarm/swarm_json.h"
#include "planner/base/clock.h"

namespace berth {

// The shared fields (endpoint -- the manager's Engine API, never a node that
// is not a manager --, instance, allow-list, user, pids limit, read-only
// root, log rotation, workspaces root -- on every node --, logs tail lines,
// call timeout, retries, backoff, clock) are EngineRuntimeOptions'.
struct SwarmRuntimeOptions : EngineRuntimeOptions {
  // Size of the tmpfs at /tmp (with readonly_rootfs).
  int64_t tmp_size_bytes = 64 << 20;
  // SIGTERM -> SIGKILL grace used when a service is removed (StopGracePeriod,
  // fixed at creation: Stop's own grace argument cannot change it).
  absl::Duration stop_grace = absl::Seconds(10);
  // Extra placement constraints for every job, e.g. "node.role==worker".
  std::vector<std::string> constraints;
  // Log bytes kept in a Stop tombstone.
  size_t stop_logs_bytes = 64 << 10;
  // How often Stop polls for the task to end. The manager deletes the ended
  // task's record in batches of 250 ms (swarmkit's task reaper): a poll this
  // often reads its exit code in most stops (missed: recorded without one).
  absl::Duration stop_poll = absl::Milliseconds(50);
  // Stop waits stop_grace + call_timeout + this long for the node's agent to
  // report the task ended (its SIGKILL comes at stop_grace).
  absl::Duration stop_margin = absl::Seconds(5);
  // Node loss (node_loss.h): a node down this long counts as dead and its
  // jobs are requeued (Nomad's max_client_disconnect). 0 (default): never on
  // time alone -- only once the node is back and the attempt ended, or the
  // node was removed from the swarm.
  absl::Duration node_lost_grace = absl::ZeroDuration();
  // A lost node back Ready for stop_grace + this long has stopped the tasks
  // the manager ended while it was away (its agent's reconciliation).
  absl::Duration rejoin_margin = absl::Seconds(5);
};

// Percent-encodes a query value (filters=...).
std::string SwarmQueryEscape(absl::string_view s);

class SwarmRuntime final : public Runtime {
 public:
  // Validates the options (INVALID_ARGUMENT). Makes no engine call.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SwarmRuntime>> Create(
      SwarmRuntimeOptions options);

  // Errors as Runtime::Start; NOT_FOUND when the image is not on the
  // manager (it resolves the id there); INVALID_ARGUMENT for a bad node id.
  absl::StatusOr<StartResult> Start(const ContainerSpec& spec) override;
  absl::StatusOr<ContainerList> List() override;
  absl::StatusOr<ContainerObservation> Inspect(absl::string_view job_id) override;
  absl::Status Stop(absl::string_view job_id, absl::Duration grace) override;
  absl::StatusOr<std::string> LogsTail(absl::string_view job_id,
                                       size_t max_bytes) override;
  // The newest attempt's whole log through the manager (GET
  // /services/{id}/logs: the node's agent streams it), stdout and stderr
  // apart. A job stopped by Stop (its service removed) has only what Stop
  // read before the removal: its last stop_logs_bytes, stdout and stderr
  // merged, after a line saying so. NOT_FOUND: no service, or its node is
  // lost (no agent to read from: held or requeued jobs keep no log).
  absl::Status ReadLogs(absl::string_view job_id, const LogReadOptions& options,
                        const LogSink& sink) override;
  // Removes every service (every attempt) of the job and its tombstone.
  absl::Status Remove(absl::string_view job_id) override;
  // The cluster: CPUs and memory summed over Ready, active nodes.
  absl::StatusOr<HostInfo> GetHostInfo() override;
  absl::Status Ping() override;
  // The engine's images (for a Swarm: the manager's), one GET /images/json.
  absl::StatusOr<std::vector<std::string>> ListImages() override;
  // Delivers nothing: the manager emits no events for task state changes,
  // so the reconciler's tick is the only trigger.
  std::unique_ptr<EventSubscription> SubscribeEvents(
      std::function<void(const RuntimeEvent&)> callback) override;
  CallCounters Counters() const override;
  // The nodes, each with this instance's stray tasks there as of the last
  // List() (NodeInfo::stray_*). List() logs each stray task once and asks
  // Swarm to end it (its service's update, as Stop does); the task of a
  // service already removed cannot be ended through the manager: the log
  // line names the node and container to stop there.
  absl::StatusOr<std::vector<NodeInfo>> ListNodes() override;

  bool ImageAllowed(absl::string_view image) const;
  const SwarmRuntimeOptions& options() const { return options_; }
  // The service options BuildServiceSpec gets (exposed for tests).
  SwarmServiceOptions ServiceOptions() const;

 private:
  struct Tombstone {
    ContainerObservation observation;
    std::string logs;
  };

  SwarmRuntime(SwarmRuntimeOptions options, std::unique_ptr<EngineClient> engine);

  // GET that must answer 2xx.
  absl::StatusOr<std::string> Get(const std::string& endpoint,
                                  const std::string& path,
                                  absl::string_view context);
  absl::Status ValidateSpec(const ContainerSpec& spec) const;
  // This instance's services of `job_id` (every attempt), newest attempt last.
  absl::StatusOr<std::vector<SwarmService>> JobServices(absl::string_view job_id);
  absl::StatusOr<std::vector<SwarmTask>> ServiceTasks(const std::string& service_id);
  // Observation of the newest task of `service` (kCreated without a task).
  absl::StatusOr<ContainerObservation> ObserveService(const SwarmService& service);
  absl::StatusOr<std::string> ServiceLogs(const std::string& service_id,
                                          size_t max_bytes);
  bool TombstoneOf(absl::string_view job_id, Tombstone* out) const;
  // Asks Swarm to end the service's task (StopJobServiceSpec) unless asked
  // already. Returns without waiting.
  absl::Status AskTaskEnd(const SwarmService& service);
  // Whether the service's newest task has not ended and is not placed yet or
  // placed on a Ready node.
  absl::StatusOr<bool> RunsOnReadyNode(const SwarmService& service);
  NodeLossOptions LossOptions() const;
  // Remembers the stray tasks of a list (per node, for ListNodes), logs
  // those not seen before, and returns the services to ask to end them.
  std::vector<SwarmService> NoteStrays(const std::vector<SwarmTask>& strays,
                                       const std::vector<SwarmService>& services)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Updates losses_ from a node list and logs nodes lost, back or removed.
  void ReportNodeLosses(const std::vector<NodeInfo>& nodes, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const SwarmRuntimeOptions options_;
  // Calls, retries, backoff and counters.
  const std::unique_ptr<EngineClient> engine_;
  Clock* const clock_;
  const std::string prefix_;  // SwarmServicePrefix(instance)

  mutable absl::Mutex mu_;
  // Services seen by the last List, by (job id, 0-based attempt from their
  // labels): Start adopts them without a call.
  std::map<std::pair<std::string, int>, std::string> listed_services_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Tombstone> tombstones_ ABSL_GUARDED_BY(mu_);
  NodeLossTracker losses_ ABSL_GUARDED_BY(mu_);
  // Stray tasks of the last List (StrayTasks), by task id, each with what
  // Berth does about it.
  struct NotedStray {
    SwarmTask task;
    std::string note;
  };
  std::map<std::string, NotedStray> strays_ ABSL_GUARDED_BY(mu_);
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_SWARM_SWARM_RUNTIME_H_
