#include "executor/reconcile/node_use.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace berth {

std::vector<v1::NodeUse> NodeUses(const v1::Budgets& budgets, const planner::State& state,
                                  const std::optional<NodeBudgets::LiveJobs>& live) {
  std::vector<v1::NodeUse> out;
  if (budgets.nodes().empty()) return out;
  absl::flat_hash_map<absl::string_view, size_t> row;
  out.reserve(static_cast<size_t>(budgets.nodes_size()));
  for (const v1::Node& n : budgets.nodes()) {
    row.emplace(n.id(), out.size());
    v1::NodeUse& u = out.emplace_back();
    *u.mutable_node() = n;
    u.set_observed(live.has_value());
  }
  absl::flat_hash_map<absl::string_view, const planner::RunningJob*> running;
  running.reserve(state.running.size());
  for (const planner::RunningJob& r : state.running) {
    running.emplace(r.id, &r);
    auto it = row.find(r.node);
    if (it == row.end()) continue;
    v1::NodeUse& u = out[it->second];
    u.set_reserved_memory_bytes(u.reserved_memory_bytes() + r.resources.memory_bytes);
    u.set_reserved_cpu_millis(u.reserved_cpu_millis() + r.resources.cpu_millis);
    u.set_jobs(u.jobs() + 1);
  }
  if (!live.has_value()) return out;
  for (const auto& [node, jobs] : *live) {
    auto it = row.find(node);
    if (it == row.end()) continue;
    v1::NodeUse& u = out[it->second];
    for (const std::string& id : jobs) {
      u.set_observed_jobs(u.observed_jobs() + 1);
      auto r = running.find(id);
      if (r == running.end()) continue;
      u.set_observed_memory_bytes(
          u.observed_memory_bytes() + r->second->resources.memory_bytes);
      u.set_observed_cpu_millis(
          u.observed_cpu_millis() + r->second->resources.cpu_millis);
    }
  }
  return out;
}

}  // namespace berth
