// ExecutorCore's right-sizing (issue 16): the RightSize report and the
// advice ExplainJob adds for a waiting job whose estimate is far above what
// its action used. Advice only: nothing is changed.
#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/usage/right_sizing.h"
#include "planner/base/status_macros.h"
#include "server/executor_core.h"
#include "server/request_limits.h"

namespace berth {

absl::StatusOr<v1::RightSizeResponse> ExecutorCore::RightSize(
    const v1::RightSizeRequest& request) {
  if (request.limit() < 0) return absl::InvalidArgumentError("limit: must be >= 0");
  RETURN_IF_ERROR(CheckLength("workspace", request.workspace(), kMaxNameBytes));
  const int limit = request.limit() == 0 ? 20 : std::min(request.limit(), 1000);
  return RightSizeReport(store_.UsageHistories(), request.workspace(), limit);
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
