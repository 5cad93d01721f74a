// berthd: the Berth executor service. See README.md and server/daemon/config.h.
//
//   berthd --token_file=tokens --data_dir=/var/lib/berth
//          --allowed_images='registry.local/research/*' --memory=auto
//
// Every flag can also come from a file: --flagfile=/etc/berth/berthd.flags
// (one --flag=value per line): the optional config file.
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "server/command_line.h"
#include "server/daemon/berthd.h"
#include "planner/base/build_info.h"
#include "planner/base/log.h"
#include "planner/base/units.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:7070", "gRPC address host:port");
ABSL_FLAG(bool, allow_plaintext_remote, false,
          "Allow plaintext gRPC on a non-loopback address (not recommended)");
ABSL_FLAG(std::string, tls_cert, "", "Server TLS certificate (PEM)");
ABSL_FLAG(std::string, tls_key, "", "Server TLS key (PEM)");
ABSL_FLAG(std::string, tls_client_ca, "", "CA for client certificates (enables mTLS)");
ABSL_FLAG(std::string, token_file, "", "Bearer tokens: lines '<role> <name> <token>'");
ABSL_FLAG(std::string, data_dir, "berth-data", "RocksDB state directory");
ABSL_FLAG(std::string, docker, "unix:///var/run/docker.sock",
          "Docker endpoint: unix:///path or https://host:port");
ABSL_FLAG(std::string, docker_tls_cert, "", "Client certificate for https Docker");
ABSL_FLAG(std::string, docker_tls_key, "", "Client key for https Docker");
ABSL_FLAG(std::string, docker_tls_ca, "", "CA of the Docker engine's certificate");
ABSL_FLAG(std::string, runtime, "docker",
          "docker (one engine at --docker) or swarm (a Swarm manager at --swarm_manager)");
ABSL_FLAG(std::string, swarm_manager, "",
          "Swarm manager Engine API: unix:///path/docker.sock or https://host:2376 "
          "(TLS files: --docker_tls_*)");
ABSL_FLAG(std::string, swarm_node_lost_grace, "0s",
          "Swarm: requeue the jobs of a node down this long even though their attempts "
          "may still run there (like Nomad's max_client_disconnect); 0s = never: wait "
          "until the node is back and its attempts ended, or it is removed (docker node rm)");
ABSL_FLAG(std::string, instance, "berth", "Container label berth.instance of this berthd");
ABSL_FLAG(std::string, allowed_images, "",
          "Comma list of image glob patterns jobs may use (empty: none)");
ABSL_FLAG(std::string, workspaces_root, "",
          "Host dir with one dir per workspace, mounted at /workspace");
ABSL_FLAG(std::string, workspace_group, "",
          "Group (name or gid) the researchers share: jobs run with it as a supplementary "
          "group, workspace dirs are setgid to it, job outputs group-readable (needs "
          "--workspaces_root)");
ABSL_FLAG(bool, write_run_metadata, false,
          "When a job ends, write <workspace>/metadata/<job>.log and <job>.json (needs "
          "--workspaces_root)");
ABSL_FLAG(std::string, pool_network, "", "Comma list pool=docker-network");
ABSL_FLAG(std::string, container_user, "65534:65534", "uid:gid jobs run as (never root)");
ABSL_FLAG(int64_t, pids_limit, 256, "Max processes per job container");
ABSL_FLAG(std::string, docker_log_max_size, "",
          "Docker log rotation: size of one file per container (default: --log_cap, "
          "in MiB)");
ABSL_FLAG(int32_t, docker_log_max_files, 0,
          "Docker log rotation: files per container (default 5: Docker then holds 4 x "
          "--log_cap of log entries, read whole when the job ends)");
ABSL_FLAG(std::string, memory, "auto", "Memory budget (e.g. 256Gi) or auto");
ABSL_FLAG(std::string, cpus, "auto", "CPU budget in cores (e.g. 32, 7.5) or auto");
ABSL_FLAG(int32_t, max_workers, 32, "Max concurrently running jobs");
ABSL_FLAG(std::string, pool_max, "", "Comma list pool=max_workers (e.g. database=4)");
ABSL_FLAG(int32_t, workspace_max, 0, "Max running jobs per workspace (0: no cap)");
ABSL_FLAG(std::string, log_cap, "64Mi",
          "Most bytes of a job's log kept per stream and attempt under "
          "<data_dir>/logs (head and tail, with a line saying how much was cut)");
ABSL_FLAG(bool, follow_logs, true,
          "--runtime=docker: follow each running job's log while it runs (Docker's "
          "rotation then never loses its head; a log Docker still holds whole is read "
          "whole at the end); false: read it when the job ends");
ABSL_FLAG(bool, readers_read_logs, false,
          "Let tokens of role reader read job logs (operators always may)");
ABSL_FLAG(std::string, reserve_memory, "2Gi", "Kept back from an auto memory budget");
ABSL_FLAG(std::string, reserve_cpus, "0.5", "Kept back from an auto CPU budget");
ABSL_FLAG(std::string, metrics_listen, "127.0.0.1:9464", "HTTP host:port for Prometheus /metrics and the /ui dashboard; empty: off");
ABSL_FLAG(std::string, tick, "2s", "Reconcile at least this often");
ABSL_FLAG(std::string, default_duration, "1h", "Expected duration of jobs without one");
ABSL_FLAG(std::string, stop_grace, "10s", "SIGTERM-to-SIGKILL grace when stopping a job");
ABSL_FLAG(std::string, aging_interval, "2h",
          "A waiting job's effective priority rises by 1 per interval waited, up to the top "
          "priority (the highest queued, or remembered for 24h) and after that level's own "
          "jobs (0: no aging)");
ABSL_FLAG(std::string, aging_top_memory, "24h",
          "How long aging remembers the top priority after its last job left the queue, so "
          "jobs aged meanwhile still rank after that level's next arrivals (0: not remembered)");
ABSL_FLAG(int32_t, start_parallelism, 4, "Containers created/started at once");
ABSL_FLAG(double, max_cancel_fraction, 0.5,
          "Refuse snapshots cancelling more than this fraction of running jobs");
ABSL_FLAG(int32_t, mass_cancel_min_jobs, 1,
          "The mass-cancel guard refuses only snapshots cancelling more than this many running "
          "jobs (and more than --max_cancel_fraction of them)");
ABSL_FLAG(std::string, ranking, "drf", "Ranking policy: drf or fifo");
ABSL_FLAG(int64_t, max_snapshot_jobs, 2'000'000,
          "Jobs one SyncSnapshot/DryRun stream may carry; a header announcing more is refused "
          "(RESOURCE_EXHAUSTED) before any batch is read");
ABSL_FLAG(std::string, max_snapshot_message_bytes, "16Mi",
          "Largest SyncSnapshot/DryRun stream message (e.g. 16Mi; 1Ki..512Mi); a larger one is "
          "refused (INVALID_ARGUMENT)");
ABSL_FLAG(int64_t, retain_terminal_jobs, 1'000'000,
          "Keep at most this many finished (and cancelled) jobs' records, the most recently "
          "finished; older ones are removed at the next compaction (every 10 min)");
ABSL_FLAG(std::string, retain_terminal_for, "7d",
          "Remove a finished job's record (and its logs) this long after it finished");
ABSL_FLAG(int64_t, retain_events, 1'000'000, "Keep at most this many events (the newest)");
ABSL_FLAG(std::string, retain_events_for, "7d", "Remove events older than this");
ABSL_FLAG(std::string, backup_root, "",
          "Directory for the Backup RPC's copies (berthctl backup NAME writes "
          "<backup_root>/NAME); best on the data dir's file system (hard links). Empty: off");
ABSL_FLAG(std::string, fill_memory_from_history, "",
          "Comma list of pools whose jobs without a memory estimate get the one their "
          "action's usage history suggests (empty: off)");
ABSL_FLAG(std::string, requeue_oom, "",
          "Comma list of pools whose OOM-killed jobs are requeued once with a raised memory "
          "limit instead of failing (empty: off)");
ABSL_FLAG(std::string, log_level, "info", "debug, info, warning or error");

namespace berth {
namespace {

absl::Status ParseMap(const std::string& flag, const std::string& text,
                      std::map<std::string, std::string>* out) {
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    std::vector<std::string> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    if (kv.size() != 2 || kv[0].empty() || kv[1].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, ": '", item, "' is not name=value"));
    }
    (*out)[kv[0]] = kv[1];
  }
  return absl::OkStatus();
}

absl::StatusOr<BerthdConfig> ConfigFromFlags() {
  BerthdConfig c;
  c.listen = absl::GetFlag(FLAGS_listen);
  c.allow_plaintext_remote = absl::GetFlag(FLAGS_allow_plaintext_remote);
  c.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  c.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  c.tls_client_ca_file = absl::GetFlag(FLAGS_tls_client_ca);
  c.token_file = absl::GetFlag(FLAGS_token_file);
  c.data_dir = absl::GetFlag(FLAGS_data_dir);
  c.docker.url = absl::GetFlag(FLAGS_docker);
  c.docker.tls_cert_file = absl::GetFlag(FLAGS_docker_tls_cert);
  c.docker.tls_key_file = absl::GetFlag(FLAGS_docker_tls_key);
  c.docker.tls_ca_file = absl::GetFlag(FLAGS_docker_tls_ca);
  c.runtime = absl::GetFlag(FLAGS_runtime);
  c.swarm_manager = c.docker;
  c.swarm_manager.url = absl::GetFlag(FLAGS_swarm_manager);
  c.instance = absl::GetFlag(FLAGS_instance);
  c.allowed_images = absl::StrSplit(absl::GetFlag(FLAGS_allowed_images), ',',
                                    absl::SkipWhitespace());
  c.workspaces_root = absl::GetFlag(FLAGS_workspaces_root);
  if (std::string g = absl::GetFlag(FLAGS_workspace_group); !g.empty()) {
    absl::StatusOr<int64_t> gid = ParseWorkspaceGroup(g);
    if (!gid.ok()) return gid.status();
    c.workspace_gid = *gid;
  }
  c.write_run_metadata = absl::GetFlag(FLAGS_write_run_metadata);
  c.backup_root = absl::GetFlag(FLAGS_backup_root);
  c.fill_memory_pools = absl::StrSplit(absl::GetFlag(FLAGS_fill_memory_from_history), ',',
                                       absl::SkipWhitespace());
  c.requeue_oom_pools = absl::StrSplit(absl::GetFlag(FLAGS_requeue_oom), ',',
                                       absl::SkipWhitespace());
  if (absl::Status s = ParseMap("pool_network", absl::GetFlag(FLAGS_pool_network),
                                &c.pool_networks);
      !s.ok()) {
    return s;
  }
  c.container_user = absl::GetFlag(FLAGS_container_user);
  c.pids_limit = absl::GetFlag(FLAGS_pids_limit);
  c.docker_log_max_size = absl::GetFlag(FLAGS_docker_log_max_size);
  c.docker_log_max_files = absl::GetFlag(FLAGS_docker_log_max_files);
  if (std::string m = absl::GetFlag(FLAGS_memory); m != "auto") {
    absl::StatusOr<int64_t> v = ParseBytes("--memory", m);
    if (!v.ok()) return v.status();
    if (*v <= 0) return absl::InvalidArgumentError("--memory: must be > 0 or auto");
    c.memory_bytes = *v;
  }
  if (std::string cpus = absl::GetFlag(FLAGS_cpus); cpus != "auto") {
    absl::StatusOr<int64_t> v = ParseCpuMillis("--cpus", cpus);
    if (!v.ok()) return v.status();
    if (*v <= 0) return absl::InvalidArgumentError("--cpus: must be > 0 or auto");
    c.cpu_millis = *v;
  }
  c.max_workers = absl::GetFlag(FLAGS_max_workers);
  std::map<std::string, std::string> pool_max;
  if (absl::Status s = ParseMap("pool_max", absl::GetFlag(FLAGS_pool_max), &pool_max); !s.ok()) {
    return s;
  }
  for (const auto& [pool, n] : pool_max) {
    int value;
    if (!absl::SimpleAtoi(n, &value)) {
      return absl::InvalidArgumentError(absl::StrCat("--pool_max: '", n, "' is not a number"));
    }
    c.pool_max_workers[pool] = value;
  }
  c.workspace_max_workers = absl::GetFlag(FLAGS_workspace_max);
  absl::StatusOr<int64_t> log_cap = ParseBytes("--log_cap", absl::GetFlag(FLAGS_log_cap));
  if (!log_cap.ok()) return log_cap.status();
  c.log_cap_bytes = *log_cap;
  c.readers_read_logs = absl::GetFlag(FLAGS_readers_read_logs);
  c.follow_logs = absl::GetFlag(FLAGS_follow_logs);
  absl::StatusOr<int64_t> rm = ParseBytes("--reserve_memory", absl::GetFlag(FLAGS_reserve_memory));
  if (!rm.ok()) return rm.status();
  c.reserve_memory_bytes = *rm;
  absl::StatusOr<int64_t> rc = ParseCpuMillis("--reserve_cpus", absl::GetFlag(FLAGS_reserve_cpus));
  if (!rc.ok()) return rc.status();
  c.reserve_cpu_millis = *rc;
  c.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  for (auto [flag, value, out] :
       {std::tuple{"--tick", absl::GetFlag(FLAGS_tick), &c.tick},
        std::tuple{"--default_duration", absl::GetFlag(FLAGS_default_duration), &c.default_duration},
        std::tuple{"--stop_grace", absl::GetFlag(FLAGS_stop_grace), &c.stop_grace},
        std::tuple{"--swarm_node_lost_grace", absl::GetFlag(FLAGS_swarm_node_lost_grace),
                   &c.swarm_node_lost_grace},
        std::tuple{"--aging_interval", absl::GetFlag(FLAGS_aging_interval), &c.aging_interval},
        std::tuple{"--aging_top_memory", absl::GetFlag(FLAGS_aging_top_memory),
                   &c.aging_top_memory},
        std::tuple{"--retain_terminal_for", absl::GetFlag(FLAGS_retain_terminal_for),
                   &c.retain_terminal_for},
        std::tuple{"--retain_events_for", absl::GetFlag(FLAGS_retain_events_for),
                   &c.retain_events_for}}) {
    absl::StatusOr<absl::Duration> d = ParseHumanDuration(flag, value);
    if (!d.ok()) return d.status();
    *out = *d;
  }
  c.start_parallelism = absl::GetFlag(FLAGS_start_parallelism);
  c.max_cancel_fraction = absl::GetFlag(FLAGS_max_cancel_fraction);
  c.mass_cancel_min_jobs = absl::GetFlag(FLAGS_mass_cancel_min_jobs);
  c.ranking = absl::GetFlag(FLAGS_ranking);
  c.retain_terminal_jobs = absl::GetFlag(FLAGS_retain_terminal_jobs);
  c.retain_events = absl::GetFlag(FLAGS_retain_events);
  if (absl::GetFlag(FLAGS_max_snapshot_jobs) < 1) {
    return absl::InvalidArgumentError("--max_snapshot_jobs: must be >= 1");
  }
  c.max_snapshot_jobs = static_cast<uint64_t>(absl::GetFlag(FLAGS_max_snapshot_jobs));
  absl::StatusOr<int64_t> mb =
      ParseBytes("--max_snapshot_message_bytes", absl::GetFlag(FLAGS_max_snapshot_message_bytes));
  if (!mb.ok()) return mb.status();
  c.max_snapshot_message_bytes = *mb;
  return c;
}

// Logs why berthd did not start (a JSON line like every other) and returns
// its exit status: 2 for a refused setting or file (INVALID_ARGUMENT,
// FAILED_PRECONDITION, NOT_FOUND, PERMISSION_DENIED: the token file, a flag,
// the data dir), 1 when something it needs failed (UNAVAILABLE: a port in
// use, Docker; INTERNAL).
int RefuseStart(const absl::Status& status) {
  const absl::StatusCode c = status.code();
  const int exit_status = c == absl::StatusCode::kInvalidArgument ||
                                  c == absl::StatusCode::kFailedPrecondition ||
                                  c == absl::StatusCode::kNotFound ||
                                  c == absl::StatusCode::kPermissionDenied
                              ? 2
                              : 1;
  Log(LogLevel::kError, "berthd did not start",
      {{"code", absl::StatusCodeToString(c)},
       {"error", std::string(status.message())},
       {"exit_status", exit_status}});
  return exit_status;
}

}  // namespace
}  // namespace berth

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "berthd: the Berth executor service.\n"
      "  berthd --token_file=FILE --allowed_images=PATTERN[,...] [--data_dir=DIR] ...\n"
      "Flags may also be read from --flagfile=FILE.");
  absl::FlagsUsageConfig usage;
  usage.version_string = [] { return berth::VersionLine("berthd") + "\n"; };
  absl::SetFlagsUsageConfig(usage);
  berth::ParseBerthdCommandLine(argc, argv, berth::RefuseStart);
  const std::string level = absl::GetFlag(FLAGS_log_level);
  berth::SetMinLogLevel(level == "debug"     ? berth::LogLevel::kDebug
                        : level == "warning" ? berth::LogLevel::kWarning
                        : level == "error"   ? berth::LogLevel::kError
                                             : berth::LogLevel::kInfo);

  absl::StatusOr<berth::BerthdConfig> config = berth::ConfigFromFlags();
  if (!config.ok()) return berth::RefuseStart(config.status());
  if (config->allowed_images.empty()) {
    // Warned, not refused: a berthd with no image allowed still serves its
    // store (reads, logs, a restore's inspection).
    berth::Log(berth::LogLevel::kWarning,
               "no image is allowed: every job will be rejected IMAGE_NOT_ALLOWED",
               {{"fix", "--allowed_images=PATTERN[,...] (e.g. 'registry.local/research/*')"}});
  }
  // Handle SIGINT/SIGTERM (stop) and SIGHUP (reload the token file) on this
  // thread only: block them before any other thread starts, so every thread
  // inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  absl::StatusOr<std::unique_ptr<berth::Berthd>> berthd = berth::Berthd::Start(*config);
  if (!berthd.ok()) return berth::RefuseStart(berthd.status());
  int sig = 0;
  while (sigwait(&signals, &sig) == 0 && sig == SIGHUP) {
    (void)(*berthd)->ReloadTokens();  // logs the outcome; a bad file changes nothing
  }
  berth::Log(berth::LogLevel::kInfo, "signal received", {{"signal", sig}});
  (*berthd)->Shutdown();
  return 0;
}
