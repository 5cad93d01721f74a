// StoreCore: reads (jobs, listings, events, decisions, meta) and waiting.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "executor/store/store_core.h"
#include "executor/store/store_internal.h"
#include "planner/base/status_macros.h"

namespace berth {

using berth::v1::JobState;

absl::StatusOr<berth::v1::Budgets> StoreCore::GetBudgets() const {
  absl::ReaderMutexLock lock(&mu_);
  if (!meta_.budgets.has_value()) {
    return absl::NotFoundError("budgets were never set");
  }
  return *meta_.budgets;
}

berth::v1::ControlState StoreCore::GetControlState() const {
  absl::ReaderMutexLock lock(&mu_);
  return ControlStateOf(meta_);
}

uint64_t StoreCore::LastAppliedGeneration() const {
  absl::ReaderMutexLock lock(&mu_);
  return meta_.last_generation;
}

SnapshotPolicy StoreCore::LastSnapshotPolicy() const {
  absl::ReaderMutexLock lock(&mu_);
  SnapshotPolicy p;
  p.requeue_oom_once = meta_.requeue_oom_once;
  return p;
}

absl::StatusOr<StoredJob> StoreCore::GetJob(const std::string& job_id) const {
  // While a background load runs, the persisted job is the job: no write
  // happens before the load has finished.
  if (LoadPending()) return ReadPersistedJob(job_id);
  RETURN_IF_ERROR(WaitLoaded());
  JobRecord record;
  {
    absl::ReaderMutexLock lock(&mu_);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) {
      return absl::NotFoundError(absl::StrCat("job '", job_id, "' not found"));
    }
    record = it->second.stored;
  }
  return record->Decode();  // outside the lock
}

bool StoreCore::HasJob(const std::string& job_id) const {
  if (!WaitLoaded().ok()) return false;
  absl::ReaderMutexLock lock(&mu_);
  return jobs_.contains(job_id);
}

void StoreCore::LookupSpecs(const std::vector<absl::string_view>& ids,
                            std::vector<SpecLookup>* out) const {
  out->assign(ids.size(), SpecLookup{});
  if (!WaitLoaded().ok()) return;
  absl::ReaderMutexLock lock(&mu_);
  for (size_t i = 0; i < ids.size(); ++i) {
    // A million ids miss the cache at random: ask for later ones early.
    if (i + kLookupPrefetchDistance < ids.size()) {
      jobs_.prefetch(ids[i + kLookupPrefetchDistance]);
    }
    auto it = jobs_.find(ids[i]);
    if (it == jobs_.end()) continue;
    (*out)[i] = SpecLookup{true, IsTerminal(it->second.state), it->second.fingerprint};
  }
}

std::vector<JobRecord> StoreCore::JobsInState(JobState state) const {
  std::vector<JobRecord> out;
  if (state < 0 || state >= kStates || !WaitLoaded().ok()) return out;
  absl::ReaderMutexLock lock(&mu_);
  out.reserve(by_state_[state].size());
  for (const auto& [id, record] : by_state_[state]) out.push_back(record);
  return out;
}

void StoreCore::VisitJobsInState(JobState state,
                                 const std::function<void(const JobRecord&)>& visit) const {
  if (state < 0 || state >= kStates || !WaitLoaded().ok()) return;
  absl::ReaderMutexLock lock(&mu_);
  for (const auto& [id, record] : by_state_[state]) visit(record);
}

size_t StoreCore::CountJobsInState(JobState state) const {
  if (state < 0 || state >= kStates || !WaitLoaded().ok()) return 0;
  absl::ReaderMutexLock lock(&mu_);
  return by_state_[state].size();
}

namespace {
constexpr char kPageTokenPrefix[] = "after:";
bool PoolMatches(const std::string& want, absl::string_view pool) {
  auto norm = [](absl::string_view p) { return p.empty() ? absl::string_view("default") : p; };
  return want.empty() || norm(want) == norm(pool);
}
}  // namespace

absl::StatusOr<JobPage> StoreCore::ListJobs(const JobFilter& filter) const {
  if (filter.page_size < 0) {
    return absl::InvalidArgumentError("page_size must be >= 0");
  }
  RETURN_IF_ERROR(WaitLoaded());
  const size_t page_size =
      filter.page_size == 0 ? 100 : std::min(filter.page_size, 1000);
  std::string after;
  if (!filter.page_token.empty()) {
    if (filter.page_token.rfind(kPageTokenPrefix, 0) != 0 ||
        filter.page_token.size() == sizeof(kPageTokenPrefix) - 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("malformed page_token '", filter.page_token, "'"));
    }
    after = filter.page_token.substr(sizeof(kPageTokenPrefix) - 1);
  }
  auto matches = [&](const StoredRecord& j) {
    return (filter.workspace.empty() || j.workspace() == filter.workspace) &&
           PoolMatches(filter.pool, j.pool());
  };
  // Candidate ids in id order: up to a page (+1, to tell whether a next page
  // exists) from each wanted state's index, merged. Records are decoded into
  // the answer after the lock is released.
  std::vector<JobRecord> page;
  std::set<JobState> states(filter.states.begin(), filter.states.end());
  if (states.empty()) {
    for (int s = v1::JOB_STATE_QUEUED; s <= v1::JOB_STATE_REJECTED; ++s) {
      states.insert(static_cast<JobState>(s));
    }
  }
  {
    absl::ReaderMutexLock lock(&mu_);
    for (JobState s : states) {
      if (s < 0 || s >= kStates) continue;
      size_t taken = 0;
      const auto& ids = by_state_[s];
      for (auto it = after.empty() ? ids.begin() : ids.upper_bound(after);
           it != ids.end() && taken <= page_size; ++it) {
        if (!matches(*it->second)) continue;
        page.push_back(it->second);
        ++taken;
      }
    }
    std::sort(page.begin(), page.end(), [](const auto& a, const auto& b) {
      return a->id() < b->id();
    });
  }
  JobPage out;
  const bool more = page.size() > page_size;
  if (more) page.resize(page_size);
  out.jobs.reserve(page.size());
  for (const JobRecord& j : page) out.jobs.push_back(j->Decode());
  if (more) {
    out.next_page_token =
        absl::StrCat(kPageTokenPrefix, out.jobs.back().job.spec().id());
  }
  return out;
}

absl::StatusOr<EventPage> StoreCore::ReadEvents(uint64_t after_revision,
                                                int max_events) const {
  if (max_events < 1) {
    return absl::InvalidArgumentError("max_events must be >= 1");
  }
  absl::ReaderMutexLock lock(&mu_);
  if (after_revision > meta_.revision) {
    return absl::InvalidArgumentError(
        absl::StrFormat("revision %d is ahead of the current revision %d",
                        after_revision, meta_.revision));
  }
  if (after_revision + 1 < meta_.oldest_revision) {
    return absl::OutOfRangeError(absl::StrFormat(
        "events after revision %d are no longer retained: oldest retained "
        "revision is %d, current revision is %d; re-list the jobs",
        after_revision, meta_.oldest_revision, meta_.revision));
  }
  EventPage page;
  page.current_revision = meta_.revision;
  if (after_revision == meta_.revision) return page;
  const uint64_t first = after_revision + 1;
  ASSIGN_OR_RETURN(page.events,
                   LoadEvents(first, std::min(max_events, 10000)));
  // A write persists before it publishes (and holds only write_mu_ then):
  // events beyond the published revision are left for a later read, and a
  // compaction being persisted may have trimmed the ones asked for.
  while (!page.events.empty() &&
         page.events.back().revision() > page.current_revision) {
    page.events.pop_back();
  }
  if (page.events.empty() || page.events.front().revision() != first) {
    return absl::OutOfRangeError(absl::StrFormat(
        "events after revision %d were trimmed by retention while being "
        "read; current revision is %d; re-list the jobs",
        after_revision, meta_.revision));
  }
  return page;
}

uint64_t StoreCore::CurrentRevision() const {
  absl::ReaderMutexLock lock(&mu_);
  return meta_.revision;
}

uint64_t StoreCore::OldestRevision() const {
  absl::ReaderMutexLock lock(&mu_);
  return meta_.oldest_revision;
}

bool StoreCore::AwaitRevision(uint64_t after_revision,
                              absl::Duration timeout) const {
  absl::ReaderMutexLock lock(&mu_);
  auto passed = [this, after_revision]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return meta_.revision > after_revision;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&passed), timeout);
}

absl::StatusOr<std::vector<Decision>> StoreCore::DecisionsForJob(
    const std::string& job_id) const {
  absl::ReaderMutexLock lock(&mu_);
  return LoadDecisions(job_id);
}

size_t StoreCore::JobCount() const {
  if (!WaitLoaded().ok()) return 0;
  absl::ReaderMutexLock lock(&mu_);
  return jobs_.size();
}

absl::StatusOr<BackupInfo> StoreCore::Backup(const std::string& dir) {
  return absl::UnimplementedError(
      absl::StrCat("this store keeps no files to back up (asked for ", dir, ")"));
}

}  // namespace berth
