#include "planner/explain/explain_nodes.h"

#include "absl/strings/str_cat.h"
#include "planner/base/units.h"

namespace berth::planner::internal {
namespace {

std::string Amount(Dimension d, int64_t v) {
  switch (d) {
    case Dimension::kMemory: return FormatBytes(v);
    case Dimension::kCpu: return FormatCpu(v);
    default: return absl::StrCat(v);
  }
}

// The first characters of a node id, as `docker node ls` users know ids.
constexpr size_t kShortNodeId = 12;

const char* DimensionWord(Dimension d) {
  return d == Dimension::kMemory ? "memory" : "cpu";
}

}  // namespace

const NodePlacement* PlacementOf(const PlanResult& r, size_t index) {
  return index < r.placements.size() ? &r.placements[index] : nullptr;
}

std::string NodeId(const PlanResult& r, int32_t node) {
  return node >= 0 && static_cast<size_t>(node) < r.nodes.size() ? r.nodes[node]
                                                                   : std::string();
}

std::string NodeName(const PlanResult& r, int32_t node) {
  if (node >= 0 && static_cast<size_t>(node) < r.node_specs.size() &&
      !r.node_specs[node].name.empty()) {
    const std::string& name = r.node_specs[node].name;
    for (size_t k = 0; k < r.node_specs.size(); ++k) {
      if (k == static_cast<size_t>(node) || r.node_specs[k].name != name) continue;
      // Another node has the same hostname (clones of one VM image).
      return absl::StrCat(name, " (", NodeId(r, node).substr(0, kShortNodeId), ")");
    }
    return name;
  }
  return NodeId(r, node);
}

std::string NodeShortText(const PlanResult& r, const Decision& d,
                          const NodePlacement& p) {
  if (d.dimension == Dimension::kWorkerSlots) {
    return "needs a worker slot on a node: none of its pool's nodes has one free";
  }
  return absl::StrCat("needs ", Amount(d.dimension, d.needed), " ",
                      DimensionWord(d.dimension), "; the most free on one node is ",
                      Amount(d.dimension, d.free), " (", NodeName(r, p.short_node),
                      "), ", Amount(d.dimension, p.cluster_free),
                      " free in the cluster");
}

std::string NodeNeverFitsText(const PlanResult& r, const Decision& d,
                              const NodePlacement& p) {
  if (p.short_node < 0) return "its pool has no node to run on";
  return absl::StrCat("needs ", Amount(d.dimension, d.needed), " ",
                      DimensionWord(d.dimension),
                      ", more than any node has: the largest is ",
                      NodeName(r, p.short_node), " (", Amount(d.dimension, d.capacity),
                      "), ", Amount(d.dimension, p.cluster_free), " free in the cluster");
}

}  // namespace berth::planner::internal
