#include "tools/ctl/format_nodes.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "planner/base/units.h"
#include "tools/ctl/format.h"

namespace berth::ctl {

void PrintNodeUse(const google::protobuf::RepeatedPtrField<v1::NodeUse>& nodes,
                  std::ostream& out) {
  if (nodes.empty()) return;
  Table t({"NODE", "MEMORY FOR JOBS", "RESERVED", "CPU FOR JOBS", "RESERVED", "JOBS", "ENGINE",
           "KEPT BACK"});
  for (const v1::NodeUse& u : nodes) {
    const v1::Node& n = u.node();
    const std::string engine =
        u.observed() ? absl::StrCat(u.observed_jobs(), u.observed_jobs() == 1 ? " task, " : " tasks, ",
                                    FormatBytes(u.observed_memory_bytes()))
                     : "-";
    t.AddRow({n.hostname().empty() ? n.id() : n.hostname(), FormatBytes(n.memory_bytes()),
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
