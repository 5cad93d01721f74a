// NodeUse: one node's figures for GetBudgets, GetPlan and /metrics
// (multi-node runtimes): its capacity and reserve (the inventory's v1::Node),
// what Berth's admitted and running jobs hold there, and what the engine
// reported running there at the last pass (NodeBudgets::live_jobs()).
//
// Thread-safe: a pure function.
#ifndef BERTH_EXECUTOR_RECONCILE_NODE_USE_H_
#define BERTH_EXECUTOR_RECONCILE_NODE_USE_H_

#include <optional>
#include <vector>

#include "berth/v1/budgets.pb.h"
#include "executor/reconcile/node_budgets.h"
#include "planner/model/model.h"

namespace berth {

// One v1::NodeUse per node of `budgets.nodes()`, in that order. reserved_*
// and jobs: the running jobs of `state` (admitted and running; their
// RunningJob::node) on the node. observed_*: the jobs of `live` on the
// node, with the reservations of those `state` knows (a job being stopped
// after a requeue counts in observed_jobs only); observed is false and the
// observed figures 0 when `live` is nullopt. Jobs on a node absent from the
// inventory (drained, down) are in no row.
std::vector<v1::NodeUse> NodeUses(const v1::Budgets& budgets, const planner::State& state,
                                  const std::optional<NodeBudgets::LiveJobs>& live);

}  // namespace berth

#endif  // BERTH_EXECUTOR_RECONCILE_NODE_USE_H_
