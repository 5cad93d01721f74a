#include "executor/reconcile/start_retries.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "planner/base/units.h"

namespace berth {

bool StartRetries::Due(const std::string& job_id, absl::Time now) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  return it == jobs_.end() || now >= it->second.next_attempt;
}

std::string StartRetries::Failed(const std::string& job_id, const absl::Status& error,
                                 absl::Time now) {
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = jobs_.try_emplace(job_id);
  Entry& e = it->second;
  if (inserted) e.first_failure = now;
  ++e.failures;
  const bool unreachable = error.code() == absl::StatusCode::kUnavailable ||
                           error.code() == absl::StatusCode::kDeadlineExceeded;
  if (!unreachable) ++e.counted;
  if (e.counted >= options_.max_attempts) {
    std::string message = absl::StrCat(
        "container could not be started: ", e.failures, " attempts over ",
        FormatHumanDuration(now - e.first_failure), " failed; the last: ", error.message());
    jobs_.erase(it);
    return message;
  }
  absl::Duration wait = absl::ZeroDuration();
  if (e.failures >= 2) {
    wait = options_.initial_backoff;
    for (int i = 2; i < e.failures && wait < options_.max_backoff; ++i) wait *= 2;
    wait = std::min(wait, options_.max_backoff);
  }
  e.next_attempt = now + wait;
  return "";
}

void StartRetries::Forget(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  jobs_.erase(job_id);
}

size_t StartRetries::size() const {
  absl::MutexLock lock(&mu_);
  return jobs_.size();
}

}  // namespace berth
