#include "executor/usage/oom_requeue.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "executor/usage/usage_stats.h"
#include "planner/base/units.h"
#include "planner/convert/convert.h"
#include "planner/model/model.h"

namespace berth {
namespace {

constexpr int64_t kRoundTo = int64_t{256} << 20;

// The largest node that may run `pool` (0: none, or no inventory).
int64_t LargestNodeFor(const std::string& pool, const v1::Budgets& budgets) {
  bool dedicated = false;
  for (const v1::Node& n : budgets.nodes()) {
    auto label = n.labels().find(planner::kPoolLabel);
    dedicated |= label != n.labels().end() && label->second == pool;
  }
  int64_t largest = 0;
  for (const v1::Node& n : budgets.nodes()) {
    if (n.memory_bytes() <= 0 || n.cpu_millis() <= 0) continue;
    auto label = n.labels().find(planner::kPoolLabel);
    const bool runs = dedicated ? label != n.labels().end() && label->second == pool
                                : label == n.labels().end();
    if (runs) largest = std::max(largest, n.memory_bytes());
  }
  return largest;
}

}  // namespace

absl::StatusOr<OomRaise> RaiseAfterOom(const v1::Job& job, int64_t peak_memory_bytes,
                                       const v1::Budgets& budgets) {
  const int64_t current = planner::EffectiveMemoryBytes(job);
  if (job.raised_memory_bytes() > 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "it was already requeued once with a raised limit of ",
        FormatBytes(job.raised_memory_bytes())));
  }
  const double want = std::max(2.0 * static_cast<double>(current),
                               1.25 * static_cast<double>(peak_memory_bytes));
  int64_t raised = RoundUpBytes(want, kRoundTo);

  int64_t budget = budgets.memory_bytes();
  if (budget <= 0) {
    // The nodes' sum as the planner takes it: nodes without memory or cpu
    // count for nothing, and the sum saturates.
    budget = 0;
    for (const v1::Node& n : budgets.nodes()) {
      if (n.memory_bytes() <= 0 || n.cpu_millis() <= 0) continue;
      const int64_t room = std::numeric_limits<int64_t>::max() - budget;
      budget = n.memory_bytes() > room ? std::numeric_limits<int64_t>::max()
                                       : budget + n.memory_bytes();
    }
  }
  std::string capped_by;
  if (budget > 0 && raised > budget) {
    raised = budget;
    capped_by = absl::StrCat("the memory budget, ", FormatBytes(budget));
  }
  const std::string pool = job.spec().pool().empty() ? planner::kDefaultPool : job.spec().pool();
  const int64_t node = LargestNodeFor(pool, budgets);
  if (node > 0 && raised > node) {
    raised = node;
    capped_by = absl::StrCat("the largest node of pool '", pool, "', ", FormatBytes(node));
  }
  if (raised <= current) {
    return absl::FailedPreconditionError(absl::StrCat(
        "its limit of ", FormatBytes(current), " cannot be raised: it is already ",
        capped_by.empty() ? "the largest allowed" : capped_by));
  }
  OomRaise out;
  out.memory_bytes = raised;
  out.reason = absl::StrCat(
      "OOM-killed at its ", FormatBytes(current), " limit",
      // The peak is at least the limit (FloorPeakAtOomLimit): worth saying
      // only when it went past it.
      peak_memory_bytes > current
          ? absl::StrCat(" (peak ", FormatBytes(peak_memory_bytes), ")")
                            : std::string(),
      ": requeued once with ", FormatBytes(raised), " (",
      capped_by.empty() ? "max(2 x its limit, 1.25 x its peak), rounded up to 256 MiB"
                        : absl::StrCat("capped at ", capped_by),
      ")");
  return out;
}

bool RequeueOomKilled(const v1::Job& job, const v1::Budgets& budgets, TransitionRequest& t) {
  const int64_t peak = t.observed.has_value() ? t.observed->peak_memory_bytes() : 0;
  absl::StatusOr<OomRaise> raise = RaiseAfterOom(job, peak, budgets);
  if (!raise.ok()) {
    t.message = absl::StrCat(t.message.value_or(""), "; not requeued: ", raise.status().message());
    return false;
  }
  t.new_state = v1::JOB_STATE_QUEUED;
  t.failure_cause.reset();
  t.raised_memory_bytes = raise->memory_bytes;
  t.message = absl::StrCat("requeued: ", raise->reason);
  t.requeue_reason = std::move(raise->reason);
  t.requeue_cause = v1::REQUEUE_CAUSE_OOM_RETRY;
  return true;
}

}  // namespace berth
