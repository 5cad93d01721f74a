// RocksStore::Backup: an online, consistent copy with RocksDB's Checkpoint.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "executor/store/rocks_store.h"
#include "executor/store/rocks_store_format.h"
#include "executor/store/rocks_store_handles.h"
#include "executor/store/rocks_store_write_gate.h"
#include "planner/base/status_macros.h"
#include "rocksdb/utilities/checkpoint.h"

namespace berth {

namespace fs = std::filesystem;
using rocks_format::FromErrorCode;
using rocks_format::FromRocks;

namespace {

// Writes and fsyncs a small file.
absl::Status WriteMarker(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
  if (fd < 0) {
    return FromErrorCode(std::error_code(errno, std::generic_category()), path);
  }
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok) return FromErrorCode(std::error_code(err, std::generic_category()), path);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BackupInfo> RocksStore::Backup(const std::string& dir) {
  return Backup(dir, nullptr);
}

absl::StatusOr<BackupInfo> RocksStore::Backup(const std::string& dir,
                                              const BackupExtraCopy& extra) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    return absl::AlreadyExistsError(absl::StrCat("backup directory '", dir, "' exists"));
  }
  if (ec) return FromErrorCode(ec, absl::StrCat("backup directory '", dir, "'"));
  const fs::path parent = fs::path(dir).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) return FromErrorCode(ec, absl::StrCat("backup directory's parent '", parent.string(), "'"));
  rocksdb::Checkpoint* raw = nullptr;
  RETURN_IF_ERROR(FromRocks(rocksdb::Checkpoint::Create(h_->db.get(), &raw), "backup"));
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  BackupInfo info;
  {
    // Writers are serialised by write_mu_ and each persists one WriteBatch:
    // holding it, the files are one store state and meta_ describes it.
    // Readers are not held up.
    absl::MutexLock write(&write_mu_);
    // A checkpoint flushes the memtables: never after an I/O error.
    RETURN_IF_ERROR(gate_->Check());
    // log_size_for_flush 0: memtables are flushed first, so the copy needs
    // no WAL replay and shares every file with the store by hard link.
    RETURN_IF_ERROR(FromRocks(checkpoint->CreateCheckpoint(dir, /*log_size_for_flush=*/0),
                              absl::StrCat("backup to '", dir, "'")));
    info.revision = CurrentRevision();
    info.last_generation = LastAppliedGeneration();
    info.jobs = static_cast<int64_t>(JobCount());
    // The copy's first open begins a new epoch (rocks_store_handles.h).
    RETURN_IF_ERROR(WriteMarker(
        (fs::path(dir) / rocks_format::kBackupMarker).string(),
        absl::StrCat("epoch ", Epoch().id, "\nrevision ", info.revision, "\n")));
    if (extra) RETURN_IF_ERROR(extra(dir));
  }
  info.schema_version = kRocksStoreSchemaVersion;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec)) info.size_bytes += static_cast<int64_t>(entry.file_size(ec));
  }
  if (ec) return FromErrorCode(ec, "measuring the backup");
  return info;
}

}  // namespace berth
