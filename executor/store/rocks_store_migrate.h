// Upgrading a RocksStore written in an older layout to the current one.
// Internal to executor/rocks_store*.
//
// Versions:
//   1  usage histories in the meta family under "usage", 0x00, UsageKey.
//   2  usage histories in their own family, "usage", keyed by UsageKey; the
//      meta family holds only the schema version, the state record and
//      "written_by".
// A migration adds the families the new layout has (an empty family is
// harmless to the old layout and is reused if the upgrade is interrupted),
// then rewrites the records and the schema version in one synced
// WriteBatch: a crash leaves either the old store or the new one.
#ifndef BERTH_EXECUTOR_STORE_ROCKS_STORE_MIGRATE_H_
#define BERTH_EXECUTOR_STORE_ROCKS_STORE_MIGRATE_H_

#include <string>

#include "absl/status/status.h"
#include "executor/store/rocks_store_handles.h"

namespace berth {
namespace rocks_format {

// The oldest layout that MigrateStore upgrades.
inline constexpr int kOldestMigratableVersion = 1;

// Upgrades the open store `h` (in `dir`, for messages) from schema version
// `from` to kRocksStoreSchemaVersion. `h` has every family of the current
// layout open (Open creates the missing ones before calling this).
absl::Status MigrateStore(RocksStore::Handles& h, int from, const std::string& dir);

}  // namespace rocks_format
}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_ROCKS_STORE_MIGRATE_H_
