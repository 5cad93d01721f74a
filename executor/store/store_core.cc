// Snapshot application of StoreCore: the commit of a change set and
// ApplySnapshot. The diff of a snapshot against the store is in
// store_core_diff.cc; decisions, transitions, meta and retention in
// store_core_ops.cc; reads in store_core_reads.cc.
#include "executor/store/store_core.h"

#include <utility>

#include "absl/strings/str_cat.h"

#include "executor/store/spec_fingerprint.h"
#include "executor/store/store_internal.h"
#include "executor/store/store_util.h"
#include "planner/base/status_macros.h"

namespace berth {

using berth::v1::JobState;

StoreCore::StoreCore(RetentionOptions retention, bool sync_writes)
    : retention_(retention), sync_writes_(sync_writes) {
  epoch_.id = NewEpochId();
}

void ChangeSet::Put(const StoredJob& job) { Put(job, SpecFingerprint(job.job.spec())); }

void ChangeSet::Put(const StoredJob& job, uint64_t fingerprint) {
  put_jobs.push_back(PutJob{std::make_shared<const StoredRecord>(job), fingerprint});
}

bool StoreCore::LoadRecord(absl::string_view value, PutJob* out) {
  StoredJob job;
  if (!StoredRecord::ParseValue(value, &job)) return false;
  out->fingerprint = SpecFingerprint(job.job.spec());
  out->record = std::make_shared<const StoredRecord>(value, job);
  return true;
}

void StoreCore::InitMeta(StoreMeta meta) {
  absl::MutexLock lock(&mu_);
  meta_ = std::move(meta);
}

void StoreCore::InitJobs(std::vector<PutJob> jobs) {
  absl::flat_hash_map<std::string, Entry> index;
  std::array<StateIndex, kStates> by_state;
  index.reserve(jobs.size());
  for (PutJob& j : jobs) {
    const JobState state = j.record->state();
    const absl::string_view id = j.record->id();
    by_state[state].emplace(id, j.record);
    index.emplace(id, Entry{j.fingerprint, 0, state, std::move(j.record)});
  }
  absl::MutexLock lock(&mu_);
  jobs_.swap(index);
  by_state_.swap(by_state);
}

void StoreCore::StartLoading() {
  absl::MutexLock lock(&load_mu_);
  load_done_ = false;
  load_status_ = absl::OkStatus();
  loading_.store(true, std::memory_order_release);
}

void StoreCore::FinishLoading(absl::Status status) {
  absl::MutexLock lock(&load_mu_);
  load_done_ = true;
  load_status_ = std::move(status);
  // A failed load stays "loading": every waiting call returns its error.
  if (load_status_.ok()) loading_.store(false, std::memory_order_release);
}

absl::Status StoreCore::WaitLoaded() const {
  if (!loading_.load(std::memory_order_acquire)) return absl::OkStatus();
  absl::MutexLock lock(&load_mu_);
  load_mu_.Await(absl::Condition(&load_done_));
  return load_status_;
}

bool StoreCore::LoadPending() const {
  if (!loading_.load(std::memory_order_acquire)) return false;
  absl::MutexLock lock(&load_mu_);
  return !load_done_;
}

bool StoreCore::jobs_loaded() const { return !loading_.load(std::memory_order_acquire); }

absl::Status StoreCore::AwaitJobsLoaded() const { return WaitLoaded(); }

absl::StatusOr<StoredJob> StoreCore::ReadPersistedJob(const std::string& id) const {
  return absl::UnavailableError(
      absl::StrCat("job '", id, "' cannot be read while the store loads; retry"));
}

StoreMeta StoreCore::MetaForWrite() const {
  absl::ReaderMutexLock lock(&mu_);
  return meta_;
}

absl::Status StoreCore::Commit(ChangeSet changes) {
  RETURN_IF_ERROR(Persist(changes));
  // The records were built and fingerprinted with the change set, and the
  // records they replace are freed after releasing mu_: readers wait only
  // for the pointer swaps.
  const size_t n = changes.put_jobs.size();
  std::vector<JobRecord> replaced;
  replaced.reserve(n + changes.delete_jobs.size());
  absl::MutexLock lock(&mu_);
  jobs_.reserve(jobs_.size() + n);
  for (size_t i = 0; i < n; ++i) {
    if (i + kLookupPrefetchDistance < n) {
      jobs_.prefetch(changes.put_jobs[i + kLookupPrefetchDistance].record->id());
    }
    PutJob& put = changes.put_jobs[i];
    JobRecord& record = put.record;
    const absl::string_view id = record->id();
    const JobState state = record->state();
    auto [it, inserted] = jobs_.try_emplace(id);
    Entry& e = it->second;
    if (!inserted) {
      // The index key views the old record's id: replace key and value.
      by_state_[e.state].erase(id);
      replaced.push_back(std::move(e.stored));
    }
    by_state_[state].emplace(id, record);
    e.fingerprint = put.fingerprint;
    e.state = state;
    e.stored = std::move(record);
  }
  for (const std::string& id : changes.delete_jobs) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) continue;
    by_state_[it->second.state].erase(id);
    replaced.push_back(std::move(it->second.stored));
    jobs_.erase(it);
  }
  meta_ = std::move(changes.meta);
  PublishUsage(changes);
  return absl::OkStatus();
}

absl::StatusOr<SnapshotResult> StoreCore::ApplySnapshot(
    const SnapshotRequest& request, absl::Time now) {
  return Apply(request, nullptr, now);
}

absl::StatusOr<SnapshotResult> StoreCore::ApplySnapshot(SnapshotRequest&& request,
                                                        absl::Time now) {
  // A dry run writes nothing: there is nothing to move the specs into.
  return Apply(request, request.dry_run ? nullptr : &request, now);
}

absl::StatusOr<SnapshotResult> StoreCore::Apply(const SnapshotRequest& request,
                                                SnapshotRequest* consumable, absl::Time now) {
  if (request.generation == 0) {
    return absl::InvalidArgumentError("snapshot generation must be >= 1");
  }
  absl::MutexLock write(&write_mu_);
  RETURN_IF_ERROR(WaitLoaded());  // writes wait for a background load
  SnapshotResult result;
  ChangeSet c;
  {
    // The diff reads the in-memory state under a shared lock: readers go on.
    absl::ReaderMutexLock lock(&mu_);
    RETURN_IF_ERROR(DiffSnapshot(request, consumable, now, &result, &c));
    if (request.dry_run || result.response.already_applied()) {
      result.response.set_revision(meta_.revision);
      return result;
    }
  }
  if (consumable != nullptr) {
    // The change set holds the records: free the specs they were made of (a
    // first sync's are most of its memory) before the write, and before the
    // plan that the write's publication sets off.
    std::vector<v1::JobSpec>().swap(consumable->jobs);
    std::vector<uint64_t>().swap(consumable->fingerprints);
  }
  RETURN_IF_ERROR(Commit(std::move(c)));
  return result;
}

}  // namespace berth
