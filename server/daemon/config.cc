#include "server/daemon/config.h"

#include <grp.h>
#include <sys/stat.h>

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "executor/runtime/runtime_limits.h"
#include "planner/base/host_port.h"
#include "planner/base/units.h"
#include "server/core/budget_checks.h"
#include "server/ingest/job_validation.h"

namespace berth {

EngineLogRetention EngineLogRetentionForCap(int64_t cap_bytes) {
  constexpr int64_t kMiB = int64_t{1} << 20;
  const int64_t size = std::max<int64_t>(cap_bytes, 1);
  return {absl::StrCat((size + kMiB - 1) / kMiB, "m"), 5};
}

absl::Status ValidateConfig(const BerthdConfig& c) {
  auto bad = [](absl::string_view setting, absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(setting, ": ", why));
  };
  absl::StatusOr<HostPort> listen = ParseHostPort(c.listen);
  if (!listen.ok()) return bad("listen", listen.status().message());
  if (!c.metrics_listen.empty()) {
    absl::StatusOr<HostPort> metrics = ParseHostPort(c.metrics_listen);
    if (!metrics.ok()) {
      return bad("metrics_listen", absl::StrCat(metrics.status().message(), "; empty turns it off"));
    }
  }
  if (c.runtime != "docker" && c.runtime != "swarm") {
    return bad("runtime", absl::StrCat("'", c.runtime, "' is neither docker nor swarm"));
  }
  if (c.runtime == "swarm" && c.swarm_manager.url.empty()) {
    return bad("swarm_manager", "required with runtime=swarm");
  }
  const bool tls = !c.tls_cert_file.empty();
  if (tls != !c.tls_key_file.empty()) {
    return absl::FailedPreconditionError(
        "tls_cert and tls_key: give both (or neither, for plaintext on loopback)");
  }
  if (!c.tls_client_ca_file.empty() && !tls) {
    return absl::FailedPreconditionError("tls_client_ca: needs tls_cert and tls_key");
  }
  if (!tls && !IsLoopbackHost(listen->host) && !c.allow_plaintext_remote) {
    return absl::FailedPreconditionError(absl::StrCat(
        "listen: plaintext gRPC on non-loopback address '", c.listen,
        "' is refused; configure tls_cert/tls_key or set allow_plaintext_remote"));
  }
  if (c.token_file.empty()) {
    return bad("token_file", "required (lines of \"<role> <name> <token>\")");
  }
  if (c.data_dir.empty()) return bad("data_dir", "required");
  if (!IsValidId(c.instance)) {
    return bad("instance", "must be 1-128 characters of [A-Za-z0-9._-]");
  }
  if (!c.workspaces_root.empty()) {
    struct stat st;
    if (c.workspaces_root[0] != '/' || stat(c.workspaces_root.c_str(), &st) != 0 ||
        !S_ISDIR(st.st_mode)) {
      return bad("workspaces_root",
                 absl::StrCat("'", c.workspaces_root, "' must be an existing absolute directory"));
    }
  }
  if (c.workspace_gid == 0 || c.workspace_gid < -1 || c.workspace_gid > 0xFFFFFFFE) {
    return bad("workspace_group", "must be a group other than root (gid 0)");
  }
  if (c.workspace_gid > 0 && c.workspaces_root.empty()) {
    return bad("workspace_group", "needs workspaces_root (it is the workspaces' group)");
  }
  if (c.write_run_metadata && c.workspaces_root.empty()) {
    return bad("write_run_metadata", "needs workspaces_root (it writes into the workspaces)");
  }
  if (c.memory_bytes < 0) return bad("memory", "must be > 0 or auto");
  if (c.cpu_millis < 0) return bad("cpus", "must be > 0 or auto");
  // --memory=1 or --cpus=0.001 would start a berthd that runs nothing.
  if (absl::Status s = CheckBudgetsCanRunAJob(c.memory_bytes, c.cpu_millis, "memory", "cpus");
      !s.ok()) {
    return s;
  }
  if (c.max_workers <= 0) return bad("max_workers", "must be > 0");
  if (c.workspace_max_workers < 0) return bad("workspace_max_workers", "must be >= 0");
  for (const auto& [pool, n] : c.pool_max_workers) {
    if (!IsValidId(pool)) return bad("pool_max", absl::StrCat("bad pool name '", pool, "'"));
    if (n < 0) return bad("pool_max", absl::StrCat("pool '", pool, "': must be >= 0"));
  }
  for (const auto& [pool, net] : c.pool_networks) {
    if (!IsValidId(pool) || net.empty()) {
      return bad("pool_network", absl::StrCat("'", pool, "=", net, "' is not pool=network"));
    }
  }
  for (const std::string& pool : c.fill_memory_pools) {
    if (!IsValidId(pool)) {
      return bad("fill_memory_from_history", absl::StrCat("bad pool name '", pool, "'"));
    }
  }
  for (const std::string& pool : c.requeue_oom_pools) {
    if (!IsValidId(pool)) {
      return bad("requeue_oom", absl::StrCat("bad pool name '", pool, "'"));
    }
  }
  if (c.reserve_memory_bytes < 0) return bad("reserve_memory", "must be >= 0");
  if (c.reserve_cpu_millis < 0) return bad("reserve_cpus", "must be >= 0");
  if (c.tick <= absl::ZeroDuration()) return bad("tick", "must be > 0");
  if (c.default_duration <= absl::ZeroDuration()) return bad("default_duration", "must be > 0");
  if (c.stop_grace < absl::ZeroDuration()) return bad("stop_grace", "must be >= 0");
  if (c.swarm_node_lost_grace < absl::ZeroDuration()) {
    return bad("swarm_node_lost_grace", "must be >= 0");
  }
  if (c.log_cap_bytes < 2) return bad("log_cap", "must be at least 2 bytes");
  if (c.docker_log_max_files < 0) {
    return bad("docker_log_max_files", "must be >= 0 (0: from --log_cap)");
  }
  if (c.aging_interval < absl::ZeroDuration()) return bad("aging_interval", "must be >= 0");
  if (c.aging_top_memory < absl::ZeroDuration()) return bad("aging_top_memory", "must be >= 0");
  // Compaction needs something to keep: the last finished jobs and events
  // are what GetJob, WatchEvents' resume and right-sizing read.
  if (c.retain_terminal_jobs < 1000) return bad("retain_terminal_jobs", "must be >= 1000");
  if (c.retain_events < 1000) return bad("retain_events", "must be >= 1000");
  if (c.retain_terminal_for < absl::Hours(1)) return bad("retain_terminal_for", "must be >= 1h");
  if (c.retain_events_for < absl::Hours(1)) return bad("retain_events_for", "must be >= 1h");
  if (c.start_parallelism < 1 || c.start_parallelism > 64) {
    return bad("start_parallelism", "must be 1..64");
  }
  if (!(c.max_cancel_fraction >= 0 && c.max_cancel_fraction <= 1)) {
    return bad("max_cancel_fraction", "must be within [0, 1]");
  }
  if (c.mass_cancel_min_jobs < 0) return bad("mass_cancel_min_jobs", "must be >= 0");
  if (c.pids_limit < 16) return bad("pids_limit", "must be >= 16");
  if (c.max_snapshot_jobs < 1 || c.max_snapshot_jobs > kMaxSnapshotJobsLimit) {
    return bad("max_snapshot_jobs", absl::StrCat("must be within 1 and ", kMaxSnapshotJobsLimit));
  }
  if (c.max_snapshot_message_bytes < kMinSnapshotMessageBytes ||
      c.max_snapshot_message_bytes > kMaxSnapshotMessageBytesLimit) {
    return bad("max_snapshot_message_bytes",
               absl::StrCat("must be within ", FormatBytes(kMinSnapshotMessageBytes), " and ",
                            FormatBytes(kMaxSnapshotMessageBytesLimit)));
  }
  // Parsed as numbers: "00:0", "+0:0", "65534:0", "-1:-1" and names are
  // refused, whatever their spelling (executor/runtime_limits.h).
  if (absl::StatusOr<ContainerUser> u = ParseContainerUser(c.container_user); !u.ok()) {
    return bad("container_user", u.status().message());
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::Budgets> DefaultBudgets(const BerthdConfig& c, int host_cpus,
                                           int64_t host_memory_bytes, int hosts) {
  v1::Budgets b;
  hosts = std::max(hosts, 1);
  const int64_t reserve_memory = c.reserve_memory_bytes * hosts;
  const int64_t reserve_cpu = c.reserve_cpu_millis * hosts;
  b.set_memory_bytes(c.memory_bytes > 0 ? c.memory_bytes : host_memory_bytes - reserve_memory);
  b.set_cpu_millis(c.cpu_millis > 0 ? c.cpu_millis
                                    : int64_t{host_cpus} * 1000 - reserve_cpu);
  b.set_max_workers(c.max_workers);
  b.set_workspace_max_workers(c.workspace_max_workers);
  for (const auto& [pool, n] : c.pool_max_workers) (*b.mutable_pools())[pool].set_max_workers(n);
  for (const auto& [pool, net] : c.pool_networks) (*b.mutable_pools())[pool];
  if (b.memory_bytes() <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "memory: auto budget is ", FormatBytes(b.memory_bytes()), " (host ",
        FormatBytes(host_memory_bytes), " minus reserve ", FormatBytes(c.reserve_memory_bytes),
        hosts > 1 ? absl::StrCat(" on each of ", hosts, " nodes") : std::string(),
        "); lower reserve_memory or set memory"));
  }
  if (b.cpu_millis() <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cpus: auto budget is ", FormatCpu(b.cpu_millis()), " (host ",
        FormatCpu(int64_t{host_cpus} * 1000), " minus reserve ", FormatCpu(c.reserve_cpu_millis),
        hosts > 1 ? absl::StrCat(" on each of ", hosts, " nodes") : std::string(),
        "); lower reserve_cpus or set cpus"));
  }
  if (absl::Status s = CheckBudgetsCanRunAJob(b.memory_bytes(), b.cpu_millis(), "memory", "cpus");
      !s.ok()) {
    return s;
  }
  return b;
}

absl::StatusOr<int64_t> ParseWorkspaceGroup(absl::string_view text) {
  int64_t gid = -1;
  if (text.empty()) {
    return absl::InvalidArgumentError("--workspace_group: empty (a group name or gid)");
  }
  if (absl::ascii_isdigit(static_cast<unsigned char>(text[0]))) {
    if (!absl::SimpleAtoi(text, &gid) || gid > 0xFFFFFFFE) {
      return absl::InvalidArgumentError(
          absl::StrCat("--workspace_group: '", text, "' is not a group id"));
    }
  } else {
    const std::string name(text);
    struct group g;
    struct group* found = nullptr;
    std::vector<char> buf(16384);
    if (getgrnam_r(name.c_str(), &g, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--workspace_group: no group named '", text, "' on this host (getent group ", text,
          ")"));
    }
    gid = found->gr_gid;
  }
  if (gid == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--workspace_group: '", text, "' is gid 0 (root); name the researchers' own group"));
  }
  return gid;
}

}  // namespace berth
