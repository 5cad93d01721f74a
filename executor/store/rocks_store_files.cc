// Creating a store inside its directory, and the read-only version probe.
#include "executor/store/rocks_store_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <memory>
#include <system_error>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "executor/store/rocks_store.h"
#include "executor/store/rocks_store_format.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"

namespace berth {
namespace rocks_format {

namespace fs = std::filesystem;

namespace {

absl::Status Errno(int err, const std::string& what) {
  return FromErrorCode(std::error_code(err, std::generic_category()), what);
}

// Drops RocksDB's info log: a read-only probe must not create or rotate
// the LOG files of the store it looks at.
class DiscardingLogger : public rocksdb::Logger {
 public:
  using rocksdb::Logger::Logv;
  void Logv(const char* /*format*/, va_list /*ap*/) override {}
};

}  // namespace

absl::Status SyncDir(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno(errno, absl::StrCat("opening '", dir.string(), "'"));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return Errno(err, absl::StrCat("syncing '", dir.string(), "'"));
  return absl::OkStatus();
}

absl::Status WriteSyncedFile(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Errno(errno, absl::StrCat("creating '", path.string(), "'"));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return Errno(err, absl::StrCat("syncing '", path.string(), "'"));
  return absl::OkStatus();
}

absl::Status EmptyDirectory(const fs::path& dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    fs::remove_all(it->path(), ec);
    if (ec) return FromErrorCode(ec, absl::StrCat("removing '", it->path().string(), "'"));
  }
  if (ec) return FromErrorCode(ec, absl::StrCat("listing '", dir.string(), "'"));
  return absl::OkStatus();
}

absl::Status NewerLayoutError(const std::string& dir, int version, const std::string& writer) {
  return absl::FailedPreconditionError(absl::StrCat(
      "store '", dir, "' has schema version ", version, ", newer than the supported version ",
      kRocksStoreSchemaVersion, " (last written by ", writer.empty() ? "a newer Berth" : writer,
      "); refusing to open it (left untouched): run that version or a later one, or restore a "
      "backup taken before the upgrade"));
}

absl::Status RefuseNewerLayout(const std::string& dir, const rocksdb::Options& opts) {
  std::vector<std::string> names;
  if (!rocksdb::DB::ListColumnFamilies(opts, dir, &names).ok() ||
      std::find(names.begin(), names.end(), kMetaCf) == names.end()) {
    return absl::OkStatus();
  }
  rocksdb::Options ro = opts;
  ro.info_log = std::make_shared<DiscardingLogger>();
  // Read-only, a subset of the families may be opened: the default one
  // (required) and meta, where the version is.
  std::vector<rocksdb::ColumnFamilyDescriptor> descs;
  descs.emplace_back(rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions(ro));
  descs.emplace_back(kMetaCf, rocksdb::ColumnFamilyOptions(ro));
  std::vector<rocksdb::ColumnFamilyHandle*> cfs;
  rocksdb::DB* raw = nullptr;
  if (!rocksdb::DB::OpenForReadOnly(ro, dir, descs, &cfs, &raw).ok()) return absl::OkStatus();
  std::unique_ptr<rocksdb::DB> db(raw);
  std::string value, writer;
  const bool have = db->Get(rocksdb::ReadOptions(), cfs[1], kSchemaKey, &value).ok();
  if (!db->Get(rocksdb::ReadOptions(), cfs[1], kWriterKey, &writer).ok()) writer.clear();
  for (auto* cf : cfs) (void)db->DestroyColumnFamilyHandle(cf);
  int version = 0;
  if (have && absl::SimpleAtoi(value, &version) && version > kRocksStoreSchemaVersion) {
    return NewerLayoutError(dir, version, writer);
  }
  return absl::OkStatus();
}

}  // namespace rocks_format
}  // namespace berth
