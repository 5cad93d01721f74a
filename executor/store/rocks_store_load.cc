// Loading a RocksStore's jobs into memory (in Open, or on a thread of its
// own with RocksStoreOptions::background_load) and reading one job from
// RocksDB while that load runs.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/store/rocks_store.h"
#include "executor/store/rocks_store_format.h"
#include "executor/store/rocks_store_handles.h"
#include "executor/store/store.pb.h"
#include "planner/base/status_macros.h"
#include "rocksdb/db.h"

namespace berth {

using rocks_format::FromRecord;
using rocks_format::FromRocks;

absl::Status RocksStore::LoadJobs() {
  if (before_load_) before_load_();
  rocksdb::DB* db = h_->db.get();
  const std::string& dir = dir_;
  std::vector<PutJob> jobs;
  uint64_t estimate = 0;
  if (db->GetIntProperty(h_->jobs, "rocksdb.estimate-num-keys", &estimate)) {
    jobs.reserve(static_cast<size_t>(std::min<uint64_t>(estimate, uint64_t{1} << 24)));
  }
  {
    std::unique_ptr<rocksdb::Iterator> it(
        db->NewIterator(rocksdb::ReadOptions(), h_->jobs));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      if (jobs.size() % 4096 == 0 && stop_loading_) {
        return absl::CancelledError(absl::StrCat("store '", dir, "': closed while loading"));
      }
      PutJob& j = jobs.emplace_back();
      // Read where RocksDB holds it: the record copies what it keeps.
      if (!StoreCore::LoadRecord(absl::string_view(it->value().data(), it->value().size()), &j)) {
        return absl::DataLossError(absl::StrCat("store '", dir,
                                                "': corrupt job record '",
                                                it->key().ToString(), "'"));
      }
    }
    RETURN_IF_ERROR(FromRocks(it->status(), "reading jobs"));
  }
  InitJobs(std::move(jobs));

  std::vector<UsageHistory> usage;
  {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), h_->usage));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      store::UsageHistoryRecord r;
      if (!r.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
        return absl::DataLossError(absl::StrCat("store '", dir,
                                                "': corrupt usage history record"));
      }
      usage.push_back(FromRecord(r));
    }
    RETURN_IF_ERROR(FromRocks(it->status(), "reading usage history"));
  }
  InitUsage(std::move(usage));
  return absl::OkStatus();
}

absl::StatusOr<StoredJob> RocksStore::ReadPersistedJob(const std::string& id) const {
  std::string value;
  const rocksdb::Status s = h_->db->Get(rocksdb::ReadOptions(), h_->jobs, id, &value);
  if (s.IsNotFound()) return absl::NotFoundError(absl::StrCat("job '", id, "' not found"));
  RETURN_IF_ERROR(FromRocks(s, "reading a job"));
  StoredJob job;
  if (!StoredRecord::ParseValue(value, &job)) {
    return absl::DataLossError(absl::StrCat("store '", dir_, "': corrupt job record '", id, "'"));
  }
  return job;
}

}  // namespace berth
