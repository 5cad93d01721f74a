// DockerRuntime: the Runtime over the Docker Engine API (>= 1.41).
//
// Containers are named ContainerName(instance, job id) = "berth-<8 hex of
// the instance>-<job id>" (executor/runtime/container_names.h, shared with
// the Swarm runtime), so two instances on one engine can run the same job
// id. Containers of an older berthd, named "berth-<job id>", are adopted:
// List() notes which of this instance's jobs carry the legacy name (from the
// list's Names, no extra call) and Inspect/Stop/Remove/LogsTail use it for
// them; Start always creates the new name. They are labelled berth.job,
// berth.workspace, berth.action and berth.instance=<options.instance>; every
// read filters on berth.instance, and operations by job id refuse (NOT_FOUND)
// a same-named container of another instance. Hardening by default (see
// BuildCreateBody): no network, CapDrop ALL, no-new-privileges, non-root
// user, pids limit, memory limit with swap off, CPU quota, an init process,
// a read-only root with a tmpfs /tmp, rotated logs (log_driver). Images are
// checked against the allow-list before any engine call and never pulled.
//
// Engine calls go through EngineClient (engine_client.h, shared with the
// Swarm runtime). Every call has a timeout. Every call is retried with exponential backoff
// and jitter on UNAVAILABLE, DEADLINE_EXCEEDED and 5xx answers: reads, stop
// and remove are idempotent; create is made so by the fixed name (a retried
// create that already succeeded gets 409 and adopts); start is retried only
// while the container is still "created", so a job never runs twice.
//
// Thread-safe.
#ifndef BERTH_EXECUTOR_RUNTIME_DOCKER_DOCKER_RUNTIME_H_
#define BERTH_EXECUTOR_RUNTIME_DOCKER_DOCKER_RUNTIME_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "planner/base/clock.h"
#include "executor/runtime/docker/cgroup_usage.h"
#include "executor/runtime/docker/peak_cgroups.h"
#include "executor/runtime/docker/docker_http.h"
#include "executor/runtime/docker/engine_client.h"
#include "executor/runtime/runtime.h"

namespace berth {

// The shared fields (endpoint, instance, allow-list, user, limits, log
// rotation, call timeout, retries, backoff, clock) are EngineRuntimeOptions'.
struct DockerRuntimeOptions : EngineRuntimeOptions {
  // Size of the tmpfs at /tmp (with readonly_rootfs).
  std::string tmp_size = "64m";
  // Limit of Ping, which is tried once: health probes must learn within a
  // tick that the engine hangs (server/daemon/runtime_health.h).
  absl::Duration ping_timeout = absl::Seconds(1);
  // Reconnect backoff of the events stream (same formula, no attempt cap).
  absl::Duration events_backoff_initial = absl::Milliseconds(200);
  absl::Duration events_backoff_max = absl::Seconds(5);
  // Where SampleUsage reads the containers' cgroup files
  // (executor/runtime/docker/cgroup_usage.h). Used only when the endpoint is
  // a unix socket (the engine runs on this host); empty: usage is not
  // observed (SampleUsage answers UNIMPLEMENTED).
  std::string cgroup_root = "/sys/fs/cgroup";
  // With cgroup_root in use and the engine's cgroupfs driver: each job
  // container gets the parent cgroup "/<peak_cgroup_group>/<name>"
  // (peak_cgroups.h), whose mark ExitPeakMemory reads. Empty: not used.
  std::string peak_cgroup_group = "berth-peak";
};

class DockerRuntime final : public Runtime {
 public:
  // Validates the options (INVALID_ARGUMENT). Makes no engine call.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<DockerRuntime>> Create(
      DockerRuntimeOptions options);

  absl::StatusOr<StartResult> Start(const ContainerSpec& spec) override;
  absl::StatusOr<ContainerList> List() override;
  absl::StatusOr<ContainerObservation> Inspect(absl::string_view job_id) override;
  // The engine counts the grace in whole seconds: `grace` is rounded up.
  absl::Status Stop(absl::string_view job_id, absl::Duration grace) override;
  absl::StatusOr<std::string> LogsTail(absl::string_view job_id,
                                       size_t max_bytes) override;
  // GET /containers/{id}/logs from the first byte (with follow: until the
  // container stops). Without follow the read fails once the engine sends
  // nothing for options.logs_read_timeout.
  absl::Status ReadLogs(absl::string_view job_id, const LogReadOptions& options,
                        const LogSink& sink) override;
  absl::Status Remove(absl::string_view job_id) override;
  absl::StatusOr<HostInfo> GetHostInfo() override;
  absl::Status Ping() override;
  // The engine's images (for a Swarm: the manager's), one GET /images/json.
  absl::StatusOr<std::vector<std::string>> ListImages() override;
  std::unique_ptr<EventSubscription> SubscribeEvents(
      std::function<void(const RuntimeEvent&)> callback) override;
  CallCounters Counters() const override;
  // Reads the running containers' cgroup files (no engine call): see
  // cgroup_root. UNIMPLEMENTED for a remote engine or an empty cgroup_root.
  absl::StatusOr<UsageSamples> SampleUsage(
      const ContainerList& containers) override;
  // The parent cgroup's mark (peak_cgroup_group); NOT_FOUND without it.
  absl::StatusOr<int64_t> ExitPeakMemory(absl::string_view job_id) override;

  // The JSON body of POST /containers/create for `spec` (exposed for tests),
  // with HostConfig.CgroupParent when `cgroup_parent` is not empty.
  // REQUIRES: spec passed validation.
  std::string BuildCreateBody(const ContainerSpec& spec,
                              const std::string& cgroup_parent = "") const;

  const DockerRuntimeOptions& options() const { return options_; }

  // True if `image` matches the allow-list: the same check Start makes
  // before any engine call, for validating job specs when they arrive.
  bool ImageAllowed(absl::string_view image) const {
    return CheckImageAllowed(std::string(image)).ok();
  }

 private:
  class Subscription;

  DockerRuntime(DockerRuntimeOptions options, std::unique_ptr<EngineClient> engine);

  // Inspects by name and checks the instance label; NOT_FOUND otherwise.
  absl::StatusOr<ContainerObservation> InspectOwned(absl::string_view job_id,
                                                    std::string* instance_out);
  absl::Status ValidateSpec(const ContainerSpec& spec) const;
  absl::Status CheckImageAllowed(const std::string& image) const;
  // Starts container `id` of job `job`; retries only while it is "created".
  absl::Status StartCreated(const std::string& job, const std::string& id);
  // The container name of `job_id`: the legacy one if the last List() saw
  // the job under it, else ContainerName(instance, job id).
  std::string NameOf(absl::string_view job_id) const;

  // The peak groups, if the engine uses them (asked of /info once, at the
  // first create); nullptr otherwise.
  const PeakCgroups* PeakGroups();

  // Constant after construction.
  const DockerRuntimeOptions options_;
  // Calls, retries, backoff and counters.
  const std::unique_ptr<EngineClient> engine_;
  Clock* const clock_;
  // Set when usage is observed (a local engine and a cgroup root).
  const std::unique_ptr<CgroupUsage> cgroups_;
  // Set when cgroups_ is and peak_cgroup_group is not empty.
  const std::unique_ptr<PeakCgroups> peaks_;
  // 0: the engine's cgroup driver not asked yet; 1: cgroupfs (peaks_ used);
  // 2: another (not used).
  std::atomic<int> peaks_state_{0};

  mutable absl::Mutex mu_;
  // Jobs whose container is named LegacyContainerName (as of the last List).
  std::set<std::string> legacy_jobs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_DOCKER_DOCKER_RUNTIME_H_
