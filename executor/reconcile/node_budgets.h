// NodeBudgets: the node inventory plans use on a multi-node runtime (Swarm),
// kept up to date from Runtime::ListNodes() without a restart: Ready and
// active nodes only (a drained, paused or down node stops receiving jobs; a
// node that joins adds capacity), each sized from what the engine reports
// minus a per-node reserve (each v1::Node says its hostname and the reserve
// kept back).
//
// Thread-safe: Update()/ObserveTasks() from the reconcile loop, the readers
// from any thread (plans, RPC handlers, metrics).
#ifndef BERTH_EXECUTOR_RECONCILE_NODE_BUDGETS_H_
#define BERTH_EXECUTOR_RECONCILE_NODE_BUDGETS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "berth/v1/budgets.pb.h"
#include "executor/runtime/runtime.h"

namespace berth {

struct NodeBudgetsOptions {
  // Kept back on every node for the engine and the OS (bytes, millicores).
  int64_t reserve_memory_bytes = 0;
  int64_t reserve_cpu_millis = 0;
  // Jobs per node at once; 0 = no per-node limit (cluster max_workers
  // still applies).
  int32_t max_workers_per_node = 0;
  // True: the budgets' memory (cpu) follows the nodes, their sum (the
  // operator gave no explicit size at start) -- capped by an operator's
  // SetBudgets value below it (ApplyTo's operator_set). False: the
  // configured (or set) total stays as a cluster-wide cap.
  bool auto_memory = true;
  bool auto_cpu = true;
};

class NodeBudgets {
 public:
  explicit NodeBudgets(NodeBudgetsOptions options) : options_(options) {}

  // Replaces the inventory with the nodes that accept jobs (AcceptsJobs),
  // sorted by id, each sized less the reserve and less its stray tasks'
  // reservations (NodeInfo::stray_*); a node left with no memory or cpu
  // after those is left out. Bumps version() when the inventory changed.
  void Update(const std::vector<NodeInfo>& nodes);

  // Sets budgets.nodes to the inventory (unless the stored budgets name
  // nodes themselves) and, with auto_memory (auto_cpu), memory (cpu) to the
  // nodes' sum -- or, when `operator_set` (the budgets are an operator's
  // SetBudgets, stored, not the start-up defaults), to the budgets' own
  // value if it is below the sum: an operator's cap holds as on one host,
  // while per-node packing still applies. No-op before the first Update().
  void ApplyTo(v1::Budgets& budgets, bool operator_set = false) const;

  // Changes with every change of the inventory; 0 before the first Update().
  uint64_t version() const;

  // What the engine reports running on each node: replaced by every pass's
  // bulk list (this instance's tasks; those not finished -- created or
  // running -- and placed on a node count). Does not change version(): it
  // is shown (NodeUse), never planned with.
  void ObserveTasks(const ContainerList& containers);
  // Node id -> the jobs whose tasks live there, as of the last
  // ObserveTasks(); nullopt before the first.
  using LiveJobs = std::map<std::string, std::vector<std::string>>;
  std::optional<LiveJobs> live_jobs() const;

 private:
  const NodeBudgetsOptions options_;
  mutable absl::Mutex mu_;
  std::vector<v1::Node> nodes_ ABSL_GUARDED_BY(mu_);
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<LiveJobs> live_ ABSL_GUARDED_BY(mu_);
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_RECONCILE_NODE_BUDGETS_H_
