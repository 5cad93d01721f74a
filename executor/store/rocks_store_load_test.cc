// RocksStore's background load (RocksStoreOptions::background_load): what
// answers while the jobs are still being read, what waits, and a load that
// fails.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "executor/store/rocks_store.h"
#include "executor/store/rocks_store_raw_testing.h"
#include "executor/store/store_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"

namespace berth {
namespace {

using ::berth::testing::RawFamilies;
using ::berth::testing::Snapshot;
using ::berth::testing::Spec;
using ::berth::testing::T0;
using ::berth::testing::TempDir;
using ::berth::testing::WithRawStore;
using ::testing::HasSubstr;
namespace v1 = ::berth::v1;

// A closed store with jobs a, b, c (generation 3), budgets set and
// admission paused.
std::string ClosedStore(const std::string& name) {
  const std::string dir = TempDir(name);
  auto store = RocksStore::Open(dir);
  EXPECT_TRUE(store.ok()) << store.status();
  if (!store.ok()) return dir;
  EXPECT_TRUE((*store)->ApplySnapshot(Snapshot(3, {Spec("a", 5), Spec("b"), Spec("c")}), T0()).ok());
  v1::Budgets budgets;
  budgets.set_memory_bytes(int64_t{8} << 30);
  budgets.set_cpu_millis(4000);
  budgets.set_max_workers(3);
  EXPECT_TRUE((*store)->SetBudgets(budgets, T0()).ok());
  EXPECT_TRUE((*store)->SetPaused(true, "maintenance window", T0()).ok());
  return dir;
}

// A background load held before its first job until `release` is notified.
struct HeldLoad {
  absl::Notification started;
  absl::Notification release;
  RocksStoreOptions Options() {
    RocksStoreOptions o;
    o.background_load = true;
    o.before_background_load = [this] {
      started.Notify();
      release.WaitForNotification();
    };
    return o;
  }
};

TEST(RocksStoreLoadTest, MetaAndSingleJobsAnswerWhileTheJobsLoad) {
  const std::string dir = ClosedStore("held-reads");
  HeldLoad held;
  auto opened = RocksStore::Open(dir, held.Options());
  ASSERT_TRUE(opened.ok()) << opened.status();
  RocksStore& store = **opened;
  held.started.WaitForNotification();
  ASSERT_FALSE(store.jobs_loaded());

  // The meta: read at Open.
  absl::StatusOr<v1::Budgets> budgets = store.GetBudgets();
  ASSERT_TRUE(budgets.ok()) << budgets.status();
  EXPECT_EQ(budgets->cpu_millis(), 4000);
  EXPECT_TRUE(store.GetControlState().paused());
  EXPECT_EQ(store.GetControlState().pause_reason(), "maintenance window");
  EXPECT_EQ(store.LastAppliedGeneration(), 3u);
  EXPECT_GT(store.CurrentRevision(), 0u);
  absl::StatusOr<EventPage> events = store.ReadEvents(0, 100);
  ASSERT_TRUE(events.ok()) << events.status();
  EXPECT_FALSE(events->events.empty());

  // One job: read from RocksDB, the same answer as once loaded.
  absl::StatusOr<StoredJob> a = store.GetJob("a");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->job.spec().id(), "a");
  EXPECT_EQ(a->job.spec().priority(), 5);
  EXPECT_EQ(a->job.state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(store.GetJob("nope").status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(store.jobs_loaded()) << "GetJob did not wait for the load";

  held.release.Notify();
  ASSERT_TRUE(store.AwaitJobsLoaded().ok());
  EXPECT_TRUE(store.jobs_loaded());
  absl::StatusOr<StoredJob> loaded = store.GetJob("a");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->job.SerializeAsString(), a->job.SerializeAsString());
}

TEST(RocksStoreLoadTest, ListsAndWritesWaitForTheLoadAndSeeEveryJob) {
  const std::string dir = ClosedStore("held-waits");
  HeldLoad held;
  auto opened = RocksStore::Open(dir, held.Options());
  ASSERT_TRUE(opened.ok()) << opened.status();
  RocksStore& store = **opened;
  held.started.WaitForNotification();

  // Started during the load; each records whether the jobs were loaded
  // when it returned.
  bool list_saw_loaded = false, has_saw_loaded = false, write_saw_loaded = false;
  absl::StatusOr<JobPage> page;
  bool has_b = false;
  absl::StatusOr<SnapshotResult> applied;
  std::thread list([&] {
    page = store.ListJobs(JobFilter{});
    list_saw_loaded = store.jobs_loaded();
  });
  std::thread has([&] {
    has_b = store.HasJob("b");
    has_saw_loaded = store.jobs_loaded();
  });
  std::thread write([&] {
    // b is absent: the diff must know a, b, c to cancel it.
    applied = store.ApplySnapshot(Snapshot(4, {Spec("a", 5), Spec("c"), Spec("d")}), T0());
    write_saw_loaded = store.jobs_loaded();
  });
  held.release.Notify();
  list.join();
  has.join();
  write.join();

  EXPECT_TRUE(list_saw_loaded);
  EXPECT_TRUE(has_saw_loaded);
  EXPECT_TRUE(write_saw_loaded);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_GE(page->jobs.size(), 3u);
  EXPECT_TRUE(has_b);
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(applied->response.added(), 1);
  EXPECT_EQ(applied->response.unchanged(), 2);
  EXPECT_EQ(applied->response.cancelled(), 1) << "b, loaded before the diff";
  EXPECT_EQ(store.JobCount(), 4u);
  EXPECT_EQ(store.GetJob("b")->job.state(), v1::JOB_STATE_CANCELLED);
}

TEST(RocksStoreLoadTest, ACorruptRecordFailsTheLoadAndEveryCallThatNeedsIt) {
  const std::string dir = ClosedStore("corrupt-job");
  WithRawStore(dir, [](rocksdb::DB* db, const RawFamilies& families) {
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), families.at("jobs"), "b", "\x09garbage").ok());
  });
  // Without a background load, Open refuses it.
  EXPECT_EQ(RocksStore::Open(dir).status().code(), absl::StatusCode::kDataLoss);

  absl::Status reported;
  absl::Notification done;
  RocksStoreOptions o;
  o.background_load = true;
  o.after_background_load = [&](const absl::Status& s, size_t) {
    reported = s;
    done.Notify();
  };
  auto opened = RocksStore::Open(dir, o);
  ASSERT_TRUE(opened.ok()) << opened.status();
  RocksStore& store = **opened;
  const absl::Status loaded = store.AwaitJobsLoaded();
  EXPECT_EQ(loaded.code(), absl::StatusCode::kDataLoss) << loaded;
  EXPECT_THAT(loaded.message(), HasSubstr("corrupt job record 'b'"));
  done.WaitForNotification();
  EXPECT_EQ(reported.code(), absl::StatusCode::kDataLoss);
  EXPECT_FALSE(store.jobs_loaded());
  // Never a wrong answer: the load's error, or nothing.
  EXPECT_EQ(store.GetJob("a").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(store.ListJobs(JobFilter{}).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(store.ApplySnapshot(Snapshot(4, {Spec("a")}), T0()).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(store.SetPaused(false, "", T0()).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(store.JobsInState(v1::JOB_STATE_QUEUED).empty());
  EXPECT_EQ(store.JobCount(), 0u);
}

TEST(RocksStoreLoadTest, WithoutABackgroundLoadOpenReturnsLoaded) {
  const std::string dir = ClosedStore("sync-load");
  auto opened = RocksStore::Open(dir);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_TRUE((*opened)->jobs_loaded());
  EXPECT_TRUE((*opened)->AwaitJobsLoaded().ok());
  EXPECT_EQ((*opened)->JobCount(), 3u);
}

}  // namespace
}  // namespace berth
