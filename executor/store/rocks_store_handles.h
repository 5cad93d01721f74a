// The RocksDB handles of an open RocksStore (the database and its column
// families), shared by rocks_store.cc and rocks_store_open.cc. Private to
// RocksStore.
#ifndef BERTH_EXECUTOR_STORE_ROCKS_STORE_HANDLES_H_
#define BERTH_EXECUTOR_STORE_ROCKS_STORE_HANDLES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "executor/store/rocks_store.h"
#include "rocksdb/db.h"

namespace berth {

struct RocksStore::Handles {
  Handles() = default;
  Handles(const Handles&) = delete;
  Handles& operator=(const Handles&) = delete;
  // Destroys the family handles, then closes the database (also when Open
  // fails half-way).
  ~Handles();

  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> cfs;  // owned
  rocksdb::ColumnFamilyHandle* jobs = nullptr;
  rocksdb::ColumnFamilyHandle* events = nullptr;
  rocksdb::ColumnFamilyHandle* decisions = nullptr;
  rocksdb::ColumnFamilyHandle* meta = nullptr;
  rocksdb::ColumnFamilyHandle* usage = nullptr;
};

namespace rocks_format {

// The file RocksStore::Backup writes into a copy: "epoch <id>\nrevision
// <n>\n". Its presence makes the first Open of the copy begin a new epoch;
// that Open renames it to kRestoredMarker (kept as a record of the restore).
inline constexpr char kBackupMarker[] = "BERTH_STORE_BACKUP";
inline constexpr char kRestoredMarker[] = "BERTH_STORE_RESTORED";
// Meta key of the epoch: "<id> <parent or -> <since>".
inline constexpr char kEpochKey[] = "epoch";

// Reads the store's epoch at Open (`revision`: the meta's current one):
// a store without one (new, or from before epochs) is given one; a store
// in a directory holding kBackupMarker begins a new epoch whose parent is
// the stored one and whose `since` is `revision`. The new epoch is written
// (WAL synced) before the marker is renamed, so a crash between the two
// only begins one more epoch at the next Open. DATA_LOSS for a corrupt
// epoch record; the file system's and RocksDB's errors otherwise.
// `revision` and `generation`: the store's last event revision and last
// applied sync generation, recorded in an epoch begun from a backup.
absl::StatusOr<StoreEpoch> OpenEpoch(RocksStore::Handles& h, const std::string& dir,
                                     uint64_t revision, uint64_t generation);

}  // namespace rocks_format
}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_ROCKS_STORE_HANDLES_H_
