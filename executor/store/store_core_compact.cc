// StoreCore::Compact: retention of events (by count and age) and of terminal
// jobs (by age, then by count, oldest finished first).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "executor/store/store_core.h"
#include "executor/store/store_internal.h"
#include "executor/store/store_util.h"
#include "planner/base/status_macros.h"

namespace berth {
namespace {

constexpr v1::JobState kTerminal[] = {v1::JOB_STATE_SUCCEEDED, v1::JOB_STATE_FAILED,
                                      v1::JOB_STATE_CANCELLED, v1::JOB_STATE_REJECTED};

}  // namespace

absl::StatusOr<CompactionStats> StoreCore::Compact(absl::Time now) {
  absl::MutexLock write(&write_mu_);
  RETURN_IF_ERROR(WaitLoaded());  // writes wait for a background load
  ChangeSet c;
  c.sync = false;  // losing a compaction only means redoing it
  CompactionStats stats;
  {
    absl::ReaderMutexLock lock(&mu_);
    c.meta = meta_;
    // Events: by count, then by age (scanning forward from the new oldest).
    uint64_t oldest = meta_.oldest_revision;
    const uint64_t current = meta_.revision;
    const uint64_t keep =
        static_cast<uint64_t>(std::max<int64_t>(retention_.max_events, 0));
    if (current + 1 - oldest > keep) oldest = current + 1 - keep;
    const absl::Time cutoff = now - retention_.max_event_age;
    bool done = false;
    while (!done && oldest <= current) {
      ASSIGN_OR_RETURN(std::vector<v1::Event> page, LoadEvents(oldest, 1000));
      if (page.empty()) break;
      for (const v1::Event& e : page) {
        if (FromProtoTime(e.time()) >= cutoff) {
          done = true;
          break;
        }
        oldest = e.revision() + 1;
      }
    }
    if (oldest > meta_.oldest_revision) {
      stats.events_deleted =
          static_cast<int64_t>(oldest - meta_.oldest_revision);
      c.delete_events_before = oldest;
      c.meta.oldest_revision = oldest;
    }

    // Terminal jobs past their retention, then the oldest beyond the count.
    const absl::Time job_cutoff = now - retention_.terminal_job_retention;
    std::vector<std::pair<absl::Time, std::string>> kept;
    size_t terminal = 0;
    for (v1::JobState s : kTerminal) terminal += by_state_[s].size();
    const size_t max_kept =
        static_cast<size_t>(std::max<int64_t>(retention_.max_terminal_jobs, 0));
    for (v1::JobState s : kTerminal) {
      for (const auto& [id, record] : by_state_[s]) {
        const absl::Time finished = record->finished_at();
        if (finished < job_cutoff) {
          c.delete_jobs.emplace_back(id);
        } else if (terminal > max_kept) {
          kept.emplace_back(finished, id);
        }
      }
    }
    if (kept.size() > max_kept) {
      // The oldest finished go first (ties: by id, so every store agrees).
      const size_t excess = kept.size() - max_kept;
      std::nth_element(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(excess),
                       kept.end());
      for (size_t i = 0; i < excess; ++i) c.delete_jobs.push_back(std::move(kept[i].second));
    }
  }
  stats.jobs_deleted = static_cast<int64_t>(c.delete_jobs.size());
  if (stats.events_deleted == 0 && stats.jobs_deleted == 0) return stats;
  RETURN_IF_ERROR(Commit(std::move(c)));
  return stats;
}

}  // namespace berth
