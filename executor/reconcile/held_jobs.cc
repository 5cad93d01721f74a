#include "executor/reconcile/held_jobs.h"

#include <utility>

namespace berth {

void HeldJobs::Replace(std::map<std::string, std::string> holds) {
  absl::MutexLock lock(&mu_);
  holds_ = std::move(holds);
}

std::optional<std::string> HeldJobs::Get(const std::string& job_id) const {
  absl::MutexLock lock(&mu_);
  auto it = holds_.find(job_id);
  if (it == holds_.end()) return std::nullopt;
  return it->second;
}

int HeldJobs::size() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(holds_.size());
}

}  // namespace berth
