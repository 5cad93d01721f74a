#include "planner/testing/canonical.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace berth::planner {
namespace {

void AppendUsage(std::string& out, const char* name, const Usage& u) {
  absl::StrAppend(&out, name, "{mem=", u.memory_bytes, " cpu=", u.cpu_millis,
                  " workers=", u.workers, " pools=[");
  for (const auto& [pool, n] : u.pool_workers) absl::StrAppend(&out, pool, ":", n, ",");
  absl::StrAppend(&out, "]} ");
}

}  // namespace

std::string CanonicalString(const State& state, const PlanResult& r) {
  std::string out;
  absl::StrAppend(&out, "now=", absl::FormatTime(r.now), " admitted=",
                  r.admitted_count, " reserved=", r.reserved_decision,
                  " at=", absl::FormatTime(r.reservation_start), " ");
  AppendUsage(out, "before", r.used_before);
  AppendUsage(out, "after", r.used_after);
  out += "\n";
  size_t p = 0;
  std::vector<std::string> pending;
  for (size_t k = 0; k < r.decisions.size(); ++k) {
    const Decision& d = r.decisions[k];
    const QueuedJob& job = state.queued[d.job];
    pending.clear();
    for (; p < r.pending_dependencies.size() &&
           r.pending_dependencies[p].decision == k;
         ++p) {
      pending.push_back(job.depends_on[r.pending_dependencies[p].position]);
    }
    std::sort(pending.begin(), pending.end());
    absl::StrAppend(&out, k + 1, " ", job.id, " ", VerdictName(d.verdict), " ",
                    ReasonName(d.reason), " ", ProblemName(d.problem), " ",
                    DimensionName(d.dimension), " ", d.needed, "/", d.free,
                    "/", d.capacity, " fits=", d.fits_memory_bytes, ",",
                    d.fits_cpu_millis, d.reserved ? " R" : "", " ahead=",
                    d.jobs_ahead, " deps=[", absl::StrJoin(pending, ","), "]\n");
  }
  return out;
}

}  // namespace berth::planner
