// Nodes: the planner's view of Budgets::nodes. NodeInventory is the static
// part Prepare() builds once per plan (nodes sorted by id, pool groups, what
// running jobs hold on each node, their releases); NodePlacer is the mutable
// part the admission walk uses (what is free on each node now, best-fit
// placement, per-node reservations). Internal to planner/; the rules are in
// model.h (Budgets::nodes) and plan.h.
//
// Not thread-safe: one NodePlacer per walk.
#ifndef BERTH_PLANNER_PLAN_NODES_H_
#define BERTH_PLANNER_PLAN_NODES_H_

#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "planner/model/model.h"
#include "planner/model/reasons.h"

namespace berth::planner::internal {

inline constexpr int64_t kNodeUnlimited = INT64_MAX;

struct NodeAmounts {
  int64_t memory_bytes = 0;
  int64_t cpu_millis = 0;
  int64_t slots = 0;  // kNodeUnlimited without a per-node limit
};

struct NodeRelease {
  absl::Time end;
  int64_t memory_bytes;
  int64_t cpu_millis;
};

// Why a job cannot be given a node: the dimension, the node to name (-1 if
// the group has no node) and that node's free amount / capacity in it.
struct NodeShort {
  Dimension dimension = Dimension::kUnspecified;
  int32_t node = -1;
  int64_t free = 0;
  int64_t capacity = 0;
};

class NodeInventory {
 public:
  // Rebuilds from `nodes` (any order; sorted by id here). Nodes with a
  // duplicate id after the first, or with memory or cpu <= 0, are ignored.
  void Build(const std::vector<Node>& nodes);
  bool empty() const { return nodes_.empty(); }
  size_t size() const { return nodes_.size(); }
  const Node& node(uint32_t i) const { return *nodes_[i]; }
  const NodeAmounts& capacity(uint32_t i) const { return capacity_[i]; }

  // The group of nodes that may run jobs of `pool` (kPoolLabel).
  uint32_t GroupOf(absl::string_view pool) const;
  size_t num_groups() const { return groups_.size(); }
  const std::vector<uint32_t>& members(uint32_t group) const {
    return groups_[group].by_memory;
  }
  // Index of the node with this id, -1 if none.
  int32_t Find(absl::string_view id) const;

  // True if some node of `group` is at least this large. O(log nodes).
  bool FitsSomeNode(uint32_t group, int64_t memory, int64_t cpu) const;
  // For a job that fits no node of `group`: the binding dimension and the
  // largest node in it (memory first; cpu if some node has the memory; for
  // the combination, the node with most memory among those with the cpu).
  NodeShort Largest(uint32_t group, int64_t memory, int64_t cpu) const;

  // Sums over the nodes (saturated; slots: kNodeUnlimited if any node has
  // no limit).
  NodeAmounts Total() const;

  // What running jobs hold, per node, and their releases.
  void ClearUsage();
  void AddRunning(uint32_t node, int64_t memory, int64_t cpu, absl::Time end);
  const NodeAmounts& used(uint32_t i) const { return used_[i]; }
  const std::vector<NodeRelease>& releases(uint32_t i) const {
    return releases_[i];
  }

 private:
  struct Group {
    std::vector<uint32_t> by_memory;  // node indices by capacity memory, id
    std::vector<int64_t> suffix_max_cpu;
  };
  std::vector<const Node*> nodes_;
  std::vector<NodeAmounts> capacity_;
  absl::flat_hash_map<absl::string_view, uint32_t> index_;
  std::vector<Group> groups_;  // groups_[0]: nodes without kPoolLabel
  absl::flat_hash_map<absl::string_view, uint32_t> group_of_pool_;
  std::vector<NodeAmounts> used_;
  std::vector<std::vector<NodeRelease>> releases_;
};

// The nodes while the admission walk runs.
class NodePlacer {
 public:
  // REQUIRES: `inv` outlives the placer.
  explicit NodePlacer(const NodeInventory& inv);

  const NodeAmounts& free(uint32_t node) const { return free_[node]; }

  // A node that may be given a job only within `spare` (the reservation's
  // node: what the reserved job leaves free at its start).
  struct Guard {
    int32_t node = -1;
    NodeAmounts spare;
  };

  // The best-fit node of `group` for (memory, cpu) now: the least memory
  // left, then the least cpu, ties by id; the guarded node only if the job
  // also fits its spare. -1 if none. O(log nodes + nodes skipped).
  int32_t BestFit(uint32_t group, int64_t memory, int64_t cpu,
                  const Guard& guard) const;
  // BestFit() without a guard, remembering failures: free amounts only
  // shrink during a walk, so once (m, c) fits no node, no (m' >= m,
  // c' >= c) will. Same answer as BestFit(group, memory, cpu, {}).
  int32_t BestFitUnguarded(uint32_t group, int64_t memory, int64_t cpu);
  // Why no node of `group` fits (memory, cpu) now.
  NodeShort ShortNow(uint32_t group, int64_t memory, int64_t cpu) const;
  // Takes the job's resources on `node` until `end`.
  void Take(uint32_t node, int64_t memory, int64_t cpu, absl::Time end);
  // Gives back what a job held on `node` (its end has passed: the ETA pass
  // walking forward in time, planner/forecast/eta.cc). Saturating.
  void Give(uint32_t node, int64_t memory, int64_t cpu);

  // The earliest time >= not_before at which some node of `group` has
  // (memory, cpu) and a slot free, from the releases of running and admitted
  // jobs: the node (-1 if none ever does), the time (InfiniteFuture() then)
  // and what the node has beyond the job at that time.
  struct Slot {
    int32_t node = -1;
    absl::Time start = absl::InfiniteFuture();
    NodeAmounts spare;
  };
  Slot Reserve(uint32_t group, int64_t memory, int64_t cpu,
               absl::Time not_before) const;

 private:
  using Key = std::tuple<int64_t, int64_t, uint32_t>;  // memory, cpu, node
  void Index(uint32_t node);
  void Unindex(uint32_t node);

  const NodeInventory& inv_;
  std::vector<NodeAmounts> free_;
  std::vector<uint32_t> group_of_node_;
  // Per group: its nodes with a free slot, by free memory, cpu, id.
  std::vector<std::set<Key>> open_;
  std::vector<std::vector<NodeRelease>> releases_;
  // Per group: a few (memory, cpu) that fit no node (BestFitUnguarded).
  static constexpr size_t kMaxNoFits = 4;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> no_fit_;
};

}  // namespace berth::planner::internal

#endif  // BERTH_PLANNER_PLAN_NODES_H_
