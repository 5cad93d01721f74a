// ExecutorCore's right-sizing: the RightSize report and the
// advice ExplainJob adds for a waiting job whose estimate is far above what
// its action used. Advice only: nothing is changed.
#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/store/spec_fingerprint.h"
#include "executor/usage/right_sizing.h"
#include "planner/base/log.h"
#include "planner/base/units.h"
#include "planner/base/status_macros.h"
#include "server/core/executor_core.h"
#include "server/core/request_limits.h"

namespace berth {

absl::StatusOr<v1::RightSizeResponse> ExecutorCore::RightSize(
    const v1::RightSizeRequest& request) {
  if (request.limit() < 0) return absl::InvalidArgumentError("limit: must be >= 0");
  RETURN_IF_ERROR(CheckLength("workspace", request.workspace(), kMaxNameBytes));
  const int limit = request.limit() == 0 ? 20 : std::min(request.limit(), 1000);
  return RightSizeReport(store_.UsageHistories(), request.workspace(), limit);
}

void ExecutorCore::FillMemoryEstimates(ReceivedSnapshot& snapshot) const {
  const bool fingerprinted = snapshot.fingerprints.size() == snapshot.jobs.size();
  for (size_t i = 0; i < snapshot.jobs.size(); ++i) {
    v1::JobSpec& spec = snapshot.jobs[i];
    if (spec.resources().memory_bytes() != 0) continue;
    const std::string& pool = spec.pool().empty() ? std::string("default") : spec.pool();
    if (!snapshot.fill_memory_from_history && options_.fill_memory_pools.count(pool) == 0) {
      continue;
    }
    absl::StatusOr<UsageHistory> history =
        store_.UsageHistoryOf(spec.workspace(), spec.action());
    if (!history.ok()) continue;  // no history: validation rejects it as before
    const UsageStats stats = Summarise(*history);
    if (stats.suggested_memory_bytes <= 0) continue;
    spec.mutable_resources()->set_memory_bytes(stats.suggested_memory_bytes);
    if (fingerprinted) snapshot.fingerprints[i] = SpecFingerprint(spec);
    Log(LogLevel::kInfo, "memory estimate filled from history",
        {{"job", spec.id()},
         {"memory", FormatBytes(stats.suggested_memory_bytes)},
         {"reason", absl::StrCat("largest peak ", FormatBytes(stats.max_peak_memory_bytes),
                                 " in ", stats.runs, " runs (", stats.succeeded,
                                 " successful) of action '",
                                 spec.action(), "' + 25%")},
         {"policy", snapshot.fill_memory_from_history ? "snapshot" : "pool"}});
  }
}

std::string ExecutorCore::RaisedSentence(const v1::Job& job) {
  if (job.raised_memory_bytes() <= 0) return "";
  return absl::StrCat(" Its memory reservation was raised to ", FormatBytes(job.raised_memory_bytes()),
                      " after an OOM kill (it asks ", FormatBytes(job.spec().resources().memory_bytes()),
                      "); it is planned and limited at the larger.");
}

void ExecutorCore::AddRightSizing(const v1::JobSpec& spec, v1::Explanation* out) const {
  absl::StatusOr<UsageHistory> history = store_.UsageHistoryOf(spec.workspace(), spec.action());
  if (!history.ok()) return;  // no run of this action yet
  std::optional<v1::RightSizing> advice = AdviseRightSizing(spec, *out, *history);
  if (!advice.has_value()) return;
  out->set_summary(absl::StrCat(out->summary(), " Right-sizing: ", advice->text(), "."));
  *out->mutable_right_sizing() = *std::move(advice);
}

}  // namespace berth
