#include "planner/explain/explain_rejection.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "planner/base/units.h"
#include "planner/explain/explain_nodes.h"

namespace berth::planner::internal {

std::string Amount(Dimension d, int64_t v, Rounding r) {
  switch (d) {
    case Dimension::kMemory: return FormatBytes(v, r);
    case Dimension::kCpu: return FormatCpu(v, r);
    default: return absl::StrCat(v);
  }
}

std::string Rejection(const State& state, const PlanResult& r, size_t index,
                      bool detailed) {
  const Decision& d = r.decisions[index];
  const QueuedJob& job = state.queued[d.job];
  if (const NodePlacement* p = PlacementOf(r, index);
      p != nullptr && p->on_node && d.problem == Problem::kExceedsBudget) {
    return NodeNeverFitsText(r, d, *p);
  }
  switch (d.problem) {
    case Problem::kInvalidResources:
      return absl::StrCat(d.dimension == Dimension::kMemory ? "memory" : "cpu",
                          " estimate must be > 0 (is ", d.needed, ")");
    case Problem::kExceedsBudget:
      if (d.dimension == Dimension::kWorkerSlots)
        return "max_workers is 0: no job can run";
      return absl::StrCat("needs ", Amount(d.dimension, d.needed), " ",
                          d.dimension == Dimension::kMemory ? "memory" : "cpu",
                          ", more than the whole budget of ",
                          Amount(d.dimension, d.capacity));
    case Problem::kUnknownPool:
      return absl::StrCat("pool '", job.pool, "' has no budget");
    case Problem::kDuplicateId:
      return absl::StrCat("id '", job.id, "' is used by more than one job");
    case Problem::kUnknownDependency: {
      if (!detailed) return "depends on an unknown job";
      std::vector<std::string> unknown;
      for (const std::string& dep : job.depends_on) {
        bool known = state.finished.contains(dep);
        for (size_t i = 0; !known && i < state.running.size(); ++i)
          known = state.running[i].id == dep;
        for (size_t i = 0; !known && i < state.queued.size(); ++i)
          known = state.queued[i].id == dep;
        if (!known) unknown.push_back(dep);
      }
      return absl::StrCat("depends on unknown job(s) ",
                          absl::StrJoin(unknown, ", "));
    }
    case Problem::kDependencyCycle:
      return "its dependencies form a cycle";
    case Problem::kDependencyFailed: {
      std::vector<std::string> failed;
      for (const std::string& dep : job.depends_on) {
        auto it = state.finished.find(dep);
        if (it != state.finished.end() && it->second == DependencyOutcome::kFailed)
          failed.push_back(dep);
      }
      return absl::StrCat("dependency ", absl::StrJoin(failed, ", "),
                          " did not succeed");
    }
    case Problem::kDependencyRejected: {
      std::vector<std::string> rejected;
      for (const Decision& other : r.decisions) {
        const std::string& id = state.queued[other.job].id;
        if (other.verdict == Verdict::kReject &&
            std::find(job.depends_on.begin(), job.depends_on.end(), id) !=
                job.depends_on.end()) {
          rejected.push_back(id);
        }
      }
      if (rejected.empty()) return "a dependency was rejected and will never run";
      return absl::StrCat("dependency ", absl::StrJoin(rejected, ", "),
                          " was rejected and will never run");
    }
    case Problem::kNone:
      break;
  }
  return "rejected";
}

}  // namespace berth::planner::internal
