// Encoding of RocksStore's keys and records, and the conversion of
// rocksdb::Status (and std::error_code) to absl::Status. Internal to
// executor/rocks_store*.
#ifndef BERTH_EXECUTOR_STORE_ROCKS_STORE_FORMAT_H_
#define BERTH_EXECUTOR_STORE_ROCKS_STORE_FORMAT_H_

#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "executor/store/store.pb.h"
#include "executor/store/store_core.h"
#include "rocksdb/slice.h"
#include "rocksdb/status.h"

namespace berth {
namespace rocks_format {

// Column families and meta keys.
inline constexpr char kJobsCf[] = "jobs";
inline constexpr char kEventsCf[] = "events";
inline constexpr char kDecisionsCf[] = "decisions";
inline constexpr char kMetaCf[] = "meta";
// Usage histories, keyed by UsageKey(workspace, action) (since version 2;
// version 1 kept them in meta, see rocks_store_migrate.cc).
inline constexpr char kUsageCf[] = "usage";
inline constexpr char kSchemaKey[] = "schema_version";
inline constexpr char kStateKey[] = "state";
// Who last opened the store for writing (RocksStoreOptions::writer), shown
// when a store is refused as too new.
inline constexpr char kWriterKey[] = "written_by";

// The column families of the current layout, the default family first.
const std::vector<std::string>& Families();

// The one place where rocksdb::Status becomes absl::Status: Corruption ->
// DATA_LOSS, no space -> RESOURCE_EXHAUSTED, permission denied / read-only
// file system -> PERMISSION_DENIED, other I/O errors -> UNAVAILABLE, ...
// The message is "<context>: <rocksdb message>".
absl::Status FromRocks(const rocksdb::Status& s, absl::string_view context);
// The same mapping for file-system calls made outside RocksDB.
absl::Status FromErrorCode(const std::error_code& ec, absl::string_view what);

// 8-byte big-endian revision (event keys): byte order = numeric order.
std::string RevisionKey(uint64_t rev);
uint64_t DecodeRevision(const rocksdb::Slice& k);
// Decision keys: job id, 0x00, big-endian sequence (a job's decisions are
// contiguous and in order; ids never contain 0x00).
std::string DecisionKey(const std::string& job_id, uint64_t seq);

berth::store::MetaRecord ToRecord(const StoreMeta& m);
absl::StatusOr<StoreMeta> FromRecord(const berth::store::MetaRecord& r);
berth::store::UsageHistoryRecord ToRecord(const UsageHistory& h);
UsageHistory FromRecord(const berth::store::UsageHistoryRecord& r);

}  // namespace rocks_format
}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_ROCKS_STORE_FORMAT_H_
