#include "tools/plan/memory.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "planner/convert/convert.h"

namespace berth {
namespace plan {

void MemoryFromProto(const v1::PlannerMemory& proto, const planner::SimInput& sim,
                     planner::PlannerMemory* out, std::vector<std::string>* problems) {
  *out = {};
  const std::string& holder = proto.reservation_holder();
  if (!holder.empty()) {
    const auto it = std::find_if(sim.jobs.begin(), sim.jobs.end(),
                                 [&holder](const planner::SimJob& j) { return j.job.id == holder; });
    if (it == sim.jobs.end()) {
      problems->push_back(absl::StrCat("plannerMemory.reservationHolder '", holder,
                                       "' is not a job of the workload's jobs"));
    } else if (it->arrival_offset > absl::ZeroDuration()) {
      problems->push_back(absl::StrCat("plannerMemory.reservationHolder '", holder,
                                       "' is not queued at startTime (its arrivalOffset is ",
                                       absl::FormatDuration(it->arrival_offset), ")"));
    }
    out->reservation_holder = holder;
  }
  if (proto.has_reservation_promised()) {
    if (holder.empty()) {
      problems->push_back("plannerMemory.reservationPromised is set without a reservationHolder");
    }
    out->reservation_promised = planner::FromProto(proto.reservation_promised());
  }
  for (int i = 0; i < proto.workspace_turns_size(); ++i) {
    const std::string& ws = proto.workspace_turns(i).workspace();
    const uint64_t turn = proto.workspace_turns(i).turn();
    if (ws.empty()) {
      problems->push_back(
          absl::StrCat("plannerMemory.workspaceTurns[", i, "].workspace is empty"));
    } else if (turn == 0) {
      problems->push_back(absl::StrCat("plannerMemory.workspaceTurns[", i, "] '", ws,
                                       "': turn must be > 0 (turns count from 1)"));
    } else if (!out->workspace_turns.emplace(ws, turn).second) {
      problems->push_back(absl::StrCat("plannerMemory.workspaceTurns[", i, "] '", ws,
                                       "' is listed twice"));
    }
  }
  if (proto.has_top_priority_seen()) {
    const absl::Time seen = planner::FromProto(proto.top_priority_seen());
    if (seen > sim.start) {
      problems->push_back(absl::StrCat("plannerMemory.topPrioritySeen ", absl::FormatTime(seen),
                                       " is after startTime ", absl::FormatTime(sim.start)));
    }
    out->top_priority = proto.top_priority();
    out->top_priority_seen = seen;
  } else if (proto.top_priority() != 0) {
    problems->push_back(absl::StrCat("plannerMemory.topPriority ", proto.top_priority(),
                                     " is given without topPrioritySeen (when it was last queued)"));
  }
}

}  // namespace plan
}  // namespace berth
