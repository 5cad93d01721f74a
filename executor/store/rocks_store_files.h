// The file-system steps of opening a RocksStore that happen outside RocksDB's
// read-write open: creating a store inside its directory, and reading a
// store's schema version without writing anything. Internal to
// executor/rocks_store*.
#ifndef BERTH_EXECUTOR_STORE_ROCKS_STORE_FILES_H_
#define BERTH_EXECUTOR_STORE_ROCKS_STORE_FILES_H_

#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "rocksdb/options.h"

namespace berth {
namespace rocks_format {

// Present in a store directory while a new store is being created in it
// (written before RocksDB creates anything, removed once the store is
// complete and synced).
inline constexpr char kCreatingMarker[] = ".berth-creating";

// fsyncs a directory so that a creation, removal or rename in it is durable.
absl::Status SyncDir(const std::filesystem::path& dir);
// Creates `path` empty and fsyncs it.
absl::Status WriteSyncedFile(const std::filesystem::path& path);
// Removes everything inside `dir`, keeping `dir`.
absl::Status EmptyDirectory(const std::filesystem::path& dir);

// The FAILED_PRECONDITION for a store whose schema version is newer than
// this code's, naming both versions and `writer` (the Berth that last
// opened it for writing).
absl::Status NewerLayoutError(const std::string& dir, int version, const std::string& writer);

// Reads the schema version of the Berth store in `dir` with a read-only
// open that writes nothing there (no info log, no table file, no lock
// taken) and returns NewerLayoutError if it is newer than this code's; OK
// otherwise, and also when `dir` is not a readable Berth store (the
// read-write open then says why).
absl::Status RefuseNewerLayout(const std::string& dir, const rocksdb::Options& opts);

}  // namespace rocks_format
}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_ROCKS_STORE_FILES_H_
