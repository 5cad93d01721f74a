// Tests' access to a closed RocksStore's raw RocksDB database: to write what
// an older (or newer, or damaged) Berth would have written. testonly.
#ifndef BERTH_EXECUTOR_STORE_ROCKS_STORE_RAW_TESTING_H_
#define BERTH_EXECUTOR_STORE_ROCKS_STORE_RAW_TESTING_H_

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rocksdb/db.h"

namespace berth::testing {

using RawFamilies = std::map<std::string, rocksdb::ColumnFamilyHandle*>;

// Opens the database in `dir` with every family it has and runs `f` on it.
inline void WithRawStore(const std::string& dir,
                         const std::function<void(rocksdb::DB*, const RawFamilies&)>& f) {
  std::vector<std::string> names;
  ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir, &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> descs;
  for (const auto& n : names) descs.emplace_back(n, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(rocksdb::DBOptions(), dir, descs, &handles, &db).ok());
  RawFamilies families;
  for (size_t i = 0; i < names.size(); ++i) families[names[i]] = handles[i];
  f(db, families);
  for (auto* h : handles) EXPECT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
  delete db;
}

// The same, on the meta family only.
inline void WithRawMeta(
    const std::string& dir,
    const std::function<void(rocksdb::DB*, rocksdb::ColumnFamilyHandle*)>& f) {
  WithRawStore(dir, [&](rocksdb::DB* db, const RawFamilies& fams) { f(db, fams.at("meta")); });
}

// A writable copy, in a new directory under TEST_TMPDIR, of the store
// fixture executor/store/testdata/store_<name> (the test needs it as data;
// runfiles are read-only links).
inline std::string CopyOfStoreFixture(const std::string& name) {
  namespace fs = std::filesystem;
  static int counter = 0;
  const fs::path src = fs::path(std::getenv("TEST_SRCDIR")) / "berth" / "executor" / "store" /
                       "testdata" / ("store_" + name);
  const fs::path dir =
      fs::path(std::getenv("TEST_TMPDIR")) / ("store-" + name + "-" + std::to_string(++counter));
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(src)) {
    fs::copy_file(fs::canonical(e.path()), dir / e.path().filename());
    fs::permissions(dir / e.path().filename(), fs::perms::owner_write, fs::perm_options::add);
  }
  return dir.string();
}

// Every file under `dir` (path relative to it) with its size, mtime and a
// hash of its contents: equal before and after means nothing in `dir` was written.
inline std::map<std::string, std::string> DirectoryState(const std::string& dir) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string rel = fs::relative(e.path(), dir).string();
    if (!e.is_regular_file()) {
      files[rel] = "(not a regular file)";
      continue;
    }
    std::ifstream in(e.path(), std::ios::binary);
    const std::string contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    files[rel] = std::to_string(e.file_size()) + " bytes, mtime " +
                 std::to_string(e.last_write_time().time_since_epoch().count()) +
                 ", contents hash " + std::to_string(std::hash<std::string>()(contents));
  }
  return files;
}

}  // namespace berth::testing

#endif  // BERTH_EXECUTOR_STORE_ROCKS_STORE_RAW_TESTING_H_
