// The RocksDB handles of an open RocksStore (the database and its column
// families), shared by rocks_store.cc and rocks_store_open.cc. Private to
// RocksStore.
#ifndef BERTH_EXECUTOR_STORE_ROCKS_STORE_HANDLES_H_
#define BERTH_EXECUTOR_STORE_ROCKS_STORE_HANDLES_H_

#include <memory>
#include <vector>

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

}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_ROCKS_STORE_HANDLES_H_
