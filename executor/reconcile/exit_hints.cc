#include "executor/reconcile/exit_hints.h"

#include <vector>

namespace berth {

bool ExitHints::Note(const RuntimeEvent& event, absl::Time now) {
  if (event.job_id.empty()) return false;  // "resync": nothing to remember
  absl::MutexLock lock(&mu_);
  if (event.action == "destroy") {
    auto it = hints_.find(event.job_id);
    if (it != hints_.end() && it->second.Matches(event.container_id)) hints_.erase(it);
    return false;
  }
  if (event.action != "die" && event.action != "oom") return false;
  ExitHint& h = hints_[event.job_id];
  if (h.container_id != event.container_id) {
    h = ExitHint();  // a hint about an older container of the job
    h.container_id = event.container_id;
  }
  h.received_at = now;
  if (event.action == "oom") {
    h.oom_killed = true;
    return false;
  }
  h.died = true;
  h.exit_code = event.exit_code;
  h.exited_at = event.time;
  return true;
}

std::optional<ExitHint> ExitHints::Died(const std::string& job_id) const {
  absl::MutexLock lock(&mu_);
  auto it = hints_.find(job_id);
  if (it == hints_.end() || !it->second.died) return std::nullopt;
  return it->second;
}

void ExitHints::Forget(const std::string& job_id, const std::string& container_id) {
  absl::MutexLock lock(&mu_);
  auto it = hints_.find(job_id);
  if (it != hints_.end() && it->second.Matches(container_id)) hints_.erase(it);
}

void ExitHints::Expire(absl::Time now) {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> old;
  for (const auto& [job, h] : hints_) {
    if (h.received_at < now - options_.keep) old.push_back(job);
  }
  for (const std::string& job : old) hints_.erase(job);
}

size_t ExitHints::size() const {
  absl::MutexLock lock(&mu_);
  return hints_.size();
}

}  // namespace berth
