#include "server/daemon/berthd_runtime.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "executor/runtime/docker/engine_client.h"
#include "executor/runtime/swarm/swarm_runtime.h"
#include "planner/base/log.h"
#include "planner/base/status_macros.h"
#include "planner/base/units.h"

namespace berth {

absl::StatusOr<BerthdRuntime> ConnectRuntime(const BerthdConfig& c) {
  BerthdRuntime out;
  // The options both runtimes share (executor/runtime/docker/engine_client.h).
  EngineRuntimeOptions common;
  common.instance = c.instance;
  common.image_allow_list = c.allowed_images;
  common.user = c.container_user;
  common.pids_limit = c.pids_limit;
  const EngineLogRetention derived = EngineLogRetentionForCap(c.log_cap_bytes);
  common.log_max_size = c.docker_log_max_size.empty() ? derived.max_size : c.docker_log_max_size;
  common.log_max_files = c.docker_log_max_files == 0 ? derived.max_files : c.docker_log_max_files;
  common.workspaces_root = c.workspaces_root;
  common.workspace_gid = c.workspace_gid;
  if (c.runtime == "swarm") {
    SwarmRuntimeOptions so;
    static_cast<EngineRuntimeOptions&>(so) = common;
    so.endpoint = c.swarm_manager;
    so.stop_grace = c.stop_grace;
    so.node_lost_grace = c.swarm_node_lost_grace;
    ASSIGN_OR_RETURN(std::unique_ptr<SwarmRuntime> swarm, SwarmRuntime::Create(so));
    SwarmRuntime* s = swarm.get();
    out.image_allowed = [s](absl::string_view image) { return s->ImageAllowed(image); };
    out.runtime = std::move(swarm);
    out.engine_url = c.swarm_manager.url;
  } else {
    DockerRuntimeOptions ro;
    static_cast<EngineRuntimeOptions&>(ro) = common;
    ro.endpoint = c.docker;
    ASSIGN_OR_RETURN(std::unique_ptr<DockerRuntime> docker, DockerRuntime::Create(ro));
    DockerRuntime* d = docker.get();
    out.image_allowed = [d](absl::string_view image) { return d->ImageAllowed(image); };
    out.runtime = std::move(docker);
    out.engine_url = c.docker.url;
  }
  return out;
}

absl::StatusOr<v1::Budgets> ResolveDefaultBudgets(const BerthdConfig& c,
                                                  const BerthdRuntime& engine,
                                                  EngineSize* engine_size) {
  int host_cpus = 0;
  int64_t host_memory = 0;
  int hosts = 1;
  if (c.memory_bytes != 0 && c.cpu_millis != 0) {
    // Explicit budgets: the engine's size only to warn about them.
    absl::StatusOr<HostInfo> host = engine.runtime->GetHostInfo();
    if (host.ok()) {
      host_cpus = host->ncpu;
      host_memory = host->mem_total_bytes;
    } else {
      Log(LogLevel::kInfo, "engine size unknown: budgets not compared with it",
          {{"error", host.status().ToString()}});
    }
  } else {
    absl::StatusOr<HostInfo> host;
    for (int attempt = 0; attempt < 30; ++attempt) {
      host = engine.runtime->GetHostInfo();
      if (host.ok()) break;
      Log(LogLevel::kWarning, "waiting for Docker to size auto budgets",
          {{"error", host.status().ToString()}});
      absl::SleepFor(absl::Seconds(1));
    }
    if (!host.ok()) {
      return absl::UnavailableError(absl::StrCat(
          "budgets are auto but Docker did not answer at ", engine.engine_url, ": ",
          host.status().message(), "; set memory and cpus explicitly or start Docker"));
    }
    host_cpus = host->ncpu;
    host_memory = host->mem_total_bytes;
    hosts = host->nodes;
  }
  ASSIGN_OR_RETURN(v1::Budgets budgets, DefaultBudgets(c, host_cpus, host_memory, hosts));
  EngineSize size;
  if (c.runtime != "swarm") size = {host_memory, int64_t{host_cpus} * 1000};
  for (const std::string& w : BudgetsAboveEngine(budgets, size)) {
    Log(LogLevel::kWarning, "budget above what the engine reports", {{"warning", w}});
  }
  if (engine_size != nullptr) *engine_size = size;
  return budgets;
}

v1::Budgets LogNodesAtStart(v1::Budgets budgets) {
  for (const v1::Node& n : budgets.nodes()) {
    Log(LogLevel::kInfo, "swarm node",
        {{"node", n.hostname()},
         {"id", n.id()},
         {"memory_for_jobs", FormatBytes(n.memory_bytes())},
         {"cpu_for_jobs", FormatCpu(n.cpu_millis())},
         {"reserve_memory", FormatBytes(n.reserve_memory_bytes())},
         {"reserve_cpu", FormatCpu(n.reserve_cpu_millis())}});
  }
  budgets.clear_nodes();
  return budgets;
}

}  // namespace berth
