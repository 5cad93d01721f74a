#include "planner/explain/explain.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "planner/base/units.h"
#include "planner/explain/explain_nodes.h"
#include "planner/explain/explain_rejection.h"
#include "planner/plan/prepare.h"

namespace berth::planner {
namespace {

using internal::NodeId;
using internal::NodeName;
using internal::NodeNeverFitsText;
using internal::NodeShortText;
using internal::PlacementOf;
using internal::Amount;
using internal::Rejection;

// "24/24 in use" for slot dimensions. Running jobs above a limit lowered
// below them (free < 0) are said so, never as "3/1 in use".
std::string InUse(const Decision& d) {
  if (d.capacity == Amounts::kUnlimited) return "no limit";
  if (d.free < 0) {
    return absl::StrCat(d.capacity - d.free, " running, above the limit of ", d.capacity,
                        " (set below what already runs): a slot frees when ",
                        d.needed - d.free, " of them have ended");
  }
  return absl::StrCat(d.capacity - d.free, "/", d.capacity, " in use");
}

// "6 GiB free of 128 GiB" for memory and cpu; when running jobs hold more
// than a budget lowered below them (free < 0), what they hold and that none
// is free, never "-15 cores free".
std::string FreeOf(const Decision& d) {
  if (d.free >= 0) {
    return absl::StrCat(Amount(d.dimension, d.free), " free of ", Amount(d.dimension, d.capacity));
  }
  return absl::StrCat("none free: running jobs hold ", Amount(d.dimension, d.capacity - d.free),
                      ", above the budget of ", Amount(d.dimension, d.capacity),
                      " (set below what already runs)");
}

// For a wait for priority with a binding dimension: what the reservation
// leaves spare at its start, which the job (still running then) would need.
std::string SpareAtReservation(const Decision& d) {
  if (d.dimension == Dimension::kUnspecified || d.shortfall() <= 0) return "";
  const char* what = d.dimension == Dimension::kMemory ? " memory"
                     : d.dimension == Dimension::kCpu  ? ""
                                                       : " slots";
  return absl::StrCat(" (it would still run then and needs ", Amount(d.dimension, d.needed),
                      what, "; the reservation leaves ", Amount(d.dimension, std::max<int64_t>(0, d.free)),
                      " spare)");
}

// `prefix` and the operator's reason for `pool`'s maintenance, or "" if
// none was given.
std::string MaintenanceReason(const State& state, const std::string& pool,
                              absl::string_view prefix) {
  auto it = state.maintenance_reasons.find(pool);
  if (it == state.maintenance_reasons.end() || it->second.empty()) return "";
  return absl::StrCat(prefix, it->second);
}

const std::string& ReservedJobId(const State& state, const PlanResult& r) {
  static const std::string* const kNone = new std::string("?");
  if (r.reserved_decision < 0) return *kNone;
  return state.queued[r.decisions[r.reserved_decision].job].id;
}

size_t NameIndex(const std::vector<std::string>& names, const std::string& n) {
  return static_cast<size_t>(std::lower_bound(names.begin(), names.end(), n) -
                             names.begin());
}

std::vector<std::string> Pending(const State& state, const PlanResult& r,
                                 size_t index) {
  std::vector<std::string> out;
  auto it = std::lower_bound(
      r.pending_dependencies.begin(), r.pending_dependencies.end(), index,
      [](const PendingDependency& p, size_t k) { return p.decision < k; });
  const QueuedJob& job = state.queued[r.decisions[index].job];
  for (; it != r.pending_dependencies.end() && it->decision == index; ++it) {
    out.push_back(job.depends_on[it->position]);
  }
  return out;
}

}  // namespace

std::optional<Shortfall> ShortfallOf(const Decision& d) {
  if (d.dimension == Dimension::kUnspecified) return std::nullopt;
  return Shortfall{d.dimension, d.needed, d.free, d.capacity, d.shortfall()};
}

std::optional<Suggestion> SuggestionOf(const State& state,
                                       const PlanResult& result, size_t index) {
  const Decision& d = result.decisions[index];
  const QueuedJob& job = state.queued[d.job];
  Suggestion s;
  switch (d.reason) {
    case Reason::kWaitingForMemory:
    case Reason::kWaitingForCpu:
    case Reason::kWaitingForPriority:
    case Reason::kNeverFits: {
      if (d.reason == Reason::kNeverFits && d.problem != Problem::kExceedsBudget)
        return std::nullopt;
      if (d.fits_memory_bytes == Decision::kNoFit ||
          d.fits_cpu_millis == Decision::kNoFit)
        return std::nullopt;
      const bool mem = d.fits_memory_bytes < job.resources.memory_bytes;
      const bool cpu = d.fits_cpu_millis < job.resources.cpu_millis;
      if ((!mem && !cpu) || (mem && d.fits_memory_bytes <= 0) ||
          (cpu && d.fits_cpu_millis <= 0))
        return std::nullopt;
      std::string when = d.reason == Reason::kNeverFits ? "fits the budget if "
                                                         : "fits now if ";
      if (const NodePlacement* p = PlacementOf(result, index); p != nullptr) {
        // Where it would fit: the node the counterfactual was bounded by
        // (a node of its pool with that much free now), else the short one.
        const int32_t node = d.reason != Reason::kNeverFits && p->fits_node >= 0
                                 ? p->fits_node
                                 : (p->on_node ? p->short_node : -1);
        if (node >= 0) {
          when = absl::StrCat(d.reason == Reason::kNeverFits ? "fits on " : "fits now on ",
                              NodeName(result, node), " if ");
        }
      }
      std::vector<std::string> parts;
      if (mem) {
        parts.push_back(absl::StrCat(
            "memory estimate <= ",
            FormatBytes(d.fits_memory_bytes, Rounding::kDown)));
      }
      if (cpu) {
        parts.push_back(absl::StrCat(
            "cpu estimate <= ", FormatCpu(d.fits_cpu_millis, Rounding::kDown)));
      }
      s.text = absl::StrCat(when, absl::StrJoin(parts, " and "));
      s.dimension = mem ? Dimension::kMemory : Dimension::kCpu;
      s.fits_if_at_most = mem ? d.fits_memory_bytes : d.fits_cpu_millis;
      return s;
    }
    case Reason::kWaitingForWorkerSlot:
      s.text = absl::StrCat("needs a worker slot: ", InUse(d));
      break;
    case Reason::kWaitingForPoolSlot:
      s.text = absl::StrCat("needs a slot in pool '", job.pool, "': ", InUse(d));
      break;
    case Reason::kWaitingForWorkspaceCap:
      s.text = absl::StrCat("needs a slot of workspace '", job.workspace,
                            "': ", InUse(d));
      break;
    default:
      return std::nullopt;
  }
  s.dimension = d.dimension;
  s.fits_if_at_most = 0;
  return s;
}

std::string DecisionSummary(const State& state, const PlanResult& result,
                            size_t index) {
  const Decision& d = result.decisions[index];
  const QueuedJob& job = state.queued[d.job];
  switch (d.reason) {
    case Reason::kAdmitted:
      if (const NodePlacement* p = PlacementOf(result, index); p != nullptr)
        return absl::StrCat("admitted on ", NodeName(result, p->node));
      return "admitted";
    case Reason::kWaitingForMemory:
    case Reason::kWaitingForCpu:
      if (const NodePlacement* p = PlacementOf(result, index);
          p != nullptr && p->on_node)
        return NodeShortText(result, d, *p);
      return absl::StrCat("needs ", Amount(d.dimension, d.needed), " ",
                          d.dimension == Dimension::kMemory ? "memory" : "cpu",
                          ", ", FreeOf(d));
    case Reason::kWaitingForWorkerSlot:
      if (const NodePlacement* p = PlacementOf(result, index);
          p != nullptr && p->on_node)
        return NodeShortText(result, d, *p);
      return SuggestionOf(state, result, index)->text;
    case Reason::kWaitingForPoolSlot:
    case Reason::kWaitingForWorkspaceCap:
      return SuggestionOf(state, result, index)->text;
    case Reason::kWaitingForDependencies:
      return absl::StrCat("waiting for ",
                          absl::StrJoin(Pending(state, result, index), ", "));
    case Reason::kWaitingForPriority:
      // "Fits" is what is free now; the shortfall (if any) is of what the
      // reservation leaves spare when it starts.
      return absl::StrCat("fits what is free now, but would delay the reservation of ",
                          ReservedJobId(state, result), SpareAtReservation(d));
    case Reason::kPaused:
      // Resuming alone would not start a job whose pool is in maintenance.
      return state.pools_in_maintenance.contains(job.pool)
                 ? absl::StrCat("admission paused; pool '", job.pool, "' in maintenance",
                                MaintenanceReason(state, job.pool, ": "))
                 : "admission paused";
    case Reason::kPoolInMaintenance:
      return absl::StrCat("pool '", job.pool, "' in maintenance",
                          MaintenanceReason(state, job.pool, ": "));
    case Reason::kNeverFits:
    case Reason::kDependencyFailed:
      return Rejection(state, result, index, /*detailed=*/false);
    case Reason::kUnspecified:
      break;
  }
  return "";
}

namespace {

// Explain() given the projected start (unused for a rejected job).
Explanation ExplainWith(const State& state, const PlanResult& result, size_t index,
                        const StartEstimate& projected, const ExplainOptions& options) {
  const Decision& d = result.decisions[index];
  const QueuedJob& job = state.queued[d.job];
  Explanation e;
  e.job_id = job.id;
  e.verdict = d.verdict;
  e.reason = d.reason;
  e.problem = d.problem;
  e.queue_position = static_cast<int32_t>(index + 1);
  e.jobs_ahead = static_cast<int32_t>(d.jobs_ahead);
  for (size_t k = 0; k < index && static_cast<int>(e.ahead_job_ids.size()) <
                                      options.max_ahead_ids;
       ++k) {
    if (result.decisions[k].verdict != Verdict::kReject)
      e.ahead_job_ids.push_back(state.queued[result.decisions[k].job].id);
  }
  e.shortfall = ShortfallOf(d);
  e.pending_dependencies = Pending(state, result, index);
  e.smallest_change = SuggestionOf(state, result, index);
  const NodePlacement* place = PlacementOf(result, index);
  if (place != nullptr) {
    e.node = NodeId(result, place->node);
    e.on_node = place->on_node;
    e.short_node = NodeId(result, place->short_node);
    e.cluster_free = place->cluster_free;
  }

  // Estimated start.
  switch (d.reason) {
    case Reason::kAdmitted:
      e.estimated_start = result.now;
      break;
    case Reason::kWaitingForMemory:
    case Reason::kWaitingForCpu:
    case Reason::kWaitingForWorkerSlot:
    case Reason::kWaitingForPoolSlot:
    case Reason::kWaitingForWorkspaceCap:
    case Reason::kWaitingForPriority:
      if (d.reserved) {
        e.estimated_start = result.reservation_start;
        if (state.reservation_holder == job.id &&
            state.reservation_promised < result.reservation_start) {
          e.first_promised_start = state.reservation_promised;
        }
      } else {
        const size_t pool = NameIndex(result.pools, job.pool);
        const size_t ws = NameIndex(result.workspaces, job.workspace);
        Amounts free = result.free_after;
        free.pool_slots = pool < result.pool_free_after.size()
                              ? result.pool_free_after[pool]
                              : Amounts::kUnlimited;
        free.workspace_slots = ws < result.workspace_free_after.size()
                                   ? result.workspace_free_after[ws]
                                   : Amounts::kUnlimited;
        const Amounts need{job.resources.memory_bytes, job.resources.cpu_millis,
                           1, 1, 1};
        Timeline timeline = result.timeline;
        absl::Time next_change = absl::InfiniteFuture();
        timeline.ForEachRelease([&](absl::Time end, int64_t, int64_t, uint32_t,
                                    uint32_t) {
          next_change = std::min(next_change, end);
        });
        e.estimated_start = std::max(
            timeline.EarliestFit(result.now, free, need,
                                 static_cast<Timeline::Key>(pool),
                                 static_cast<Timeline::Key>(ws)),
            std::max(next_change, result.now));
        e.estimate_is_lower_bound = true;
      }
      break;
    default:
      break;
  }
  if (d.verdict != Verdict::kReject) e.projected = projected;
  e.aging_boost = static_cast<int64_t>(EffectivePriority(job, result)) - job.priority;

  // Sentences.
  std::string first;
  const bool node_short = place != nullptr && place->on_node &&
                          d.verdict == Verdict::kWait &&
                          d.reason != Reason::kWaitingForPriority;
  if (node_short) {
    const std::string text = NodeShortText(result, d, *place);
    first = absl::StrCat(d.dimension == Dimension::kMemory ? "Waiting for memory: "
                         : d.dimension == Dimension::kCpu  ? "Waiting for CPU: "
                                                           : "Waiting for a worker slot: ",
                         text, ".");
  } else if (d.reason == Reason::kAdmitted && place != nullptr) {
    first = absl::StrCat("Admitted: starts now on ", NodeName(result, place->node), ".");
  } else {
    switch (d.reason) {
      case Reason::kAdmitted:
        first = "Admitted: starts now.";
        break;
      case Reason::kWaitingForMemory:
        first = absl::StrCat("Waiting for memory: needs ", FormatBytes(d.needed),
                             ", ", FreeOf(d), ".");
        break;
      case Reason::kWaitingForCpu:
        first = absl::StrCat("Waiting for CPU: needs ", FormatCpu(d.needed), ", ", FreeOf(d),
                             ".");
        break;
      case Reason::kWaitingForWorkerSlot:
        first = absl::StrCat("Waiting for a worker slot: ", InUse(d), ".");
        break;
      case Reason::kWaitingForPoolSlot:
        first = absl::StrCat("Waiting for a slot in pool '", job.pool, "': ",
                             InUse(d), ".");
        break;
      case Reason::kWaitingForWorkspaceCap:
        first = absl::StrCat("Waiting for workspace '", job.workspace,
                             "' to run fewer jobs: ", InUse(d), ".");
        break;
      case Reason::kWaitingForDependencies:
        first = absl::StrCat("Waiting for dependencies: ",
                             absl::StrJoin(e.pending_dependencies, ", "), ".");
        break;
      case Reason::kWaitingForPriority:
        first = absl::StrCat(
            "Waiting for priority: it fits what is free now, but starting it would delay ",
            ReservedJobId(state, result), ", reserved to start around ",
            FormatTimeUtc(result.reservation_start), SpareAtReservation(d), ".");
        break;
      case Reason::kPaused:
        first = state.pause_reason.empty()
                    ? std::string("Admission is paused.")
                    : absl::StrCat("Admission is paused: ", state.pause_reason, ".");
        if (state.pools_in_maintenance.contains(job.pool)) {
          // Resuming alone would not start it.
          absl::StrAppend(&first, " Pool ", job.pool, " is in maintenance",
                          MaintenanceReason(state, job.pool, ": "), " as well.");
        }
        break;
      case Reason::kPoolInMaintenance:
        first = absl::StrCat("Pool ", job.pool, " is in maintenance",
                             MaintenanceReason(state, job.pool, ": "), ".");
        break;
      case Reason::kNeverFits:
        first = absl::StrCat("Never fits: ", Rejection(state, result, index, true), ".");
        break;
      case Reason::kDependencyFailed:
        first = absl::StrCat("Will not run: ", Rejection(state, result, index, true), ".");
        break;
      case Reason::kUnspecified:
        break;
    }
  }
  std::vector<std::string> sentences = {first};
  if (d.verdict == Verdict::kWait && d.jobs_ahead > 0) {
    sentences.push_back(absl::StrCat(d.jobs_ahead, " higher-ranked job",
                                     d.jobs_ahead == 1 ? "" : "s", " ahead."));
  }
  if (d.verdict == Verdict::kWait &&
      e.estimated_start != absl::InfiniteFuture()) {
    sentences.push_back(absl::StrCat(
        d.reserved ? "Reserved to start by " : "Not expected to start before ",
        FormatTimeUtc(e.estimated_start),
        d.reserved && !e.node.empty()
            ? absl::StrCat(" on ", NodeName(result, place->node))
            : "",
        e.first_promised_start == absl::InfiniteFuture()
            ? ""
            : absl::StrCat(e.first_promised_start <= result.now ? ", overdue (was "
                                                                : ", later than first promised (",
                           FormatTimeUtc(e.first_promised_start), ")"),
        "."));
  }
  if (d.verdict == Verdict::kWait &&
      e.projected.kind == EtaKind::kIfEstimatesHold) {
    sentences.push_back(absl::StrCat(
        "Expected to start around ", FormatTimeUtc(e.projected.time),
        e.projected.node >= 0 ? absl::StrCat(" on ", NodeName(result, e.projected.node)) : "",
        " if estimates hold."));
  }
  if (d.verdict == Verdict::kWait &&
      e.projected.kind == EtaKind::kBeyondForecast) {
    sentences.push_back(absl::StrCat(
        "Not started within the start forecast, which covers until ",
        FormatTimeUtc(e.projected.time), ": expected later than that."));
  }
  if (e.aging_boost > 0) {
    sentences.push_back(absl::StrCat(
        "Aged: waiting since ", FormatTimeUtc(internal::WaitingSince(job)),
        ", ranked as priority ", job.priority + e.aging_boost,
        ", after the jobs whose own priority that is (its own is ", job.priority, ")."));
  }
  if (e.smallest_change) {
    std::string text = e.smallest_change->text;
    text[0] = absl::ascii_toupper(text[0]);
    sentences.push_back(absl::StrCat(text, "."));
  }
  e.summary = absl::StrJoin(sentences, " ");
  return e;
}

}  // namespace

Explanation Explain(const State& state, const Budgets& budgets, const Policy& policy,
                    const PlanResult& result, size_t index,
                    const ExplainOptions& options) {
  const StartEstimate projected = result.decisions[index].verdict != Verdict::kReject
                                      ? EstimateStarts(state, budgets, policy, result)[index]
                                      : StartEstimate{};
  return ExplainWith(state, result, index, projected, options);
}

Explanation Explain(const State& state, const Budgets& budgets,
                    const PlanResult& result, size_t index,
                    const StartEstimateTable& estimates,
                    const ExplainOptions& options) {
  (void)budgets;
  return ExplainWith(state, result, index, estimates[index], options);
}

}  // namespace berth::planner
