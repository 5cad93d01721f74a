// RocksStore-specific behaviour: persistence across reopen, refusing
// directories that are not (current) Berth stores, I/O errors.
#include "executor/store/rocks_store.h"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "executor/store/rocks_store_raw_testing.h"
#include "executor/store/store.pb.h"
#include "executor/store/store_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "rocksdb/file_system.h"

namespace berth {
namespace {

using ::berth::testing::Decide;
using ::berth::testing::DirectoryState;
using ::berth::testing::Snapshot;
using ::berth::testing::Spec;
using ::berth::testing::T0;
using ::berth::testing::TempDir;
using ::berth::testing::WithRawMeta;
using ::berth::testing::Tr;
using ::testing::HasSubstr;
namespace fs = std::filesystem;
namespace v1 = ::berth::v1;

std::unique_ptr<RocksStore> OpenOrDie(const std::string& dir,
                                      const RocksStoreOptions& o = {}) {
  auto s = RocksStore::Open(dir, o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

TEST(RocksStoreTest, ReopenKeepsEverything) {
  const std::string dir = TempDir("reopen");
  {
    auto store = OpenOrDie(dir);
    ASSERT_TRUE(store
                    ->ApplySnapshot(
                        Snapshot(3, {Spec("a"), Spec("b"), Spec("c")}), T0())
                    .ok());
    ASSERT_TRUE(store
                    ->RecordDecisions({Decide("a", DecisionKind::kAdmit,
                                              v1::JOB_STATE_QUEUED, "fits", 7)},
                                      T0())
                    .ok());
    ASSERT_TRUE(
        store
            ->Transition(Tr("a", v1::JOB_STATE_ADMITTED, v1::JOB_STATE_RUNNING),
                         T0())
            .ok());
    ASSERT_TRUE(
        store
            ->RecordDecisions({Decide("a", DecisionKind::kTimeout,
                                      v1::JOB_STATE_RUNNING, "late", 8)},
                              T0())
            .ok());
    v1::Budgets b;
    b.set_max_workers(24);
    ASSERT_TRUE(store->SetBudgets(b, T0()).ok());
    ASSERT_TRUE(store->SetPaused(true, "maintenance", T0()).ok());
    ASSERT_TRUE(store->SetPoolMaintenance("database", true, "", T0()).ok());
  }
  auto store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->LastAppliedGeneration(), 3u);
  EXPECT_EQ(store->CurrentRevision(), 9u);
  auto a = store->GetJob("a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->job.state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(a->stop_intent, StopIntent::kTimeout);
  EXPECT_EQ(store->JobsInState(v1::JOB_STATE_QUEUED).size(), 2u);
  auto d = store->DecisionsForJob("a");
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->size(), 2u);
  EXPECT_EQ((*d)[0].kind, DecisionKind::kAdmit);
  EXPECT_EQ((*d)[0].plan_generation, 7u);
  EXPECT_EQ((*d)[0].time, T0());
  EXPECT_EQ((*d)[1].kind, DecisionKind::kTimeout);
  EXPECT_EQ(store->GetBudgets()->max_workers(), 24);
  EXPECT_TRUE(store->GetControlState().paused());
  EXPECT_EQ(store->GetControlState().pools_in_maintenance_size(), 1);
  auto ev = store->ReadEvents(0, 100);
  ASSERT_TRUE(ev.ok());
  ASSERT_EQ(ev->events.size(), 9u);
  // Sequences continue after reopen.
  auto more = store->RecordDecisions(
      {Decide("b", DecisionKind::kAdmit, v1::JOB_STATE_QUEUED)}, T0());
  ASSERT_TRUE(more.ok());
  EXPECT_EQ((*more)[0].sequence, 3u);
  EXPECT_EQ((*more)[0].revision, 10u);
  // Idempotent re-send of the same generation after a restart.
  auto again = store->ApplySnapshot(Snapshot(3, {}), T0());
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->response.already_applied());
}

TEST(RocksStoreTest, SnapshotDigestSurvivesAReopen) {
  const std::string dir = TempDir("digest");
  {
    auto store = OpenOrDie(dir);
    ASSERT_NE(store, nullptr);
    SnapshotRequest r = Snapshot(3, {Spec("a")});
    r.digest = 42;
    ASSERT_TRUE(store->ApplySnapshot(r, T0()).ok());
  }
  auto store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  SnapshotRequest same = Snapshot(3, {});
  same.digest = 42;
  auto again = store->ApplySnapshot(same, T0());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->response.already_applied());
  SnapshotRequest other = Snapshot(3, {});
  other.digest = 43;
  EXPECT_EQ(store->ApplySnapshot(other, T0()).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(RocksStoreTest, CreatesOnlyTheLastComponentAndNothingBesideIt) {
  const std::string parent = TempDir("parent");
  fs::create_directories(parent);
  const std::string dir = parent + "/store";
  auto store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(fs::exists(fs::path(dir) / "CURRENT"));
  EXPECT_FALSE(fs::exists(fs::path(dir) / ".berth-creating"));
  // The parent holds the store directory and nothing else (under a service
  // sandbox the parent is read-only).
  EXPECT_EQ(std::distance(fs::directory_iterator(parent), {}), 1);
  auto size = store->DiskUsageBytes();
  ASSERT_TRUE(size.ok());
  EXPECT_GT(*size, 0u);
}

TEST(RocksStoreTest, ATrailingSlashNamesTheSameDirectory) {
  const std::string parent = TempDir("slash");
  fs::create_directories(parent);
  auto store = OpenOrDie(parent + "/store/");
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(fs::exists(fs::path(parent) / "store" / "CURRENT"));
  EXPECT_EQ(std::distance(fs::directory_iterator(parent), {}), 1);
}

TEST(RocksStoreTest, RefusesAMissingParentAndCreatesNothing) {
  const std::string base = TempDir("missing");
  fs::create_directories(base);
  const std::string dir = base + "/typo/b/store";
  auto s = RocksStore::Open(dir);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.status().message(), HasSubstr("neither does its parent '" + base + "/typo/b'"));
  EXPECT_EQ(std::distance(fs::directory_iterator(base), {}), 0);
}

TEST(RocksStoreTest, NewStoreInAnEmptyDirAndRedoneAfterAnInterruptedCreation) {
  const std::string dir = TempDir("empty");
  fs::create_directories(dir);
  {
    auto store = OpenOrDie(dir);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->ApplySnapshot(Snapshot(1, {Spec("a")}), T0()).ok());
  }
  // What a creation killed half-way leaves: the marker with a database.
  std::ofstream(fs::path(dir) / ".berth-creating") << "";
  {
    auto store = OpenOrDie(dir);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->LastAppliedGeneration(), 0u);  // wiped and created anew
    ASSERT_TRUE(store->ApplySnapshot(Snapshot(2, {Spec("b")}), T0()).ok());
  }
  EXPECT_FALSE(fs::exists(fs::path(dir) / ".berth-creating"));
  auto store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->LastAppliedGeneration(), 2u);
}

TEST(RocksStoreTest, RefusesADirectoryThatIsNotAStore) {
  const std::string dir = TempDir("foreign");
  fs::create_directories(dir);
  std::ofstream(dir + "/notes.txt") << "precious";
  auto s = RocksStore::Open(dir);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.status().message(), HasSubstr("not a Berth store"));
  EXPECT_FALSE(fs::exists(dir + "/CURRENT"));  // never initialised
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), {}), 1);
}

TEST(RocksStoreTest, RefusesAFile) {
  const std::string path = TempDir("file");
  std::ofstream(path) << "x";
  EXPECT_EQ(RocksStore::Open(path).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(RocksStoreTest, RefusesAnotherRocksDbDatabase) {
  const std::string dir = TempDir("otherdb");
  {
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(o, dir, &db).ok());
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "k", "v").ok());
    delete db;
  }
  auto s = RocksStore::Open(dir);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.status().message(), HasSubstr("not a Berth store"));
}

TEST(RocksStoreTest, RefusesANewerSchema) {
  const std::string dir = TempDir("newer");
  OpenOrDie(dir);
  WithRawMeta(dir, [](rocksdb::DB* db, rocksdb::ColumnFamilyHandle* meta) {
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), meta, "schema_version",
                        std::to_string(kRocksStoreSchemaVersion + 1))
                    .ok());
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), meta, "written_by", "berthd 9.9.9").ok());
  });
  // The newer version is in the write-ahead log only (no flush): a
  // read-write open would replay it into a new table file.
  const auto before = DirectoryState(dir);
  auto s = RocksStore::Open(dir);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.status().message(), HasSubstr("newer"));
  EXPECT_THAT(s.status().message(), HasSubstr("berthd 9.9.9"));
  EXPECT_EQ(DirectoryState(dir), before) << "the refused store was written";
  // And again (a supervisor retrying): still nothing written.
  EXPECT_EQ(RocksStore::Open(dir).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(DirectoryState(dir), before) << "the second refusal wrote the store";
}

// The maintenance reason survives a reopen; a meta record written before
// reasons were kept (no maintenance_reasons) still opens, without a reason.
TEST(RocksStoreTest, MaintenanceReasonSurvivesAReopenAndOldRecordsOpen) {
  const std::string dir = TempDir("maintenance-reason");
  {
    auto store = OpenOrDie(dir);
    ASSERT_TRUE(store->SetPoolMaintenance("database", true, "db upgrade", T0()).ok());
  }
  {
    auto store = OpenOrDie(dir);
    ASSERT_NE(store, nullptr);
    v1::ControlState cs = store->GetControlState();
    EXPECT_THAT(cs.pools_in_maintenance(), ::testing::ElementsAre("database"));
    EXPECT_EQ(cs.maintenance_reasons().at("database"), "db upgrade");
  }
  WithRawMeta(dir, [](rocksdb::DB* db, rocksdb::ColumnFamilyHandle* meta) {
    std::string raw;
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), meta, "state", &raw).ok());
    berth::store::MetaRecord r;
    ASSERT_TRUE(r.ParseFromString(raw));
    ASSERT_EQ(r.maintenance_reasons_size(), 1);
    r.clear_maintenance_reasons();  // as an older berthd wrote it
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), meta, "state", r.SerializeAsString()).ok());
  });
  auto store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  v1::ControlState cs = store->GetControlState();
  EXPECT_THAT(cs.pools_in_maintenance(), ::testing::ElementsAre("database"));
  EXPECT_TRUE(cs.maintenance_reasons().empty());
}

TEST(RocksStoreTest, RefusesACorruptMetaRecord) {
  const std::string dir = TempDir("corrupt-meta");
  OpenOrDie(dir);
  WithRawMeta(dir, [](rocksdb::DB* db, rocksdb::ColumnFamilyHandle* meta) {
    ASSERT_TRUE(
        db->Put(rocksdb::WriteOptions(), meta, "state", "\xff\xff\xff").ok());
  });
  EXPECT_EQ(RocksStore::Open(dir).status().code(), absl::StatusCode::kDataLoss);
}

TEST(RocksStoreTest, RefusesACorruptDatabase) {
  const std::string dir = TempDir("corrupt");
  {
    auto store = OpenOrDie(dir);
    ASSERT_TRUE(store->ApplySnapshot(Snapshot(1, {Spec("a")}), T0()).ok());
  }
  // Garble every MANIFEST: the database cannot be recovered.
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("MANIFEST", 0) == 0) {
      std::ofstream(e.path(), std::ios::binary | std::ios::trunc)
          << std::string(200, '\x5a');
    }
  }
  auto s = RocksStore::Open(dir);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << s.status();
  EXPECT_TRUE(fs::exists(dir + "/CURRENT"));  // left for the operator
}

// A sync that changed no job wrote its generation without an event: the
// reopened store has it, at the same revision.
TEST(RocksStoreTest, GenerationOfAnEventlessSyncSurvivesReopen) {
  const std::string dir = TempDir("eventless");
  uint64_t revision = 0;
  {
    auto store = OpenOrDie(dir);
    ASSERT_TRUE(store->ApplySnapshot(Snapshot(1, {Spec("a")}), T0()).ok());
    revision = store->CurrentRevision();
    ASSERT_TRUE(store->ApplySnapshot(Snapshot(2, {Spec("a")}), T0()).ok());
    EXPECT_EQ(store->CurrentRevision(), revision);
  }
  auto store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->LastAppliedGeneration(), 2u);
  EXPECT_EQ(store->CurrentRevision(), revision);
}

TEST(RocksStoreTest, SecondOpenIsRefusedWhileLocked) {
  const std::string dir = TempDir("locked");
  auto first = OpenOrDie(dir);
  auto second = RocksStore::Open(dir);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable)
      << second.status();
}

// A file system that can pretend to be full or read-only.
class FaultFs : public rocksdb::FileSystemWrapper {
 public:
  enum Mode { kOk, kFull, kReadOnly };
  explicit FaultFs(const std::shared_ptr<rocksdb::FileSystem>& t)
      : FileSystemWrapper(t) {}
  const char* Name() const override { return "FaultFs"; }

  std::atomic<Mode> mode{kOk};

  class File : public rocksdb::FSWritableFileOwnerWrapper {
   public:
    File(std::unique_ptr<rocksdb::FSWritableFile> f, const FaultFs* fs)
        : FSWritableFileOwnerWrapper(std::move(f)), fs_(fs) {}
    rocksdb::IOStatus Append(const rocksdb::Slice& data,
                             const rocksdb::IOOptions& o,
                             rocksdb::IODebugContext* dbg) override {
      if (fs_->mode == kFull) return rocksdb::IOStatus::NoSpace("fault fs");
      return FSWritableFileOwnerWrapper::Append(data, o, dbg);
    }
    rocksdb::IOStatus Append(const rocksdb::Slice& data,
                             const rocksdb::IOOptions& o,
                             const rocksdb::DataVerificationInfo& v,
                             rocksdb::IODebugContext* dbg) override {
      if (fs_->mode == kFull) return rocksdb::IOStatus::NoSpace("fault fs");
      return FSWritableFileOwnerWrapper::Append(data, o, v, dbg);
    }

   private:
    const FaultFs* fs_;
  };

  rocksdb::IOStatus NewWritableFile(const std::string& f,
                                    const rocksdb::FileOptions& o,
                                    std::unique_ptr<rocksdb::FSWritableFile>* r,
                                    rocksdb::IODebugContext* dbg) override {
    if (mode == kReadOnly) {
      return rocksdb::IOStatus::IOError(f, "Permission denied");
    }
    rocksdb::IOStatus s = target()->NewWritableFile(f, o, r, dbg);
    if (s.ok()) r->reset(new File(std::move(*r), this));
    return s;
  }
};

struct FaultEnv {
  FaultEnv()
      : fs(std::make_shared<FaultFs>(rocksdb::FileSystem::Default())),
        env(rocksdb::NewCompositeEnv(fs)) {}
  std::shared_ptr<FaultFs> fs;
  std::unique_ptr<rocksdb::Env> env;
};

TEST(RocksStoreTest, FullDiskReturnsErrorsAndChangesNothing) {
  const std::string dir = TempDir("full");
  FaultEnv fault;
  RocksStoreOptions o;
  o.env = fault.env.get();
  {
    auto store = OpenOrDie(dir, o);
    ASSERT_TRUE(store->ApplySnapshot(Snapshot(1, {Spec("a")}), T0()).ok());
    fault.fs->mode = FaultFs::kFull;
    auto r = store->ApplySnapshot(Snapshot(2, {Spec("a"), Spec("b")}), T0());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted)
        << r.status();
    EXPECT_EQ(store->LastAppliedGeneration(), 1u);
    EXPECT_EQ(store->GetJob("b").status().code(), absl::StatusCode::kNotFound);
    EXPECT_EQ(store->CurrentRevision(), 2u);
    auto d = store->RecordDecisions(
        {Decide("a", DecisionKind::kAdmit, v1::JOB_STATE_QUEUED)}, T0());
    EXPECT_FALSE(d.ok());
    EXPECT_EQ(store->GetJob("a")->job.state(), v1::JOB_STATE_QUEUED);
  }
  fault.fs->mode = FaultFs::kOk;
  auto store = OpenOrDie(dir, o);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->LastAppliedGeneration(), 1u);
  EXPECT_EQ(store->CurrentRevision(), 2u);
  EXPECT_EQ(store->GetJob("a")->job.state(), v1::JOB_STATE_QUEUED);
  EXPECT_TRUE(
      store->ApplySnapshot(Snapshot(2, {Spec("a"), Spec("b")}), T0()).ok());
}

TEST(RocksStoreTest, ReadOnlyDirectoryIsAnError) {
  FaultEnv fault;
  fault.fs->mode = FaultFs::kReadOnly;
  RocksStoreOptions o;
  o.env = fault.env.get();
  auto fresh = RocksStore::Open(TempDir("ro-new"), o);
  EXPECT_EQ(fresh.status().code(), absl::StatusCode::kPermissionDenied)
      << fresh.status();

  const std::string dir = TempDir("ro-existing");
  fault.fs->mode = FaultFs::kOk;
  OpenOrDie(dir, o);
  fault.fs->mode = FaultFs::kReadOnly;
  auto existing = RocksStore::Open(dir, o);
  EXPECT_EQ(existing.status().code(), absl::StatusCode::kPermissionDenied)
      << existing.status();
}

}  // namespace
}  // namespace berth
