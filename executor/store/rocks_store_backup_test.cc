// RocksStore::Backup: a consistent copy taken while syncs go on opens as a
// store of its own holding exactly the state Backup reported.
#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/store/memory_store.h"
#include "executor/store/rocks_store.h"
#include "executor/store/store_test_util.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using ::berth::testing::Snapshot;
using ::berth::testing::Spec;
using ::berth::testing::T0;
using ::berth::testing::TempDir;
namespace v1 = ::berth::v1;

std::vector<v1::JobSpec> Jobs(int generation, int n) {
  std::vector<v1::JobSpec> jobs;
  for (int i = 0; i < n; ++i) jobs.push_back(Spec(absl::StrCat("g", generation, "-", i)));
  return jobs;
}

TEST(RocksStoreBackupTest, ACopyTakenDuringSyncsOpensWithTheReportedState) {
  const std::string dir = TempDir("backup-src");
  absl::StatusOr<std::unique_ptr<RocksStore>> opened = RocksStore::Open(dir);
  ASSERT_TRUE(opened.ok()) << opened.status();
  RocksStore& store = **opened;
  ASSERT_TRUE(store.ApplySnapshot(Snapshot(1, Jobs(1, 200)), T0()).ok());

  // A writer applies a new generation (every job replaced) as fast as it can
  // while the backups are taken.
  std::atomic<bool> stop{false};
  std::atomic<int> applied{1};
  std::thread writer([&] {
    for (int g = 2; !stop.load(); ++g) {
      if (!store.ApplySnapshot(Snapshot(g, Jobs(g, 200)), T0()).ok()) return;
      applied.store(g);
    }
  });
  std::vector<std::pair<std::string, BackupInfo>> copies;
  for (int i = 0; i < 5; ++i) {
    const std::string to = absl::StrCat(TempDir("backup-dst"), "/copy-", i);
    absl::StatusOr<BackupInfo> info = store.Backup(to);
    EXPECT_TRUE(info.ok()) << info.status();
    if (info.ok()) copies.emplace_back(to, *info);
  }
  stop.store(true);
  writer.join();
  ASSERT_EQ(copies.size(), 5u);
  EXPECT_GT(applied.load(), 1) << "the writer never ran beside the backups";

  for (const auto& [path, info] : copies) {
    EXPECT_EQ(info.schema_version, kRocksStoreSchemaVersion);
    EXPECT_GT(info.size_bytes, 0);
    absl::StatusOr<std::unique_ptr<RocksStore>> copy = RocksStore::Open(path);
    ASSERT_TRUE(copy.ok()) << copy.status();
    EXPECT_EQ((*copy)->CurrentRevision(), info.revision) << path;
    EXPECT_EQ((*copy)->LastAppliedGeneration(), info.last_generation) << path;
    EXPECT_EQ(static_cast<int64_t>((*copy)->JobCount()), info.jobs) << path;
    // One generation's jobs queued, never a mix of two.
    const std::vector<JobRecord> queued = (*copy)->JobsInState(v1::JOB_STATE_QUEUED);
    ASSERT_EQ(queued.size(), 200u) << path;
    const std::string prefix = absl::StrCat("g", info.last_generation, "-");
    for (const JobRecord& j : queued) EXPECT_EQ(j->id().rfind(prefix, 0), 0u) << j->id();
  }
}

// A copy's first open begins a new epoch that names the original's and the
// backup's revision; the original and later opens of the copy keep theirs.
TEST(RocksStoreBackupTest, ACopyOpensInANewEpochOnce) {
  const std::string dir = TempDir("epoch-src");
  std::string original_epoch;
  const std::string to = absl::StrCat(TempDir("epoch-dst"), "/copy");
  uint64_t backed_up = 0;
  {
    absl::StatusOr<std::unique_ptr<RocksStore>> store = RocksStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status();
    original_epoch = (*store)->Epoch().id;
    EXPECT_EQ(original_epoch.size(), 16u);
    EXPECT_FALSE((*store)->Epoch().began_at_open);
    ASSERT_TRUE((*store)->ApplySnapshot(Snapshot(1, Jobs(1, 3)), T0()).ok());
    int extra_calls = 0;
    absl::StatusOr<BackupInfo> info = (*store)->Backup(to, [&](const std::string& d) {
      ++extra_calls;
      EXPECT_EQ(d, to);
      return absl::OkStatus();
    });
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_EQ(extra_calls, 1);
    backed_up = info->revision;
    // The original moves on in its own epoch.
    ASSERT_TRUE((*store)->ApplySnapshot(Snapshot(2, Jobs(2, 3)), T0()).ok());
  }
  {
    absl::StatusOr<std::unique_ptr<RocksStore>> store = RocksStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_EQ((*store)->Epoch().id, original_epoch);
  }
  std::string restored_epoch;
  {
    absl::StatusOr<std::unique_ptr<RocksStore>> copy = RocksStore::Open(to);
    ASSERT_TRUE(copy.ok()) << copy.status();
    const StoreEpoch e = (*copy)->Epoch();
    EXPECT_NE(e.id, original_epoch);
    EXPECT_EQ(e.parent, original_epoch);
    EXPECT_EQ(e.since, backed_up);
    EXPECT_TRUE(e.began_at_open);
    ASSERT_TRUE(e.restored_at_generation.has_value());
    EXPECT_EQ(*e.restored_at_generation, 1u);
    EXPECT_TRUE(e.AwaitsFirstSyncAfterRestore((*copy)->LastAppliedGeneration()));
    restored_epoch = e.id;
  }
  EXPECT_FALSE(std::filesystem::exists(to + "/BERTH_STORE_BACKUP"));
  EXPECT_TRUE(std::filesystem::exists(to + "/BERTH_STORE_RESTORED"));
  absl::StatusOr<std::unique_ptr<RocksStore>> again = RocksStore::Open(to);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->Epoch().id, restored_epoch);
  EXPECT_EQ((*again)->Epoch().parent, original_epoch);
  EXPECT_FALSE((*again)->Epoch().began_at_open);
  // A restart before any newer sync still awaits it; after one, never again.
  EXPECT_TRUE((*again)->Epoch().AwaitsFirstSyncAfterRestore((*again)->LastAppliedGeneration()));
  ASSERT_TRUE((*again)->ApplySnapshot(Snapshot(2, Jobs(1, 3)), T0()).ok());
  again->reset();
  absl::StatusOr<std::unique_ptr<RocksStore>> synced = RocksStore::Open(to);
  ASSERT_TRUE(synced.ok()) << synced.status();
  EXPECT_EQ((*synced)->Epoch().id, restored_epoch);
  EXPECT_FALSE(
      (*synced)->Epoch().AwaitsFirstSyncAfterRestore((*synced)->LastAppliedGeneration()));
}

TEST(RocksStoreBackupTest, AFailedExtraCopyFailsTheBackup) {
  absl::StatusOr<std::unique_ptr<RocksStore>> store = RocksStore::Open(TempDir("extra-fails"));
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<BackupInfo> info =
      (*store)->Backup(absl::StrCat(TempDir("extra-fails-dst"), "/copy"), [](const std::string&) {
        return absl::ResourceExhaustedError("disk full");
      });
  EXPECT_EQ(info.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(RocksStoreBackupTest, RefusesAnExistingDirectory) {
  absl::StatusOr<std::unique_ptr<RocksStore>> store = RocksStore::Open(TempDir("backup-exists"));
  ASSERT_TRUE(store.ok()) << store.status();
  const std::string to = TempDir("backup-exists-dst");
  std::filesystem::create_directories(to);
  EXPECT_EQ((*store)->Backup(to).status().code(), absl::StatusCode::kAlreadyExists);
}

TEST(RocksStoreBackupTest, AMemoryStoreHasNothingToBackUp) {
  MemoryStore store;
  EXPECT_EQ(store.Backup(TempDir("memory-backup")).status().code(),
            absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace berth
