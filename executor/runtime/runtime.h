// Runtime: the executor's only view of a container engine.
//
// A Runtime starts one container per job, observes this Berth instance's
// containers in bulk, inspects, stops, removes and reads their logs. The
// Docker implementation is executor/docker_runtime.h; a testonly in-memory
// fake is executor/fake_runtime.h. No Docker, curl or JSON type appears here.
//
// Observation protocol (what the reconciler does each pass):
//   1. List()                      ONE engine call: job id -> summary
//   2. DiffContainerLists(old,new) which jobs changed since the last pass
//   3. Inspect(job) for the changed ones only (exit code, OOM, times)
//   4. ClassifyExit(observation or nullopt, recorded intent) for finished ones
// Events (SubscribeEvents) make a pass happen sooner, and a "die" event lets
// the reconciler finalise that one container (Inspect of exactly it) before
// the bulk list has caught up; the bulk list stays the source of truth for
// everything else, and the periodic pass is the safety net for lost events.
//
// Errors: the engine being down or slow yields UNAVAILABLE or
// DEADLINE_EXCEEDED from any method; such errors never say anything about the
// job itself and must never be classified as a job failure.
//
// Thread-safety: every Runtime implementation is thread-safe.
#ifndef BERTH_EXECUTOR_RUNTIME_RUNTIME_H_
#define BERTH_EXECUTOR_RUNTIME_RUNTIME_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "executor/runtime/runtime_types.h"

namespace berth {

class EventSubscription {
 public:
  virtual ~EventSubscription() = default;
};

class Runtime {
 public:
  virtual ~Runtime() = default;

  // Creates and starts the job's container. Idempotent: if the container
  // already exists (name conflict) it is adopted -- started if it was only
  // created, never created a second time.
  // Errors: INVALID_ARGUMENT (bad spec); PERMISSION_DENIED (image not in the
  // allow-list; no engine call made); NOT_FOUND (image not present locally --
  // never pulled -- the message names the image); ALREADY_EXISTS (the name is
  // taken by a container of another Berth instance); UNAVAILABLE /
  // DEADLINE_EXCEEDED (engine down/slow; retry later); INTERNAL.
  [[nodiscard]] virtual absl::StatusOr<StartResult> Start(
      const ContainerSpec& spec) = 0;

  // Lists every container of this instance, running or not, in one engine
  // call. Errors: UNAVAILABLE / DEADLINE_EXCEEDED / INTERNAL.
  [[nodiscard]] virtual absl::StatusOr<ContainerList> List() = 0;

  // The full state of the job's container. NOT_FOUND if it does not exist.
  [[nodiscard]] virtual absl::StatusOr<ContainerObservation> Inspect(
      absl::string_view job_id) = 0;

  // Sends SIGTERM, waits up to `grace`, then SIGKILL; returns when the
  // container has stopped. OK if it had already stopped. NOT_FOUND if it does
  // not exist. The caller records its StopIntent before calling.
  [[nodiscard]] virtual absl::Status Stop(absl::string_view job_id,
                                          absl::Duration grace) = 0;

  // The last (at most) max_bytes bytes of the container's stdout and stderr
  // in the order the engine logged them (it copies the two streams
  // separately: their relative order is approximate), without the engine's
  // stream framing.
  // NOT_FOUND if the container does not exist.
  [[nodiscard]] virtual absl::StatusOr<std::string> LogsTail(
      absl::string_view job_id, size_t max_bytes) = 0;

  // The job's container's whole log as the engine keeps it (from its first
  // byte; the engine's own rotation bounds what it keeps), stdout and stderr
  // apart, handed to `sink` chunk by chunk in the order the engine logged it.
  // One engine call, never retried (a retry would hand the sink the same
  // bytes twice): on an error the caller starts over. NOT_FOUND if the
  // container does not exist; UNIMPLEMENTED if the runtime cannot read whole
  // logs (the default); UNAVAILABLE / DEADLINE_EXCEEDED (engine trouble).
  [[nodiscard]] virtual absl::Status ReadLogs(absl::string_view job_id,
                                              const LogReadOptions& options,
                                              const LogSink& sink) {
    (void)job_id;
    (void)options;
    (void)sink;
    return absl::UnimplementedError("this runtime cannot read whole logs");
  }

  // Removes the job's container, killing it first if it still runs. Read the
  // logs before. NOT_FOUND if it does not exist.
  [[nodiscard]] virtual absl::Status Remove(absl::string_view job_id) = 0;

  // The engine host's CPUs and memory.
  [[nodiscard]] virtual absl::StatusOr<HostInfo> GetHostInfo() = 0;

  // OK if the engine answers. A health probe: one attempt with a short
  // limit (no retries), so that an engine that hangs shows at once.
  [[nodiscard]] virtual absl::Status Ping() = 0;

  // Delivers events about this instance's containers to `callback`, from a
  // background thread, one at a time. After a connection error the
  // subscription reconnects with backoff and then delivers a synthetic event
  // {job_id: "", action: "resync"}: events may have been missed, so the
  // caller should do a bulk List. Never fails; the callback must not block
  // for long nor destroy the subscription. REQUIRES: the subscription is
  // destroyed before the Runtime.
  [[nodiscard]] virtual std::unique_ptr<EventSubscription> SubscribeEvents(
      std::function<void(const RuntimeEvent&)> callback) = 0;

  // A snapshot of the per-endpoint counters since construction.
  virtual CallCounters Counters() const = 0;

  // Samples the resource use of the running containers of `containers` (the
  // last List()) in one sweep that makes no engine call (the local engine's
  // cgroup files). A container whose use cannot be read (it exited
  // meanwhile) is left out. Errors: UNIMPLEMENTED when this runtime cannot
  // observe use (a remote engine, Swarm: the default).
  [[nodiscard]] virtual absl::StatusOr<UsageSamples> SampleUsage(
      const ContainerList& containers) {
    (void)containers;
    return absl::UnimplementedError("this runtime does not observe usage");
  }

  // The kernel's memory high-water mark, in bytes, of the job's container
  // over its whole life (however short), read after it finished and before
  // it is removed. NOT_FOUND when this container's mark is not kept (started
  // without it, or already removed); UNIMPLEMENTED when this runtime keeps
  // none (the default: a remote engine, Swarm).
  [[nodiscard]] virtual absl::StatusOr<int64_t> ExitPeakMemory(absl::string_view job_id) {
    (void)job_id;
    return absl::UnimplementedError("this runtime keeps no exit memory peak");
  }

  // The images the engine holds (for a Swarm: its manager's), in one engine
  // call: every reference that names one, as the engine lists it --
  // "repo:tag" (RepoTags, e.g. "berth-test/busybox:1", Docker Hub's
  // "docker.io/library/" left out), "repo@sha256:<hex>" (RepoDigests) and the
  // image id "sha256:<hex>". Unordered, may repeat. Errors: UNIMPLEMENTED
  // when this runtime cannot list images (the default); UNAVAILABLE /
  // DEADLINE_EXCEEDED / INTERNAL.
  [[nodiscard]] virtual absl::StatusOr<std::vector<std::string>> ListImages() {
    return absl::UnimplementedError("this runtime does not list images");
  }

  // Multi-node engines: every node, in one engine call, sorted by id.
  // Errors: UNIMPLEMENTED for single-host runtimes (the default);
  // UNAVAILABLE / DEADLINE_EXCEEDED / INTERNAL.
  [[nodiscard]] virtual absl::StatusOr<std::vector<NodeInfo>> ListNodes() {
    return absl::UnimplementedError("this runtime has no nodes");
  }
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_RUNTIME_H_
