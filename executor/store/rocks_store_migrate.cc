#include "executor/store/rocks_store_migrate.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "executor/store/rocks_store_format.h"
#include "planner/base/status_macros.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"

namespace berth {
namespace rocks_format {
namespace {

// Version 1 -> 2: usage histories move from the meta family
// ("usage", 0x00, key) to the usage family (key).
absl::Status UsageOutOfMeta(RocksStore::Handles& h, rocksdb::WriteBatch* b) {
  const std::string prefix = absl::StrCat("usage", std::string(1, '\0'));
  std::unique_ptr<rocksdb::Iterator> it(h.db->NewIterator(rocksdb::ReadOptions(), h.meta));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    rocksdb::Slice key = it->key();
    key.remove_prefix(prefix.size());
    b->Put(h.usage, key, it->value());
    b->Delete(h.meta, it->key());
  }
  return FromRocks(it->status(), "reading usage histories");
}

}  // namespace

absl::Status MigrateStore(RocksStore::Handles& h, int from, const std::string& dir) {
  if (from < kOldestMigratableVersion || from >= kRocksStoreSchemaVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("store '", dir, "': no upgrade from schema version ", from, " to ",
                     kRocksStoreSchemaVersion));
  }
  rocksdb::WriteBatch b;
  // Every step adds to the one batch. (A step reads the database, which
  // does not yet hold what earlier steps put in `b`: a later step must not
  // depend on an earlier one's output.)
  if (from < 2) {
    RETURN_IF_ERROR(UsageOutOfMeta(h, &b));
  }
  b.Put(h.meta, kSchemaKey, std::to_string(kRocksStoreSchemaVersion));
  rocksdb::WriteOptions wo;
  wo.sync = true;
  return FromRocks(h.db->Write(wo, &b),
                   absl::StrCat("store '", dir, "': upgrading from schema version ", from));
}

}  // namespace rocks_format
}  // namespace berth
