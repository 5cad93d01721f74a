#include "tools/ctl/format_nodes.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "planner/base/units.h"
#include "tools/ctl/format.h"

namespace berth::ctl {
namespace {

// The first characters of a node id, as `docker node ls` users know ids.
constexpr size_t kShortIdLength = 12;

}  // namespace

std::string NodeLabel(const v1::Node& node, int same_hostname) {
  if (node.hostname().empty()) return node.id();
  if (same_hostname <= 1) return node.hostname();
  return absl::StrCat(node.hostname(), " (", node.id().substr(0, kShortIdLength), ")");
}

void PrintNodeUse(const google::protobuf::RepeatedPtrField<v1::NodeUse>& nodes,
                  std::ostream& out) {
  if (nodes.empty()) return;
  Table t({"NODE", "MEMORY FOR JOBS", "RESERVED", "CPU FOR JOBS", "RESERVED", "JOBS", "ENGINE",
           "KEPT BACK"});
  // Nodes may share a hostname (clones of one VM image): those get their id.
  absl::flat_hash_map<std::string, int> hostnames;
  for (const v1::NodeUse& u : nodes) ++hostnames[u.node().hostname()];
  for (const v1::NodeUse& u : nodes) {
    const v1::Node& n = u.node();
    const std::string engine =
        u.observed() ? absl::StrCat(u.observed_jobs(), u.observed_jobs() == 1 ? " task, " : " tasks, ",
                                    FormatBytes(u.observed_memory_bytes()))
                     : "-";
    t.AddRow({NodeLabel(n, hostnames[n.hostname()]), FormatBytes(n.memory_bytes()),
              FormatBytes(u.reserved_memory_bytes()), FormatCpu(n.cpu_millis()),
              FormatCpu(u.reserved_cpu_millis()),
              n.max_workers() > 0 ? absl::StrCat(u.jobs(), " of ", n.max_workers())
                                  : absl::StrCat(u.jobs()),
              engine,
              absl::StrCat(FormatBytes(n.reserve_memory_bytes()), ", ",
                           FormatCpu(n.reserve_cpu_millis()))});
  }
  t.Print(out);
}

}  // namespace berth::ctl
