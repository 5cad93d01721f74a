// NodeFit: whether a job fits one node of a node inventory (Budgets.nodes)
// that may run its pool, answered per job without scanning the nodes. Built
// once per snapshot (O(nodes log nodes)); then per job O(1) when the node
// with the most memory also has the cpu (or the job exceeds the group's
// largest memory or cpu), else O(log nodes) over the group's nodes sorted by
// memory with a running maximum of cpu. Same answer and message as a scan
// (node_fit_test.cc checks both against one on random inventories).
//
// Pools and nodes: a node labelled pool=<name> (planner/model/model.h kPoolLabel)
// runs only that pool's jobs, and a pool with such nodes runs only there;
// other pools run on the unlabelled nodes. Nodes with memory or cpu <= 0 run
// nothing.
//
// Thread-safe after construction (const).
#ifndef BERTH_SERVER_INGEST_NODE_FIT_H_
#define BERTH_SERVER_INGEST_NODE_FIT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "berth/v1/budgets.pb.h"
#include "berth/v1/job.pb.h"

namespace berth {

class NodeFit {
 public:
  // `nodes` may be in any order; they are copied.
  explicit NodeFit(const std::vector<v1::Node>& nodes);

  // nullopt if some node that may run the job's pool has its memory and cpu;
  // else why not, naming the group's largest node (by memory, ties by id),
  // the group's totals and what would fit there:
  //   "needs 48 GiB memory and 2 cores, more than any node has: the largest
  //    is node-b (40 GiB memory, 8 cores), 72 GiB memory and 16 cores in the
  //    cluster. Fits on node-b if memory estimate <= 40 GiB"
  // or "no node may run pool 'x'" when its group has no usable node.
  std::optional<std::string> Check(const v1::JobSpec& job) const;

 private:
  struct Group {
    // Usable nodes by memory (descending, ties by id) and, for each prefix,
    // the most cpu in it.
    std::vector<v1::Node> by_memory;
    std::vector<int64_t> prefix_max_cpu;
    int64_t total_memory = 0;
    int64_t total_cpu = 0;
  };
  // Group of label value (pool name); "" = the unlabelled nodes.
  absl::flat_hash_map<std::string, Group> groups_;
};

}  // namespace berth

#endif  // BERTH_SERVER_INGEST_NODE_FIT_H_
