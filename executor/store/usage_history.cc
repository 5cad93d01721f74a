#include "executor/store/usage_history.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace berth {

std::string UsageKey(const std::string& workspace, const std::string& action) {
  return absl::StrCat(workspace, std::string(1, '\0'), action);
}

bool CountsAsRun(v1::JobState new_state, const v1::ResourceUsage& u) {
  return (new_state == v1::JOB_STATE_SUCCEEDED || new_state == v1::JOB_STATE_FAILED) &&
         (u.samples() > 0 ||
          // An OOM kill before the first sample: its peak is the limit.
          (new_state == v1::JOB_STATE_FAILED && u.peak_memory_bytes() > 0));
}

void AppendRun(UsageHistory* history, UsageRun run, int runs_per_key) {
  history->runs.push_back(std::move(run));
  const size_t keep = static_cast<size_t>(std::max(1, runs_per_key));
  if (history->runs.size() > keep) {
    history->runs.erase(history->runs.begin(),
                        history->runs.end() - static_cast<std::ptrdiff_t>(keep));
  }
}

}  // namespace berth
