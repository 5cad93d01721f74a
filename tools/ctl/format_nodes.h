// berthctl's per-node table (multi-node runtimes: Budgets.node_use in
// `budgets get|set`, Plan.node_use in `plan`).
#ifndef BERTH_TOOLS_CTL_FORMAT_NODES_H_
#define BERTH_TOOLS_CTL_FORMAT_NODES_H_

#include <ostream>
#include <string>

#include "berth/v1/budgets.pb.h"
#include "google/protobuf/repeated_field.h"

namespace berth::ctl {

// How a table names a node: its hostname; the id when it has none; and
// "<hostname> (<the id's first 12 characters>)" when `same_hostname` (how
// many listed nodes carry its hostname) is more than 1, so that nodes cloned
// with one hostname stay apart.
std::string NodeLabel(const v1::Node& node, int same_hostname);

// One row per node, named by NodeLabel:
//   NODE  MEMORY FOR JOBS  RESERVED  CPU FOR JOBS  RESERVED  JOBS  ENGINE  KEPT BACK
//   w1    192 MiB          128 MiB   1.5 cores     0.2 cores  2     2 tasks, 128 MiB  64 MiB, 0.5 cores
// ENGINE is what the engine reported live there at berthd's last look ("-"
// before it). Prints nothing for an empty list (one host).
void PrintNodeUse(const google::protobuf::RepeatedPtrField<v1::NodeUse>& nodes,
                  std::ostream& out);

}  // namespace berth::ctl

#endif  // BERTH_TOOLS_CTL_FORMAT_NODES_H_
