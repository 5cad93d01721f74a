// EngineClient: the Docker Engine API call machinery shared by DockerRuntime
// and SwarmRuntime (both speak Engine API 1.41 through DockerHttp).
//
// It owns the DockerHttp, the retry/backoff policy and the per-endpoint call
// counters. Contract:
//  - Call() makes one exchange, and when `idempotent` up to max_attempts:
//    it retries after transport errors and 5xx answers that
//    IsRetryableDockerError accepts, sleeping Backoff(n) on the clock before
//    retry n. It returns the response for any HTTP status below 500 (the
//    caller maps 4xx with DockerErrorToStatus); transport errors and 5xx
//    answers of the last attempt become a status whose message starts with
//    `context`.
//  - Every attempt is counted under `endpoint`: calls + 1, and errors + 1
//    when the attempt failed (transport error or HTTP status >= 400).
//  - LogsTail() streams a log tail (always idempotent, counted as "logs")
//    through DockerLogDemuxer, keeping at most about 2 * max_bytes in memory.
//  - Backoff(n), n >= 1: min(max, initial * 2^(n-1)) times a random factor in
//    [1 - jitter, 1 + jitter].
//
// Thread-safe: any number of threads may call any method at once (the
// counters and the random source are guarded by a mutex; DockerHttp is
// thread-safe).
#ifndef BERTH_EXECUTOR_RUNTIME_DOCKER_ENGINE_CLIENT_H_
#define BERTH_EXECUTOR_RUNTIME_DOCKER_ENGINE_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "executor/runtime/docker/docker_http.h"
#include "executor/runtime/runtime.h"
#include "planner/base/clock.h"

namespace berth {

// The options DockerRuntimeOptions and SwarmRuntimeOptions share (each
// derives from it and adds its own).
struct EngineRuntimeOptions {
  // Where the engine is: unix socket (default /var/run/docker.sock) or TCP
  // with TLS client certificates; see DockerEndpoint. For Swarm: a manager.
  DockerEndpoint endpoint;
  // This Berth instance's label value (berth.instance). REQUIRED, 1-128
  // chars of [A-Za-z0-9._-]. Instances (and test runs) with different values
  // never see each other's containers or services.
  std::string instance;
  // Glob patterns (fnmatch, e.g. "registry.local/research/*") an image must
  // match. Empty: every image is refused (PERMISSION_DENIED) -- secure default.
  std::vector<std::string> image_allow_list;
  // "uid:gid" the job runs as. Default nobody:nogroup. Never root.
  std::string user = "65534:65534";
  // Maximum processes/threads per job (fork bombs stop here).
  int64_t pids_limit = 256;
  // The engine's log driver for job containers and its rotation: size of
  // one file and number of files. What the engine still holds when a job
  // ends is bounded by their product. "local" (Docker's compact driver:
  // ~32 bytes per line beside the text, against json-file's ~75, and its
  // rotated files gzipped) or "json-file". Swarm services always use
  // json-file (swarm_json.h).
  std::string log_driver = "local";
  std::string log_max_size = "10m";
  int log_max_files = 3;
  // Read-only root filesystem with a tmpfs at /tmp (size: runtime-specific
  // option). Jobs write to /workspace (when mounted) or /tmp.
  bool readonly_rootfs = true;
  // Host directory holding one directory per workspace (for Swarm: on every
  // node, a shared filesystem); spec.mount_workspace mounts
  // <workspaces_root>/<workspace> at /workspace. Empty: mounting is refused
  // (FAILED_PRECONDITION).
  std::string workspaces_root;
  // The group the researchers share (berthd --workspace_group), as a gid;
  // -1 (default): none. With it every job runs with this gid as its one
  // supplementary group (Docker HostConfig.GroupAdd, Swarm
  // ContainerSpec.Groups; user and primary group unchanged) and its
  // workspace directory is made <user's uid>:<gid>, mode 02770
  // (workspace_dir.h), so what the job writes there is the group's and
  // group-readable. Never 0 (INVALID_ARGUMENT).
  int64_t workspace_gid = -1;
  // Lines requested from the engine by LogsTail before trimming to max_bytes.
  int logs_tail_lines = 10000;
  // A whole-log read without follow (ReadLogs) fails when the engine sends
  // nothing for this long. It bounds a stall, not the read: a large log
  // read slowly (a Swarm manager relays a node's log at ~0.7 MB/s) is
  // read to its end however long that takes.
  absl::Duration logs_read_timeout = absl::Minutes(2);
  // Limit for each engine call (Docker's Stop adds its grace period on top).
  absl::Duration call_timeout = absl::Seconds(10);
  // Attempts for idempotent calls (1 = no retry).
  int max_attempts = 4;
  // Backoff before retry n (n >= 1): min(max, initial * 2^(n-1)), then
  // multiplied by a random factor in [1 - jitter, 1 + jitter].
  absl::Duration backoff_initial = absl::Milliseconds(100);
  absl::Duration backoff_max = absl::Seconds(2);
  double backoff_jitter = 0.2;
  // Time source for backoff sleeps. Not owned; must outlive the runtime.
  Clock* clock = Clock::Real();
};

// Validates the shared options (INVALID_ARGUMENT, messages prefixed with
// `runtime_name`, e.g. "docker runtime") and rewrites `user` to its
// canonical form. `more_positive_ok` / `more_positive_names` fold the
// caller's own must-be-positive checks into the same message, e.g.
// (o.tmp_size_bytes > 0, "tmp_size_bytes").
absl::Status ValidateEngineRuntimeOptions(EngineRuntimeOptions& options,
                                          absl::string_view runtime_name,
                                          bool more_positive_ok = true,
                                          absl::string_view more_positive_names = "");

class EngineClient {
 public:
  // Creates the DockerHttp for options.endpoint (INVALID_ARGUMENT on a bad
  // URL). Makes no engine call. REQUIRES: options passed
  // ValidateEngineRuntimeOptions.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<EngineClient>> Create(
      const EngineRuntimeOptions& options);

  // See the contract above. Each attempt may take call_timeout.
  absl::StatusOr<HttpResponse> Call(const std::string& endpoint, HttpRequest req,
                                    bool idempotent, absl::string_view context);
  // The same with a per-attempt limit of `timeout` instead.
  absl::StatusOr<HttpResponse> Call(const std::string& endpoint, HttpRequest req,
                                    bool idempotent, absl::string_view context,
                                    absl::Duration timeout);

  // GET <path>?stdout=1&stderr=1&tail=<logs_tail_lines> (path e.g.
  // "/containers/<id>/logs"): the last max_bytes of the demultiplexed output.
  absl::StatusOr<std::string> LogsTail(const std::string& path, size_t max_bytes,
                                       absl::string_view context);

  // GET <path>?stdout=1&stderr=1[&follow=1][&timestamps=1] from the first byte, one
  // attempt, demultiplexed into `sink` (see Runtime::ReadLogs). `timeout`:
  // the longest the engine may send nothing (zero: no limit, for follow);
  // the read as a whole has no limit.
  absl::Status StreamLogs(const std::string& path, const LogReadOptions& options,
                          absl::Duration timeout, const LogSink& sink,
                          absl::string_view context);

  // The wait before retry `retry` (>= 1) with the options' backoff, or with
  // another initial/max (e.g. an events stream's reconnects).
  absl::Duration Backoff(int retry);
  absl::Duration Backoff(int retry, absl::Duration initial, absl::Duration max);

  // Counts one attempt (for exchanges made on http() directly).
  void Count(const std::string& endpoint, bool error);
  // A snapshot of the counters since construction.
  CallCounters Counters() const;

  // For streams that do not fit Call (events).
  const DockerHttp& http() const { return *http_; }
  Clock* clock() const { return clock_; }

 private:
  EngineClient(const EngineRuntimeOptions& options, std::unique_ptr<DockerHttp> http);

  // Constant after construction.
  const std::unique_ptr<DockerHttp> http_;
  Clock* const clock_;
  const absl::Duration call_timeout_;
  const int max_attempts_;
  const absl::Duration backoff_initial_;
  const absl::Duration backoff_max_;
  const double backoff_jitter_;
  const int logs_tail_lines_;

  mutable absl::Mutex mu_;
  CallCounters counters_ ABSL_GUARDED_BY(mu_);
  absl::BitGen rng_ ABSL_GUARDED_BY(mu_);
};

// Splits Docker's multiplexed log stream (8-byte headers: stream type, 3
// zero bytes, big-endian payload length) into payload bytes. Feed chunks in
// order; partial frames are kept until the rest arrives. Not thread-safe.
class DockerLogDemuxer {
 public:
  // Appends the payload contained in `chunk` to *out.
  void Feed(absl::string_view chunk, std::string* out);
  // Hands each piece of payload in `chunk` to `sink` with its frame's stream
  // byte (1 stdout, 2 stderr). Returns false as soon as `sink` does.
  bool Feed(absl::string_view chunk,
            const std::function<bool(int stream, absl::string_view)>& sink);
  // Like Feed, but hands over whole frames (each one of Docker's log
  // messages), holding a frame's pieces until its last byte arrived.
  bool FeedFrames(absl::string_view chunk,
                  const std::function<bool(int stream, absl::string_view)>& sink);

 private:
  std::string frame_;       // FeedFrames: the current frame so far
  std::string header_;      // bytes of an incomplete header
  uint32_t remaining_ = 0;  // payload bytes left in the current frame
  int stream_ = 1;          // stream byte of the current frame
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_DOCKER_ENGINE_CLIENT_H_
