#include "executor/runtime/swarm/swarm_housekeeping.h"

#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace berth {

std::optional<int> EngineMajorVersion(const std::string& version) {
  int major = 0;
  size_t i = 0;
  for (; i < version.size() && i < 6 && std::isdigit(static_cast<unsigned char>(version[i]));
       ++i) {
    major = major * 10 + (version[i] - '0');
  }
  if (i == 0) return std::nullopt;
  return major;
}

std::optional<std::string> SwarmHousekeepingWarning(const std::vector<NodeInfo>& nodes,
                                                    const std::string& instance) {
  std::vector<std::string> old;
  for (const NodeInfo& n : nodes) {
    std::optional<int> major = EngineMajorVersion(n.engine_version);
    if (!major.has_value() || *major >= kSwarmJobTasksRemovedSince) continue;
    old.push_back(absl::StrCat(n.hostname.empty() ? n.id : n.hostname, " (", n.engine_version,
                               ")"));
  }
  if (old.empty()) return std::nullopt;
  return absl::StrCat(
      "swarm engine before ", kSwarmJobTasksRemovedSince, " on ", old.size(), " node(s): ",
      absl::StrJoin(old, ", "),
      ". It keeps every finished job's task record on the manager and its exited container on "
      "its node (moby/moby#44312; --task-history-limit does not reach them). Upgrade the "
      "engines to ", kSwarmJobTasksRemovedSince,
      " or later; until then prune on every node from cron: docker container prune --force "
      "--filter label=berth.instance=",
      instance, " (a running container is never pruned), and restart the manager's dockerd "
      "now and then to drop the task records");
}

}  // namespace berth
