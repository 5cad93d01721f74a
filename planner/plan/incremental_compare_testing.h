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

// Each decision's index in `plan` by its job (the jobs are distinct: a
// duplicate id is planned by the whole-queue planner).
inline std::vector<size_t> PositionsByJob(const PlanResult& plan) {
  std::vector<size_t> at(plan.decisions.size(), SIZE_MAX);
  for (size_t k = 0; k < plan.decisions.size(); ++k) {
    if (plan.decisions[k].job < at.size()) at[plan.decisions[k].job] = k;
  }
  return at;
}

// The rejections `got` ends with (IncrementalPlanner::appended_rejections):
// each is the whole plan's decision of its job but for jobs_ahead, which is
// at most the whole plan's. Marks their jobs in `appended` (by job).
inline std::string CompareAppended(const PlanResult& want, const PlanResult& got,
                                   const IncrementalPlanner& ip, std::vector<bool>& appended) {
  appended.assign(want.decisions.size(), false);
  const std::vector<size_t> at = PositionsByJob(want);
  const size_t n = ip.appended_rejections();
  if (n > got.decisions.size()) return "more appended rejections than decisions";
  for (size_t i = got.decisions.size() - n; i < got.decisions.size(); ++i) {
    Decision g = got.decisions[i];
    if (g.job >= at.size() || at[g.job] == SIZE_MAX) return "appended rejection of no job";
    const Decision& w = want.decisions[at[g.job]];
    if (g.verdict != Verdict::kReject || g.jobs_ahead > w.jobs_ahead)
      return absl::StrCat("appended ", i, ": ", Describe(g), " for ", Describe(w));
    g.jobs_ahead = w.jobs_ahead;
    if (!Same(w, g))
      return absl::StrCat("appended ", i, ": want ", Describe(w), " got ", Describe(g));
    appended[g.job] = true;
  }
  return "";
}

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
  std::vector<bool> appended;
  if (std::string d = CompareAppended(want, got, ip, appended); !d.empty()) return d;
  const size_t prefix = got.decisions.size() - ip.appended_rejections();
  for (size_t k = 0; k < prefix; ++k) {
    if (!Same(want.decisions[k], got.decisions[k])) return absl::StrCat("prefix ", k);
  }
  size_t rejected_before = 0;  // rejected jobs ranked before k
  for (size_t k = 0; k < prefix; ++k)
    rejected_before += want.decisions[k].verdict == Verdict::kReject;
  for (size_t k = prefix; k < want.decisions.size(); ++k) {
    const Decision& d = want.decisions[k];
    if (appended[d.job]) {
      ++rejected_before;
      continue;
    }
    Decision t = ip.tail_decision();
    t.job = d.job;
    t.jobs_ahead = static_cast<uint32_t>(k - rejected_before);
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
  std::vector<bool> appended;
  if (std::string d = CompareAppended(want, got, ip, appended); !d.empty()) return d;
  const size_t prefix = got.decisions.size() - ip.appended_rejections();
  for (size_t k = 0; k < prefix; ++k) {
    if (!Same(want.decisions[k], got.decisions[k])) return absl::StrCat("prefix ", k);
  }
  auto free_of = [](const std::vector<std::string>& names, const std::vector<int64_t>& free,
                    const std::string& name) {
    const auto it = std::find(names.begin(), names.end(), name);
    return it == names.end() ? Amounts::kUnlimited : free[it - names.begin()];
  };
  for (size_t k = prefix; k < want.decisions.size(); ++k) {
    const Decision& d = want.decisions[k];
    if (appended[d.job]) continue;
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
// of its job (their ranks increase, some passed over), the reserved and
// every admitted decision are among them, the appended rejections are the
// whole plan's (CompareAppended), and every decision of the whole plan not
// among them is a wait without the reservation.
inline std::string CompareAdmissions(const PlanResult& want, const PlanResult& got,
                              const IncrementalPlanner& ip) {
  if (ip.last_was_whole_queue()) return Compare(want, got);
  std::vector<bool> appended;
  if (std::string d = CompareAppended(want, got, ip, appended); !d.empty()) return d;
  const std::vector<size_t> at = PositionsByJob(want);
  std::vector<bool> seen(want.decisions.size(), false);
  for (size_t k = 0; k < want.decisions.size(); ++k) seen[k] = appended[want.decisions[k].job];
  const size_t ranked = got.decisions.size() - ip.appended_rejections();
  size_t last = 0;
  for (size_t i = 0; i < ranked; ++i) {
    const Decision& g = got.decisions[i];
    if (g.job >= at.size() || at[g.job] == SIZE_MAX)
      return absl::StrCat("decision ", i, " of a job the plan does not have");
    const size_t r = at[g.job];
    if (i > 0 && r <= last) return absl::StrCat("decision ", i, ": ranks not increasing");
    last = r;
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
      at[got.decisions[static_cast<size_t>(got.reserved_decision)].job] !=
          static_cast<size_t>(want.reserved_decision))
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
    got_pending.emplace_back(static_cast<uint32_t>(at[got.decisions[pd.decision].job]),
                             pd.position);
  }
  if (want_pending != got_pending) return "pending_dependencies";
  return "";
}

}  // namespace berth::planner::testing

#endif  // BERTH_PLANNER_PLAN_INCREMENTAL_COMPARE_TESTING_H_
