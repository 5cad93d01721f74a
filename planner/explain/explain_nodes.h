// The node side of explanations (Budgets::nodes): which node a decision
// names, and its sentences. Internal to planner/ (explain.cc).
//
// Thread-safe: pure functions.
#ifndef BERTH_PLANNER_EXPLAIN_EXPLAIN_NODES_H_
#define BERTH_PLANNER_EXPLAIN_EXPLAIN_NODES_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "planner/plan/plan.h"

namespace berth::planner::internal {

// The placement of result.decisions[index], or nullptr without nodes.
const NodePlacement* PlacementOf(const PlanResult& result, size_t index);

// The id of node `node` of the result, "" for -1 (or out of range).
std::string NodeId(const PlanResult& result, int32_t node);

// How sentences name node `node`: its Node::name (a Swarm node's hostname),
// with the first 12 characters of its id when another node has the same
// name ("vm (k3x9abcdef12)"), else its id; "" for -1 (or out of range).
std::string NodeName(const PlanResult& result, int32_t node);

// A wait on one node: "needs 48 GiB memory; the most free on one node is
// 20 GiB (node-b), 60 GiB free in the cluster".
std::string NodeShortText(const PlanResult& result, const Decision& d,
                          const NodePlacement& p);

// NEVER_FITS, larger than every node: "needs 48 GiB memory, more than any
// node has: the largest is node-b (40 GiB), 72 GiB free in the cluster".
std::string NodeNeverFitsText(const PlanResult& result, const Decision& d,
                              const NodePlacement& p);

}  // namespace berth::planner::internal

#endif  // BERTH_PLANNER_EXPLAIN_EXPLAIN_NODES_H_
