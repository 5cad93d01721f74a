// SwarmRuntime: stray tasks -- this instance's tasks that still run but are
// no job's current run -- noted at each List (logged once, asked to end) and
// counted on their nodes by ListNodes.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/runtime/swarm/swarm_runtime.h"
#include "planner/base/log.h"
#include "planner/base/status_macros.h"

namespace berth {

std::vector<SwarmService> SwarmRuntime::NoteStrays(const std::vector<SwarmTask>& strays,
                                                   const std::vector<SwarmService>& services) {
  std::map<std::string, const SwarmService*> by_id;
  for (const SwarmService& s : services) by_id[s.id] = &s;
  std::map<std::string, NotedStray> next;
  std::vector<SwarmService> to_end;
  for (const SwarmTask& t : strays) {
    auto service = by_id.find(t.service_id);
    if (service != by_id.end() && !service->second->stopped) to_end.push_back(*service->second);
    const std::string note =
        service != by_id.end()
            ? "stray swarm task of this instance (an older attempt) still runs: counted on "
              "its node and asked to end"
            : "stray swarm task of this instance (its service was removed) still runs: "
              "counted on its node until it ends; Docker before 24 cannot end it through "
              "the manager: docker stop its container on that node";
    if (!strays_.count(t.id)) {
      Log(LogLevel::kWarning, note,
          {{"job", t.job_id},
           {"task", t.id},
           {"node", t.node_id},
           {"container", t.container_id},
           {"memory_bytes", std::to_string(t.reserved_memory_bytes)}});
    }
    next[t.id] = NotedStray{t, note};
  }
  strays_ = std::move(next);
  return to_end;
}

absl::StatusOr<std::vector<NodeInfo>> SwarmRuntime::ListNodes() {
  ASSIGN_OR_RETURN(std::string body, Get("nodes", "/nodes", "list nodes"));
  ASSIGN_OR_RETURN(std::vector<NodeInfo> nodes, ParseNodeList(body));
  absl::MutexLock lock(&mu_);
  for (NodeInfo& n : nodes) {
    for (const auto& [id, noted] : strays_) {
      const SwarmTask& t = noted.task;
      if (t.node_id != n.id) continue;
      ++n.stray_tasks;
      n.stray_memory_bytes += t.reserved_memory_bytes;
      n.stray_cpu_millis += t.reserved_nano_cpus / 1'000'000;
      n.strays.push_back({t.id, t.job_id, t.container_id,
                          absl::StrCat(noted.note, " (node ", n.id, ", task ", t.id, ")")});
    }
  }
  return nodes;
}

}  // namespace berth
