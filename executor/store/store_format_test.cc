// The store's format version: a store written by the previous layout
// (testdata/store_v1, written by testdata/write_store_fixture at schema
// version 1) opens, upgraded in place, with everything it held; an upgrade
// interrupted half-way is redone; a newer store is refused (rocks_store_test).
#include <string>

#include "executor/store/rocks_store.h"
#include "executor/store/rocks_store_raw_testing.h"
#include "executor/store/store_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"

namespace berth {
namespace {

namespace v1 = ::berth::v1;
using ::berth::testing::CopyOfStoreFixture;
using ::berth::testing::RawFamilies;
using ::berth::testing::Snapshot;
using ::berth::testing::Spec;
using ::berth::testing::T0;
using ::berth::testing::WithRawStore;
using ::testing::ElementsAre;

// What write_store_fixture wrote, as this Berth reads it.
void ExpectFixtureContents(RocksStore& store) {
  EXPECT_EQ(store.LastAppliedGeneration(), 3u);
  EXPECT_EQ(store.CurrentRevision(), 13u);
  auto a1 = store.GetJob("a1");
  ASSERT_TRUE(a1.ok()) << a1.status();
  EXPECT_EQ(a1->job.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(a1->job.observed().peak_memory_bytes(), 123456789);
  EXPECT_EQ(a1->job.spec().priority(), 5);
  auto a2 = store.GetJob("a2");
  ASSERT_TRUE(a2.ok()) << a2.status();
  EXPECT_EQ(a2->job.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(a2->job.failure_cause(), v1::FAILURE_CAUSE_OOM_KILLED);
  EXPECT_EQ(store.JobsInState(v1::JOB_STATE_QUEUED).size(), 2u);
  auto d1 = store.GetJob("d1");
  ASSERT_TRUE(d1.ok()) << d1.status();
  EXPECT_EQ(d1->job.spec().resources().memory_bytes(), int64_t{2} << 30);
  auto decisions = store.DecisionsForJob("a1");
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  ASSERT_EQ(decisions->size(), 1u);
  EXPECT_EQ((*decisions)[0].kind, DecisionKind::kAdmit);
  EXPECT_EQ((*decisions)[0].reason, "fits");
  EXPECT_EQ((*decisions)[0].plan_generation, 3u);
  auto budgets = store.GetBudgets();
  ASSERT_TRUE(budgets.ok());
  EXPECT_EQ(budgets->max_workers(), 12);
  EXPECT_EQ(budgets->memory_bytes(), int64_t{64} << 30);
  EXPECT_EQ(budgets->cpu_millis(), 16000);
  const v1::ControlState cs = store.GetControlState();
  EXPECT_THAT(cs.pools_in_maintenance(), ElementsAre("database"));
  EXPECT_EQ(cs.maintenance_reasons().at("database"), "disk swap");
  auto usage = store.UsageHistoryOf("ws-a", "cohort-extraction");
  ASSERT_TRUE(usage.ok()) << usage.status();
  ASSERT_EQ(usage->runs.size(), 2u);
  EXPECT_EQ(usage->runs[0].peak_memory_bytes, 123456789);
  EXPECT_EQ(usage->runs[0].run_time, absl::Seconds(600));
  EXPECT_EQ(usage->runs[1].failure_cause, v1::FAILURE_CAUSE_OOM_KILLED);
  auto events = store.ReadEvents(0, 100);
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->events.size(), 13u);
}

// The raw layout of a version-2 store: usage histories in their family,
// none left in meta.
void ExpectVersion2Layout(const std::string& dir, int usage_keys) {
  WithRawStore(dir, [&](rocksdb::DB* db, const RawFamilies& f) {
    std::string v;
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), f.at("meta"), "schema_version", &v).ok());
    EXPECT_EQ(v, "2");
    int in_meta = 0, in_usage = 0;
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), f.at("meta")));
    for (it->SeekToFirst(); it->Valid(); it->Next()) in_meta += it->key().starts_with("usage");
    it.reset(db->NewIterator(rocksdb::ReadOptions(), f.at("usage")));
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++in_usage;
    EXPECT_EQ(in_meta, 0);
    EXPECT_EQ(in_usage, usage_keys);
  });
}

TEST(StoreFormatTest, OpensAVersion1StoreAndUpgradesItInPlace) {
  const std::string dir = CopyOfStoreFixture("v1");
  WithRawStore(dir, [](rocksdb::DB*, const RawFamilies& f) {
    ASSERT_EQ(f.count("usage"), 0u) << "the fixture is not in the version-1 layout";
  });
  {
    RocksStoreOptions o;
    o.writer = "berthd test";
    auto store = RocksStore::Open(dir, o);
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_EQ((*store)->migrated_from(), 1);
    ExpectFixtureContents(**store);
  }
  ExpectVersion2Layout(dir, 1);
  WithRawStore(dir, [](rocksdb::DB* db, const RawFamilies& f) {
    std::string w;
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), f.at("meta"), "written_by", &w).ok());
    EXPECT_EQ(w, "berthd test");
  });
  // Upgraded once: the next Open finds the current version, and the store
  // goes on working (a new snapshot, a new usage history).
  auto store = RocksStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*store)->migrated_from(), 0);
  ExpectFixtureContents(**store);
  auto applied = (*store)->ApplySnapshot(Snapshot(4, {Spec("c1"), Spec("e1")}), T0());
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_TRUE((*store)->HasJob("e1"));
}

// The upgrade adds the usage family, then writes one batch. A crash between
// the two leaves a version-1 store with an empty usage family: the next Open
// redoes the upgrade.
TEST(StoreFormatTest, AnInterruptedUpgradeIsRedone) {
  const std::string dir = CopyOfStoreFixture("v1");
  WithRawStore(dir, [](rocksdb::DB* db, const RawFamilies&) {
    rocksdb::ColumnFamilyHandle* cf = nullptr;
    ASSERT_TRUE(db->CreateColumnFamily(rocksdb::ColumnFamilyOptions(), "usage", &cf).ok());
    ASSERT_TRUE(db->DestroyColumnFamilyHandle(cf).ok());
  });
  {
    auto store = RocksStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_EQ((*store)->migrated_from(), 1);
    ExpectFixtureContents(**store);
  }
  ExpectVersion2Layout(dir, 1);
}

// A store that says it is current but lacks a family of the current layout
// is damaged, not upgraded silently.
TEST(StoreFormatTest, ACurrentStoreWithoutAFamilyIsDataLoss) {
  const std::string dir = CopyOfStoreFixture("v1");
  WithRawStore(dir, [](rocksdb::DB* db, const RawFamilies& f) {
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), f.at("meta"), "schema_version", "2").ok());
  });
  auto store = RocksStore::Open(dir);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss) << store.status();
  EXPECT_THAT(std::string(store.status().message()), ::testing::HasSubstr("'usage'"));
}

}  // namespace
}  // namespace berth
