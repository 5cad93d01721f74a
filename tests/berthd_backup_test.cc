// Backup and restore: `Backup` on a live berthd while a
// job-server keeps syncing; berthd started on a copy of the backup (a fresh
// data dir path) serves exactly the state the backup reported.
#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/berthd_process.h"
#include "tools/base/subprocess.h"

namespace berth {
namespace {

namespace fs = std::filesystem;

v1::Snapshot Jobs(uint64_t generation, int n) {
  v1::Snapshot s;
  s.set_generation(generation);
  for (int i = 0; i < n; ++i) {
    *s.add_jobs() = BusyboxJob(absl::StrCat("backup-g", generation, "-", i),
                               absl::StrCat("ws", i % 3), 16 << 20, {"true"});
  }
  return s;
}

TEST(BerthdBackupTest, BackupDuringSyncsRestoresOnAFreshPath) {
  const std::string root = absl::StrCat(TmpDir(), "/backups");
  BerthdProcessOptions o;
  o.extra_flags = {absl::StrCat("--backup_root=", root)};
  absl::StatusOr<std::unique_ptr<BerthdProcess>> started = BerthdProcess::Start(o);
  ASSERT_TRUE(started.ok()) << started.status();
  std::unique_ptr<BerthdProcess> b = std::move(*started);
  // Admission paused: the jobs stay queued, so the state is the store's alone.
  ASSERT_TRUE(b->Client(Role::kOperator)->Pause("backup test").ok());
  ASSERT_TRUE(b->Client(Role::kPusher)->Sync(Jobs(1, 50)).ok());

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> synced{1};
  std::thread pusher([&] {
    std::unique_ptr<BerthClient> client = b->Client(Role::kPusher);
    for (uint64_t g = 2; !stop.load(); ++g) {
      if (!client->Sync(Jobs(g, 50)).ok()) return;
      synced.store(g);
    }
  });
  std::unique_ptr<BerthClient> op = b->Client(Role::kOperator);
  absl::StatusOr<v1::BackupResponse> backup = op->Backup("during-syncs");
  // The reader's and pusher's roles may not back up; a bad name is refused.
  const absl::StatusCode as_reader = b->Client(Role::kReader)->Backup("x").status().code();
  const absl::StatusCode bad_name = op->Backup("../escape").status().code();
  const absl::StatusCode again = op->Backup("during-syncs").status().code();
  while (synced.load() < 4 && b->Running()) std::this_thread::yield();
  stop.store(true);
  pusher.join();
  ASSERT_TRUE(backup.ok()) << backup.status();
  EXPECT_EQ(as_reader, absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(bad_name, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(again, absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(backup->path(), absl::StrCat(root, "/during-syncs"));
  EXPECT_EQ(backup->jobs(), 50 * static_cast<int64_t>(backup->last_generation()));
  EXPECT_TRUE(absl::StartsWith(backup->berth_version(), "berthd ")) << backup->berth_version();
  EXPECT_TRUE(fs::exists(backup->path() + "/BERTH_BACKUP.json"));
  EXPECT_GT(synced.load(), backup->last_generation()) << "no sync ran after the backup";

  // Restore: the copy, at a fresh path, under a berthd of the same instance.
  const std::string instance = b->instance();
  b.reset();  // SIGTERM
  const std::string restored = absl::StrCat(TmpDir(), "/restored-data");
  fs::copy(backup->path(), restored, fs::copy_options::recursive);
  BerthdProcessOptions r;
  r.data_dir = restored;
  r.instance = instance;
  absl::StatusOr<std::unique_ptr<BerthdProcess>> again_started = BerthdProcess::Start(r);
  ASSERT_TRUE(again_started.ok()) << again_started.status();
  std::unique_ptr<BerthClient> reader = (*again_started)->Client(Role::kReader);
  absl::StatusOr<v1::Plan> plan = reader->GetPlan();
  ASSERT_TRUE(plan.ok()) << plan.status();
  // Every job of the backed-up generation is queued, and nothing newer.
  int queued_of_generation = 0;
  const std::string prefix = absl::StrCat("backup-g", backup->last_generation(), "-");
  for (const v1::PlanDecision& d : plan->decisions()) {
    EXPECT_TRUE(absl::StartsWith(d.job_id(), prefix)) << d.job_id();
    queued_of_generation += absl::StartsWith(d.job_id(), prefix);
  }
  EXPECT_EQ(queued_of_generation, 50);
  // The backed-up generation is the last applied one: other content under
  // it is refused, as on the original.
  absl::StatusOr<v1::SyncSnapshotResponse> older =
      (*again_started)->Client(Role::kPusher)->Sync(Jobs(backup->last_generation(), 1));
  EXPECT_EQ(older.status().code(), absl::StatusCode::kFailedPrecondition) << older.status();
}

}  // namespace
}  // namespace berth
