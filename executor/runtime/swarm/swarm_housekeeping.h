// Housekeeping on a Swarm that Berth cannot do through the manager: Docker
// Engine before 24 keeps every task of a removed replicated-job service
// (moby/moby#44312, fixed by moby/swarmkit#3112 in Moby 24) -- its record on
// the manager and its exited container on its node -- and
// `docker swarm update --task-history-limit` does not reach them. The
// manager's API cannot remove a node's containers, so berthd checks the
// engines at start and says what to do (docs/cluster.md).
//
// Pure functions; thread-safe.
#ifndef BERTH_EXECUTOR_RUNTIME_SWARM_SWARM_HOUSEKEEPING_H_
#define BERTH_EXECUTOR_RUNTIME_SWARM_SWARM_HOUSEKEEPING_H_

#include <optional>
#include <string>
#include <vector>

#include "executor/runtime/runtime.h"

namespace berth {

// The first engine major version that removes a replicated-job service's
// tasks with the service.
inline constexpr int kSwarmJobTasksRemovedSince = 24;

// The engine's major version ("20.10.24+dfsg1" -> 20); nullopt when the
// version does not start with a number (unknown).
std::optional<int> EngineMajorVersion(const std::string& version);

// A warning naming the nodes (hostname and engine version) whose engine
// keeps finished jobs' task records and containers, with the commands that
// clean them up for `instance` (the berth.instance label of every job's
// container); nullopt when every node with a known version is at
// kSwarmJobTasksRemovedSince or later.
std::optional<std::string> SwarmHousekeepingWarning(const std::vector<NodeInfo>& nodes,
                                                    const std::string& instance);

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_SWARM_SWARM_HOUSEKEEPING_H_
