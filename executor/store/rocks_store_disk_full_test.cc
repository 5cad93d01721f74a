// A RocksStore on a real file system that fills up (a small tmpfs, mounted
// by the test: it runs as root) and is then freed: writes are refused with
// RESOURCE_EXHAUSTED and change nothing, reads go on, the process survives
// (Debian's librocksdb asserts when a file that failed is written again),
// and once there is room the store accepts writes by itself and has lost
// nothing.
#include <sys/mount.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "executor/store/rocks_store.h"
#include "executor/store/store_test_util.h"
#include "executor/store/tmpfs_testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using ::berth::testing::Decide;
using ::berth::testing::Snapshot;
using ::berth::testing::Spec;
using ::berth::testing::T0;
using ::berth::testing::TempDir;
using ::berth::testing::Tmpfs;
using ::berth::testing::Tr;
using ::testing::HasSubstr;
namespace fs = std::filesystem;
namespace v1 = ::berth::v1;


std::vector<v1::JobSpec> Jobs(int n, int priority) {
  std::vector<v1::JobSpec> jobs;
  for (int i = 0; i < n; ++i) jobs.push_back(Spec(absl::StrCat("j", i), priority));
  return jobs;
}

// Syncs generation *generation, *generation + 1, ... (each changing every
// job's priority) until one is refused; *generation is then the last one
// applied. A write can succeed on a full file system: RocksDB preallocates
// its log file.
absl::Status SyncUntilRefused(RocksStore& store, int jobs, uint64_t* generation) {
  for (int i = 0; i < 10000; ++i) {
    auto r = store.ApplySnapshot(
        Snapshot(*generation + 1, Jobs(jobs, static_cast<int>(*generation + 1))), T0());
    if (!r.ok()) return r.status();
    ++*generation;
  }
  return absl::InternalError("never refused");
}

// The store's write health as its callback reported it.
struct HealthLog {
  absl::Mutex mu;
  std::vector<absl::Status> reports ABSL_GUARDED_BY(mu);
  void Add(const absl::Status& s) {
    absl::MutexLock l(&mu);
    reports.push_back(s);
  }
  // Waits up to `timeout` for `n` reports.
  bool Await(size_t n, absl::Duration timeout) {
    absl::MutexLock l(&mu);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return reports.size() >= n; };
    return mu.AwaitWithTimeout(absl::Condition(&enough), timeout);
  }
  absl::Status At(size_t i) {
    absl::MutexLock l(&mu);
    return reports.at(i);
  }
};

TEST(RocksStoreDiskFullTest, RefusesWritesWhileFullAndResumesByItself) {
  Tmpfs tmpfs(TempDir("tmpfs"), 16);
  ASSERT_EQ(tmpfs.error(), "");
  const std::string dir = tmpfs.dir() + "/store";
  HealthLog health;
  RocksStoreOptions o;
  o.write_probe_interval = absl::Milliseconds(100);
  o.resume_min_free_bytes = int64_t{1} << 20;
  o.on_write_health = [&health](const absl::Status& s) { health.Add(s); };
  auto opened = RocksStore::Open(dir, o);
  ASSERT_TRUE(opened.ok()) << opened.status();
  std::unique_ptr<RocksStore> store = *std::move(opened);
  ASSERT_TRUE(store->ApplySnapshot(Snapshot(1, Jobs(200, 0)), T0()).ok());
  ASSERT_TRUE(store
                  ->RecordDecisions({Decide("j0", DecisionKind::kAdmit, v1::JOB_STATE_QUEUED)},
                                    T0())
                  .ok());
  EXPECT_TRUE(store->WriteHealth().ok());

  tmpfs.Fill();
  uint64_t generation = 1;
  const absl::Status first = SyncUntilRefused(*store, 200, &generation);
  EXPECT_EQ(first.code(), absl::StatusCode::kResourceExhausted) << first;
  const uint64_t revision = store->CurrentRevision();
  const int priority = static_cast<int>(generation == 1 ? 0 : generation);
  ASSERT_TRUE(health.Await(1, absl::Seconds(10)));
  EXPECT_EQ(health.At(0).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(health.At(0).message(), HasSubstr("No space left on device"));

  // RocksDB's own recovery would act 5 s after the error (and write its log
  // and the failed log file again, which aborts the process): keep writing
  // and reading for longer than that, every write refused, nothing changed.
  const absl::Time until = absl::Now() + absl::Seconds(7);
  int refused = 0;
  while (absl::Now() < until) {
    auto sync = store->ApplySnapshot(Snapshot(generation + 1, Jobs(200, 999)), T0());
    EXPECT_EQ(sync.status().code(), absl::StatusCode::kResourceExhausted) << sync.status();
    EXPECT_THAT(std::string(sync.status().message()),
                HasSubstr("accepts writes again by itself"));
    auto t = store->Transition(Tr("j0", v1::JOB_STATE_ADMITTED, v1::JOB_STATE_RUNNING), T0());
    EXPECT_EQ(t.status().code(), absl::StatusCode::kResourceExhausted) << t.status();
    auto budgets = store->SetPaused(true, "disk", T0());
    EXPECT_EQ(budgets.status().code(), absl::StatusCode::kResourceExhausted);
    refused += 3;
    EXPECT_EQ(store->LastAppliedGeneration(), generation);
    EXPECT_EQ(store->CurrentRevision(), revision);
    auto j0 = store->GetJob("j0");
    ASSERT_TRUE(j0.ok()) << j0.status();
    EXPECT_EQ(j0->job.state(), v1::JOB_STATE_ADMITTED);
    EXPECT_EQ(store->GetJob("j1")->job.spec().priority(), priority);
    absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_GT(refused, 30);
  EXPECT_EQ(store->WriteHealth().code(), absl::StatusCode::kResourceExhausted);
  auto backup = store->Backup(tmpfs.dir() + "/backup");
  EXPECT_EQ(backup.status().code(), absl::StatusCode::kResourceExhausted) << backup.status();

  tmpfs.Free();
  ASSERT_TRUE(health.Await(2, absl::Seconds(30))) << "writes never resumed";
  EXPECT_TRUE(health.At(1).ok()) << health.At(1);
  EXPECT_TRUE(store->WriteHealth().ok());
  auto synced = store->ApplySnapshot(Snapshot(generation + 1, Jobs(200, 999)), T0());
  ASSERT_TRUE(synced.ok()) << synced.status();
  ASSERT_TRUE(
      store->Transition(Tr("j0", v1::JOB_STATE_ADMITTED, v1::JOB_STATE_RUNNING), T0()).ok());
  const uint64_t after = store->CurrentRevision();
  EXPECT_GT(after, revision);
  store.reset();

  // Nothing lost, nothing of the refused writes: the store as acknowledged.
  auto reopened = RocksStore::Open(dir, o);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_EQ((*reopened)->LastAppliedGeneration(), generation + 1);
  EXPECT_EQ((*reopened)->CurrentRevision(), after);
  EXPECT_EQ((*reopened)->GetJob("j0")->job.state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ((*reopened)->GetJob("j199")->job.spec().priority(), 999);
  EXPECT_FALSE((*reopened)->GetControlState().paused());
}

// Closed while the disk is full (berthd stopped by its supervisor): the
// close must not write the failed files again; the next open, once there
// is room, finds everything acknowledged.
TEST(RocksStoreDiskFullTest, ClosesWhileFullAndReopensOnceFreed) {
  Tmpfs tmpfs(TempDir("tmpfs"), 16);
  ASSERT_EQ(tmpfs.error(), "");
  const std::string dir = tmpfs.dir() + "/store";
  RocksStoreOptions o;
  o.write_probe_interval = absl::Milliseconds(100);
  o.resume_min_free_bytes = int64_t{1} << 20;
  uint64_t generation = 1;
  {
    auto store = RocksStore::Open(dir, o);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->ApplySnapshot(Snapshot(1, Jobs(50, 1)), T0()).ok());
    tmpfs.Fill();
    const absl::Status refused = SyncUntilRefused(**store, 60, &generation);
    EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  }
  // Opening on the full disk either fails cleanly (it writes a new log
  // file) or finds what was acknowledged.
  auto full = RocksStore::Open(dir, o);
  if (!full.ok()) {
    EXPECT_EQ(full.status().code(), absl::StatusCode::kResourceExhausted) << full.status();
  } else {
    EXPECT_EQ((*full)->LastAppliedGeneration(), generation);
    full->reset();
  }
  tmpfs.Free();
  auto store = RocksStore::Open(dir, o);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*store)->LastAppliedGeneration(), generation);
  EXPECT_EQ((*store)->JobCount(), generation == 1 ? 50u : 60u);
  EXPECT_TRUE((*store)->ApplySnapshot(Snapshot(generation + 1, Jobs(60, 1)), T0()).ok());
}

}  // namespace
}  // namespace berth
