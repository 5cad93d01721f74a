#include "executor/store/memory_store.h"

#include <utility>

namespace berth {

MemoryStore::MemoryStore(RetentionOptions retention)
    : StoreCore(retention, /*sync_writes=*/true) {}

void MemoryStore::FailNextWrites(int n, absl::Status status) {
  absl::MutexLock lock(&disk_mu_);
  fail_writes_ = n;
  fail_status_ = std::move(status);
}

absl::Status MemoryStore::Persist(const ChangeSet& changes) {
  absl::MutexLock lock(&disk_mu_);
  if (fail_writes_ > 0) {
    --fail_writes_;
    return fail_status_;
  }
  for (const std::string& id : changes.delete_jobs) decisions_.erase(id);
  if (changes.delete_events_before > 0) {
    events_.erase(events_.begin(),
                  events_.lower_bound(changes.delete_events_before));
  }
  for (size_t i = 0; i < changes.events.size(); ++i) {
    events_[changes.events.revision(i)] = changes.events.Decode(i);
  }
  for (const Decision& d : changes.decisions) {
    decisions_[d.job_id].push_back(d);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<berth::v1::Event>> MemoryStore::LoadEvents(
    uint64_t first, int max) const {
  absl::MutexLock lock(&disk_mu_);
  std::vector<berth::v1::Event> out;
  for (auto it = events_.lower_bound(first);
       it != events_.end() && static_cast<int>(out.size()) < max; ++it) {
    out.push_back(it->second);
  }
  return out;
}

absl::StatusOr<std::vector<Decision>> MemoryStore::LoadDecisions(
    const std::string& job_id) const {
  absl::MutexLock lock(&disk_mu_);
  auto it = decisions_.find(job_id);
  if (it == decisions_.end()) return std::vector<Decision>{};
  return it->second;
}

}  // namespace berth
