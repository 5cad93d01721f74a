// How an IncrementalPlanner's plan differs from the whole-queue Plan() of
// the same state, for the differential tests: each function returns "" when
// the plans agree as the form promises, else the first difference found.
// Test-only.
#ifndef BERTH_PLANNER_PLAN_INCREMENTAL_COMPARE_TESTING_H_
#define BERTH_PLANNER_PLAN_INCREMENTAL_COMPARE_TESTING_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "planner/plan/incremental.h"
#include "planner/plan/plan.h"

namespace berth::planner::testing {

inline std::string Describe(const Decision& d) {
  return absl::StrCat("job=", d.job, " verdict=", static_cast<int>(d.verdict),
                      " reason=", static_cast<int>(d.reason), " problem=",
                      static_cast<int>(d.problem), " dim=", static_cast<int>(d.dimension),
                      " reserved=", d.reserved, " ahead=", d.jobs_ahead, " needed=", d.needed,
                      " free=", d.free, " cap=", d.capacity, " fits=", d.fits_memory_bytes,
                      "/", d.fits_cpu_millis);
}

inline bool Same(const Decision& a, const Decision& b) { return Describe(a) == Describe(b); }

// Returns "" if equal, else the first difference.
inline std::string Compare(const PlanResult& want, const PlanResult& got) {
  if (want.decisions.size() != got.decisions.size())
    return absl::StrCat("decisions ", want.decisions.size(), " vs ", got.decisions.size());
  for (size_t k = 0; k < want.decisions.size(); ++k) {
    if (!Same(want.decisions[k], got.decisions[k]))
      return absl::StrCat("decision ", k, ": want ", Describe(want.decisions[k]), " got ",
                          Describe(got.decisions[k]));
  }
  if (want.admitted_count != got.admitted_count) return "admitted_count";
  if (want.reserved_decision != got.reserved_decision)
    return absl::StrCat("reserved_decision ", want.reserved_decision, " vs ",
                        got.reserved_decision);
  if (want.reservation_start != got.reservation_start) return "reservation_start";
  if (!(want.used_before == got.used_before)) return "used_before";
  if (!(want.used_after == got.used_after)) return "used_after";
  if (want.pending_dependencies.size() != got.pending_dependencies.size())
    return "pending_dependencies size";
  for (size_t i = 0; i < want.pending_dependencies.size(); ++i) {
    if (want.pending_dependencies[i].decision != got.pending_dependencies[i].decision ||
        want.pending_dependencies[i].position != got.pending_dependencies[i].position)
      return "pending_dependencies";
  }
  if (want.aging_ceiling != got.aging_ceiling) return "aging_ceiling";
  if (want.queued_top_priority != got.queued_top_priority) return "queued_top_priority";
  if (want.workspaces != got.workspaces) return "workspaces";
  if (want.pools != got.pools) return "pools";
  if (want.free_after.memory_bytes != got.free_after.memory_bytes ||
      want.free_after.cpu_millis != got.free_after.cpu_millis ||
      want.free_after.worker_slots != got.free_after.worker_slots)
    return "free_after";
  if (want.pool_free_after != got.pool_free_after) return "pool_free_after";
  if (want.workspace_free_after != got.workspace_free_after) return "workspace_free_after";
  if (want.timeline.size() != got.timeline.size()) return "timeline";
  return "";
}

// The prefix-only plan: the prefix equals the whole plan's, every other
// decision is the tail's (or a dependency wait).
inline std::string ComparePrefix(const PlanResult& want, const PlanResult& got,
                          const IncrementalPlanner& ip) {
  if (ip.last_was_whole_queue()) return Compare(want, got);
  if (got.decisions.size() > want.decisions.size()) return "prefix longer than the plan";
  for (size_t k = 0; k < got.decisions.size(); ++k) {
    if (!Same(want.decisions[k], got.decisions[k])) return absl::StrCat("prefix ", k);
  }
  for (size_t k = got.decisions.size(); k < want.decisions.size(); ++k) {
    const Decision& d = want.decisions[k];
    Decision t = ip.tail_decision();
    t.job = d.job;
    t.jobs_ahead = static_cast<uint32_t>(k);
    if (ip.dependency_pending(d.job)) {
      if (d.reason != Reason::kWaitingForDependencies) return absl::StrCat("tail dep ", k);
    } else if (!Same(d, t)) {
      return absl::StrCat("tail ", k, ": want ", Describe(d), " got ", Describe(t));
    }
  }
  if (want.reserved_decision != got.reserved_decision) return "prefix reservation";
  if (want.reservation_start != got.reservation_start) return "prefix reservation start";
  if (want.admitted_count != got.admitted_count) return "prefix admitted_count";
  if (!(want.used_after == got.used_after)) return "prefix used_after";
  return "";
}

// kPrefixFree: the prefix equals the whole plan's, every other job waits
// for its dependencies or for TailReason() of what the prefix left free.
// Counts in `free_tails` the tail jobs given a reason other than a worker
// slot's.
inline std::string ComparePrefixFree(const PlanResult& want, const PlanResult& got,
                              const IncrementalPlanner& ip, int64_t& free_tails) {
  if (ip.last_was_whole_queue()) return Compare(want, got);
  if (got.decisions.size() > want.decisions.size()) return "prefix longer than the plan";
  for (size_t k = 0; k < got.decisions.size(); ++k) {
    if (!Same(want.decisions[k], got.decisions[k])) return absl::StrCat("prefix ", k);
  }
  auto free_of = [](const std::vector<std::string>& names, const std::vector<int64_t>& free,
                    const std::string& name) {
    const auto it = std::find(names.begin(), names.end(), name);
    return it == names.end() ? Amounts::kUnlimited : free[it - names.begin()];
  };
  for (size_t k = got.decisions.size(); k < want.decisions.size(); ++k) {
    const Decision& d = want.decisions[k];
    const QueuedJob& q = ip.state().queued[d.job];
    const Reason r = ip.dependency_pending(d.job)
                         ? Reason::kWaitingForDependencies
                         : IncrementalPlanner::TailReason(
                               got.free_after, free_of(got.pools, got.pool_free_after, q.pool),
                               free_of(got.workspaces, got.workspace_free_after, q.workspace),
                               q.resources.memory_bytes, q.resources.cpu_millis);
    if (d.verdict != Verdict::kWait || d.reason != r)
      return absl::StrCat("tail ", k, ": want ", Describe(d), " got reason ", static_cast<int>(r));
    if (r != Reason::kWaitingForWorkerSlot) ++free_tails;
  }
  if (want.reserved_decision != got.reserved_decision) return "prefix reservation";
  if (want.admitted_count != got.admitted_count) return "prefix admitted_count";
  if (!(want.used_after == got.used_after)) return "prefix used_after";
  return "";
}

// The admissions-only plan: each decision equals the whole plan's decision
// of its rank (jobs_ahead; ranks increase, some passed over under "fifo"),
// the reserved and every admitted decision are among them, and every
// decision of the whole plan not among them is a wait without the
// reservation.
inline std::string CompareAdmissions(const PlanResult& want, const PlanResult& got,
                              const IncrementalPlanner& ip) {
  if (ip.last_was_whole_queue()) return Compare(want, got);
  std::vector<bool> seen(want.decisions.size(), false);
  for (size_t i = 0; i < got.decisions.size(); ++i) {
    const Decision& g = got.decisions[i];
    const size_t r = g.jobs_ahead;
    if (r >= want.decisions.size()) return absl::StrCat("decision ", i, " ranked beyond the plan");
    if (i > 0 && r <= got.decisions[i - 1].jobs_ahead)
      return absl::StrCat("decision ", i, ": ranks not increasing");
    if (!Same(want.decisions[r], g))
      return absl::StrCat("decision ", i, " (rank ", r, "): want ", Describe(want.decisions[r]),
                          " got ", Describe(g));
    seen[r] = true;
  }
  for (size_t k = 0; k < want.decisions.size(); ++k) {
    if (seen[k]) continue;
    if (want.decisions[k].verdict != Verdict::kWait || want.decisions[k].reserved)
      return absl::StrCat("not decided, rank ", k, ": ", Describe(want.decisions[k]));
  }
  if ((want.reserved_decision < 0) != (got.reserved_decision < 0)) return "reservation";
  if (got.reserved_decision >= 0 &&
      got.decisions[static_cast<size_t>(got.reserved_decision)].jobs_ahead !=
          static_cast<uint32_t>(want.reserved_decision))
    return "reservation's rank";
  if (want.reservation_start != got.reservation_start) return "reservation start";
  if (want.admitted_count != got.admitted_count) return "admitted_count";
  if (!(want.used_after == got.used_after)) return "used_after";
  // Pending dependencies: exactly the whole plan's of the decisions given.
  std::vector<std::pair<uint32_t, uint32_t>> want_pending, got_pending;
  for (const PendingDependency& pd : want.pending_dependencies) {
    if (seen[pd.decision]) want_pending.emplace_back(pd.decision, pd.position);
  }
  for (const PendingDependency& pd : got.pending_dependencies) {
    if (pd.decision >= got.decisions.size()) return "pending dependency beyond the decisions";
    got_pending.emplace_back(got.decisions[pd.decision].jobs_ahead, pd.position);
  }
  if (want_pending != got_pending) return "pending_dependencies";
  return "";
}

}  // namespace berth::planner::testing

#endif  // BERTH_PLANNER_PLAN_INCREMENTAL_COMPARE_TESTING_H_
