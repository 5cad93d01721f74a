// A write beyond RocksStoreOptions::memtable_budget_bytes is flushed before
// it returns (its memtables are not held beside what the caller does next);
// smaller writes stay in the memtables.
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/store/rocks_store.h"
#include "executor/store/store_test_util.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using ::berth::testing::Snapshot;
using ::berth::testing::Spec;
using ::berth::testing::T0;
using ::berth::testing::TempDir;

// Table files in the store's directory.
int TableFiles(const std::string& dir) {
  int n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.path().extension() == ".sst") ++n;
  }
  return n;
}

std::vector<v1::JobSpec> Specs(int n, const std::string& prefix) {
  std::vector<v1::JobSpec> specs;
  for (int i = 0; i < n; ++i) specs.push_back(Spec(absl::StrCat(prefix, i)));
  return specs;
}

TEST(RocksStoreFlushTest, AWriteBeyondTheBudgetIsFlushedBeforeItReturns) {
  const std::string dir = TempDir("flush");
  RocksStoreOptions o;
  o.memtable_budget_bytes = 1 << 20;
  auto opened = RocksStore::Open(dir, o);
  ASSERT_TRUE(opened.ok()) << opened.status();
  RocksStore& store = **opened;
  // A small write stays in the memtables: no new table file.
  const int created = TableFiles(dir);
  ASSERT_TRUE(store.ApplySnapshot(Snapshot(1, Specs(10, "small-")), T0()).ok());
  const int before = TableFiles(dir);
  EXPECT_EQ(before, created);
  // ~5 MiB of jobs and events in one write: flushed when it returns, every
  // family that holds them (jobs, events) in a table file.
  std::vector<v1::JobSpec> big = Specs(20000, "big-");
  ASSERT_TRUE(store.ApplySnapshot(Snapshot(2, big), T0()).ok());
  EXPECT_GE(TableFiles(dir), before + 2);
  // The jobs are still all there, and survive a reopen.
  EXPECT_EQ(store.CountJobsInState(v1::JOB_STATE_QUEUED), 20000u);
  opened->reset();
  auto again = RocksStore::Open(dir, o);
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_TRUE((*again)->AwaitJobsLoaded().ok());
  EXPECT_EQ((*again)->CountJobsInState(v1::JOB_STATE_QUEUED), 20000u);
}

}  // namespace
}  // namespace berth
