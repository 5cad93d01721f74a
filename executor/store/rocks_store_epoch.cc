// The store's history epoch (StoreEpoch): read, begun for a new store, and
// begun anew when the store is a backup copy opened for the first time.
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "executor/store/rocks_store_format.h"
#include "executor/store/rocks_store_handles.h"
#include "planner/base/status_macros.h"

namespace berth {
namespace rocks_format {

namespace fs = std::filesystem;

namespace {

absl::StatusOr<StoreEpoch> ParseEpoch(const std::string& value, const std::string& dir) {
  // "<id> <parent or -> <since>[ <restored-at generation>]": the fourth field
  // is written for epochs begun from a backup copy; older records lack it.
  std::vector<std::string> parts = absl::StrSplit(value, ' ');
  StoreEpoch e;
  uint64_t generation = 0;
  if (parts.size() < 3 || parts.size() > 4 || parts[0].empty() ||
      !absl::SimpleAtoi(parts[2], &e.since) ||
      (parts.size() == 4 && !absl::SimpleAtoi(parts[3], &generation))) {
    return absl::DataLossError(absl::StrCat("store '", dir, "': corrupt epoch record"));
  }
  e.id = parts[0];
  e.parent = parts[1] == "-" ? std::string() : parts[1];
  if (parts.size() == 4) e.restored_at_generation = generation;
  return e;
}

}  // namespace

absl::StatusOr<StoreEpoch> OpenEpoch(RocksStore::Handles& h, const std::string& dir,
                                     uint64_t revision, uint64_t generation) {
  std::string value;
  rocksdb::Status s = h.db->Get(rocksdb::ReadOptions(), h.meta, kEpochKey, &value);
  std::optional<StoreEpoch> stored;
  if (s.ok()) {
    ASSIGN_OR_RETURN(stored, ParseEpoch(value, dir));
  } else if (!s.IsNotFound()) {
    RETURN_IF_ERROR(FromRocks(s, "reading the epoch"));
  }
  std::error_code ec;
  const fs::path marker = fs::path(dir) / kBackupMarker;
  const bool from_backup = fs::exists(marker, ec);
  if (ec) return FromErrorCode(ec, absl::StrCat("store '", dir, "': ", kBackupMarker));
  if (stored.has_value() && !from_backup) return *stored;

  StoreEpoch e;
  e.id = NewEpochId();
  if (from_backup) {
    // The revisions after `revision` were other events in the original.
    e.parent = stored.has_value() ? stored->id : std::string();
    e.since = revision;
    e.began_at_open = true;
    e.restored_at_generation = generation;
  }
  rocksdb::WriteOptions wo;
  wo.sync = true;
  RETURN_IF_ERROR(FromRocks(
      h.db->Put(wo, h.meta, kEpochKey,
                absl::StrCat(e.id, " ", e.parent.empty() ? "-" : e.parent, " ", e.since,
                             e.restored_at_generation.has_value()
                                 ? absl::StrCat(" ", *e.restored_at_generation)
                                 : std::string())),
      absl::StrCat("store '", dir, "': writing the epoch")));
  if (from_backup) {
    fs::rename(marker, fs::path(dir) / kRestoredMarker, ec);
    if (ec) {
      return FromErrorCode(ec, absl::StrCat("store '", dir, "': renaming ", kBackupMarker));
    }
  }
  return e;
}

}  // namespace rocks_format
}  // namespace berth
