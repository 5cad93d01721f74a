// Upgrading: berthd started on a data dir written by the
// previous store layout (executor/store/testdata/store_v1) upgrades it in
// place, says so in its log and serves what it held; a data dir of a newer
// layout is refused at start-up (exit status 2) naming both versions and the
// Berth that wrote it, and is left as it was: not one file of the data dir
// is created, removed or rewritten, however often the start is retried.
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "executor/store/rocks_store.h"
#include "executor/store/rocks_store_raw_testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/berthd_process.h"

namespace berth {
namespace {

using ::berth::testing::CopyOfStoreFixture;
using ::berth::testing::DirectoryState;
using ::berth::testing::WithRawMeta;
using ::testing::HasSubstr;

TEST(BerthdUpgradeTest, UpgradesTheLastLayoutAndRefusesANewerOne) {
  BerthdProcessOptions o;
  o.data_dir = CopyOfStoreFixture("v1");
  absl::StatusOr<std::unique_ptr<BerthdProcess>> started = BerthdProcess::Start(o);
  ASSERT_TRUE(started.ok()) << started.status();
  std::unique_ptr<BerthdProcess> b = std::move(*started);
  EXPECT_THAT(b->Log(), HasSubstr(R"("msg":"store upgraded")"));
  EXPECT_THAT(b->Log(), HasSubstr(R"("from_schema_version":1)"));
  std::unique_ptr<BerthClient> reader = b->Client(Role::kReader);
  absl::StatusOr<v1::Job> a1 = reader->GetJob("a1");
  ASSERT_TRUE(a1.ok()) << a1.status();
  EXPECT_EQ(a1->state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(a1->observed().peak_memory_bytes(), 123456789);
  absl::StatusOr<v1::Job> a2 = reader->GetJob("a2");
  ASSERT_TRUE(a2.ok()) << a2.status();
  EXPECT_EQ(a2->failure_cause(), v1::FAILURE_CAUSE_OOM_KILLED);
  ASSERT_EQ(b->Terminate(absl::Seconds(30)), 0);

  // The same data dir as a later Berth would leave it.
  std::string before;
  WithRawMeta(o.data_dir, [&](rocksdb::DB* db, rocksdb::ColumnFamilyHandle* meta) {
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), meta, "schema_version",
                        std::to_string(kRocksStoreSchemaVersion + 1))
                    .ok());
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), meta, "written_by", "berthd 99.0.0").ok());
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), meta, "state", &before).ok());
  });
  const auto files_before = DirectoryState(o.data_dir);
  const absl::Status refused = b->Restart();
  ASSERT_FALSE(refused.ok()) << "berthd started on a newer store";
  EXPECT_EQ(DirectoryState(o.data_dir), files_before) << "the refused start wrote the data dir";
  ASSERT_FALSE(b->Restart().ok()) << "berthd started on a newer store";
  EXPECT_EQ(DirectoryState(o.data_dir), files_before) << "a second refused start wrote it";
  const std::string log = b->Log();
  EXPECT_THAT(log, HasSubstr(absl::StrCat("has schema version ", kRocksStoreSchemaVersion + 1,
                                          ", newer than the supported version ",
                                          kRocksStoreSchemaVersion)));
  EXPECT_THAT(log, HasSubstr("berthd 99.0.0"));
  EXPECT_THAT(log, HasSubstr(R"("exit_status":2)"));
  WithRawMeta(o.data_dir, [&](rocksdb::DB* db, rocksdb::ColumnFamilyHandle* meta) {
    std::string v, after;
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), meta, "schema_version", &v).ok());
    EXPECT_EQ(v, std::to_string(kRocksStoreSchemaVersion + 1));
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), meta, "written_by", &v).ok());
    EXPECT_EQ(v, "berthd 99.0.0");
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), meta, "state", &after).ok());
    EXPECT_EQ(after, before);
  });
}

// A --data_dir whose parent is missing is a typo far more often than a wish:
// berthd refuses it with the start-up error line and creates nothing.
TEST(BerthdUpgradeTest, RefusesADataDirWhoseParentIsMissing) {
  namespace fs = std::filesystem;
  const fs::path base = fs::path(std::getenv("TEST_TMPDIR")) / "missing-parent";
  fs::create_directories(base);
  BerthdProcessOptions o;
  o.data_dir = (base / "typo" / "berth").string();
  absl::StatusOr<std::unique_ptr<BerthdProcess>> started = BerthdProcess::Start(o);
  ASSERT_FALSE(started.ok()) << "berthd started on a data dir whose parent is missing";
  const std::string log(started.status().message());
  EXPECT_THAT(log, HasSubstr(R"("msg":"berthd did not start")"));
  EXPECT_THAT(log, HasSubstr(R"("code":"FAILED_PRECONDITION")"));
  EXPECT_THAT(log, HasSubstr(R"("exit_status":2)"));
  EXPECT_THAT(log, HasSubstr(absl::StrCat("neither does its parent '", (base / "typo").string())));
  EXPECT_FALSE(fs::exists(base / "typo"));
}

}  // namespace
}  // namespace berth
