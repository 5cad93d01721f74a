// BerthdConfig: everything berthd is configured with, validated in one place.
// berthd_main.cc fills it from flags (and --flagfile, the optional config
// file); tests fill it directly.
#ifndef BERTH_SERVER_DAEMON_CONFIG_H_
#define BERTH_SERVER_DAEMON_CONFIG_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "berth/v1/budgets.pb.h"
#include "executor/runtime/docker/docker_http.h"

namespace berth {

// Bounds of BerthdConfig::max_snapshot_jobs (positions in a snapshot are
// 32-bit) and max_snapshot_message_bytes.
inline constexpr uint64_t kMaxSnapshotJobsLimit = 100'000'000;
inline constexpr int64_t kMinSnapshotMessageBytes = int64_t{1} << 10;
inline constexpr int64_t kMaxSnapshotMessageBytesLimit = int64_t{512} << 20;

// The engine's log rotation derived from a log cap: files of the cap (whole
// MiB, at least 1) and 5 of them, so that the 4 full ones hold 4 x cap of log
// entries: both streams of a capped attempt (2 x cap of output) at Docker's
// "local" driver's ~32 bytes per line beside the text, for lines of 32 bytes
// or more. A file of a whole cap also keeps Docker's first rotation (where
// its 20.10 follow can skip what it had not read) past a follow's head.
struct EngineLogRetention {
  std::string max_size;
  int max_files = 0;
};
EngineLogRetention EngineLogRetentionForCap(int64_t cap_bytes);

struct BerthdConfig {
  // gRPC address, "host:port" ("127.0.0.1:0" picks a free port).
  std::string listen = "127.0.0.1:7070";
  // Plaintext gRPC on a non-loopback address is refused unless this is set.
  bool allow_plaintext_remote = false;
  // TLS: server certificate and key (PEM). With tls_client_ca, clients must
  // present a certificate signed by it (mTLS).
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;
  // Bearer tokens with roles (server/api/auth.h). Required.
  std::string token_file;

  // RocksDB state directory (created if missing).
  std::string data_dir = "berth-data";
  // Complete job logs (executor/logs/log_archive.h), one directory per job
  // under <data_dir>/logs, removed with the job's record. Most bytes kept per
  // stream of one attempt (head + tail around a marker line); 2 or more.
  int64_t log_cap_bytes = int64_t{64} << 20;
  // --runtime=docker: follow each running job's log while it runs
  // (executor/logs/live_log_capture.h), so Docker's rotation (below) cannot
  // lose its head before Berth reads it. false: read when the job ends.
  // Swarm jobs are read when they end either way.
  bool follow_logs = true;
  // Readers (role "reader") may read job logs (ReadJobLog); operators always
  // may. Logs are research data: off by default.
  bool readers_read_logs = false;

  // Docker Engine endpoint and this instance's container label.
  DockerEndpoint docker;
  // Which Runtime runs the jobs: "docker" (one engine, `docker`) or "swarm"
  // (a Docker Swarm manager at `swarm_manager`, one service per job).
  std::string runtime = "docker";
  // The swarm manager's Engine API (unix:// or https:// with the docker TLS
  // files); used when runtime is "swarm".
  DockerEndpoint swarm_manager;
  // Swarm: a node down this long counts as dead and its jobs are requeued
  // (SwarmRuntimeOptions::node_lost_grace). 0 = never on time alone.
  absl::Duration swarm_node_lost_grace = absl::ZeroDuration();
  std::string instance = "berth";
  // Image glob patterns jobs may use. Empty: every job is rejected.
  std::vector<std::string> allowed_images;
  // Host directory with one directory per workspace, mounted at /workspace.
  // Empty: jobs get no workspace mount.
  std::string workspaces_root;
  // The group the researchers share, as a gid (berthd --workspace_group,
  // a name or a number; ParseWorkspaceGroup); -1: none. Every job runs with
  // it as its one supplementary group and its workspace directory is made
  // <container uid>:<gid> mode 02770, so what jobs write is the group's and
  // group-readable (EngineRuntimeOptions::workspace_gid). Needs
  // workspaces_root; never 0.
  int64_t workspace_gid = -1;
  // Write <workspace>/metadata/<job id>.log (the final attempt's complete
  // log) and .json (the run's record) when a job ends
  // (executor/logs/run_metadata.h). Needs workspaces_root.
  bool write_run_metadata = false;
  // Pool -> operator-created Docker network its jobs join.
  std::map<std::string, std::string> pool_networks;
  std::string container_user = "65534:65534";
  int64_t pids_limit = 256;
  // Docker's log retention per container (EngineRuntimeOptions log_max_size
  // / log_max_files; Docker: the "local" driver, Swarm: json-file). It bounds
  // what Docker still holds when a job ends, which berthd reads whole then.
  // Empty / 0 (default): from log_cap_bytes (EngineLogRetention), so that
  // Docker holds at least a full cap of both streams of lines of 32 bytes or
  // more.
  std::string docker_log_max_size;
  int docker_log_max_files = 0;

  // Default budgets, used until an operator sets them (SetBudgets persists
  // and wins across restarts). memory_bytes / cpu_millis of 0 mean "auto":
  // the Docker host's MemTotal / NCPU minus the reserve below.
  int64_t memory_bytes = 0;
  int64_t cpu_millis = 0;
  int32_t max_workers = 32;
  std::map<std::string, int32_t> pool_max_workers;
  int32_t workspace_max_workers = 0;
  // Kept back from "auto" budgets for Docker, berthd and the OS.
  int64_t reserve_memory_bytes = int64_t{2} << 30;
  int64_t reserve_cpu_millis = 500;

  // Snapshot streams (SyncSnapshot, DryRun). A header announcing more jobs
  // than max_snapshot_jobs is refused (RESOURCE_EXHAUSTED) before any batch
  // is read; a message (header, batch or end) over
  // max_snapshot_message_bytes is refused (INVALID_ARGUMENT) as soon as it
  // arrives. Memory for one stream is bounded by about 1.5 KiB per job
  // announced. Defaults: 2,000,000 jobs, 16 MiB (a batch of 1,000 typical
  // jobs is ~75 KiB). Range: jobs 1..100,000,000; bytes 1 KiB..512 MiB.
  uint64_t max_snapshot_jobs = 2'000'000;
  int64_t max_snapshot_message_bytes = int64_t{16} << 20;

  // Prometheus metrics, "host:port"; empty = off.
  std::string metrics_listen = "127.0.0.1:9464";

  // Reconciler.
  absl::Duration tick = absl::Seconds(2);
  absl::Duration default_duration = absl::Hours(1);
  absl::Duration stop_grace = absl::Seconds(10);
  // A waiting job's effective priority rises by one per interval waited, up
  // to the top priority (the highest queued, or remembered for
  // planner::Policy::aging_top_memory, 24 h, after its last job), ranking
  // after that level's own jobs and among the aged oldest first
  // (planner::Policy::aging_interval; docs/DESIGN.md "Aging"). Zero turns
  // aging off.
  absl::Duration aging_interval = absl::Hours(2);
  // How long the top priority is remembered after its last job
  // (planner::Policy::aging_top_memory). Zero: not remembered.
  absl::Duration aging_top_memory = absl::Hours(24);
  // The store's retention (RetentionOptions, executor/store/store.h): at
  // most retain_terminal_jobs finished records, each for retain_terminal_for
  // after it finished; at most retain_events events, none older than
  // retain_events_for. Applied at each compaction (every 10 minutes).
  int64_t retain_terminal_jobs = 1'000'000;
  absl::Duration retain_terminal_for = absl::Hours(24 * 7);
  int64_t retain_events = 1'000'000;
  absl::Duration retain_events_for = absl::Hours(24 * 7);
  int start_parallelism = 4;
  double max_cancel_fraction = 0.5;
  // The mass-cancel guard only refuses a snapshot cancelling more than this
  // many running jobs (SnapshotOptions::mass_cancel_min_jobs).
  int mass_cancel_min_jobs = 1;
  std::string ranking = "drf";
  // Pools whose jobs arriving without a memory estimate get the one their
  // (workspace, action)'s usage history suggests. Empty: off.
  std::vector<std::string> fill_memory_pools;
  // Where the Backup RPC writes its copies; empty: backups off.
  std::string backup_root;
  // Pools whose OOM-killed jobs are requeued once with a raised memory
  // reservation instead of failing (ReconcilerOptions::
  // requeue_oom_pools). Empty: off (snapshots may still ask for it).
  std::vector<std::string> requeue_oom_pools;
};

// Checks a config: INVALID_ARGUMENT naming the setting for a bad value;
// FAILED_PRECONDITION for plaintext on a non-loopback address without
// allow_plaintext_remote, or a TLS key without a certificate.
[[nodiscard]] absl::Status ValidateConfig(const BerthdConfig& config);

// The gid of `text`, a group name (looked up in the host's group database)
// or a number. INVALID_ARGUMENT naming --workspace_group for an unknown name,
// a bad number, or group 0 (root).
[[nodiscard]] absl::StatusOr<int64_t> ParseWorkspaceGroup(absl::string_view text);

// The default budgets: explicit values, else the host's minus the reserve
// (once per host: `hosts` engines -- a swarm's nodes -- each keep theirs).
// INVALID_ARGUMENT if the result is not positive.
[[nodiscard]] absl::StatusOr<v1::Budgets> DefaultBudgets(
    const BerthdConfig& config, int host_cpus, int64_t host_memory_bytes, int hosts = 1);

}  // namespace berth

#endif  // BERTH_SERVER_DAEMON_CONFIG_H_
