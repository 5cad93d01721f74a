// ExecutorCore::Backup on a real RocksStore when berthd's own user may not
// write under --backup_root: the answer names the directory and the file
// system's refusal, and is not PERMISSION_DENIED (which berthctl and the API
// reserve for a token's role).
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "executor/reconcile/testing/test_jobs.h"
#include "executor/store/rocks_store.h"
#include "gtest/gtest.h"
#include "planner/base/simulated_clock.h"
#include "server/core/executor_core.h"

namespace berth {
namespace {

// Root passes every file mode check through CAP_DAC_OVERRIDE and
// CAP_DAC_READ_SEARCH; while this lives, the calling thread (the one that
// creates the backup's directory) has neither in effect, as a service user
// would not. Capabilities are per thread; the permitted set is kept, so the
// destructor puts them back.
class WithoutFileCapabilities {
 public:
  WithoutFileCapabilities() {
    if (geteuid() != 0) return;  // an ordinary user is refused anyway
    header_.version = _LINUX_CAPABILITY_VERSION_3;
    header_.pid = 0;
    if (syscall(SYS_capget, &header_, saved_) != 0) return;
    __user_cap_data_struct dropped[2] = {saved_[0], saved_[1]};
    dropped[0].effective &= ~((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH));
    ok_ = syscall(SYS_capset, &header_, dropped) == 0;
  }
  ~WithoutFileCapabilities() {
    if (ok_) syscall(SYS_capset, &header_, saved_);
  }
  bool ok() const { return geteuid() != 0 || ok_; }

 private:
  __user_cap_header_struct header_{};
  __user_cap_data_struct saved_[2]{};
  bool ok_ = false;
};

TEST(ExecutorCoreBackupTest, AnUnwritableBackupRootIsBerthdsProblemNotTheTokens) {
  const std::string tmp = std::getenv("TEST_TMPDIR");
  absl::StatusOr<std::unique_ptr<RocksStore>> store = RocksStore::Open(tmp + "/data");
  ASSERT_TRUE(store.ok()) << store.status();
  const std::string root = tmp + "/backups";
  std::filesystem::create_directories(root);
  ASSERT_EQ(chmod(root.c_str(), 0555), 0);
  SimulatedClock clock;
  PlanCache plans(**store, clock, testing::TestBudgets(16), planner::Policy());
  absl::Mutex admission;
  ExecutorCoreOptions o;
  o.image_allowed = [](absl::string_view) { return true; };
  o.backup_root = root;
  ExecutorCore core(**store, plans, clock, admission, o);
  v1::BackupRequest request;
  request.set_name("nightly");
  absl::StatusOr<v1::BackupResponse> r;
  {
    WithoutFileCapabilities as_service_user;
    ASSERT_TRUE(as_service_user.ok()) << "cannot drop CAP_DAC_OVERRIDE";
    r = core.Backup(request);
  }
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "--backup_root '" + root + "'"))
      << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "Permission denied")) << r.status();
  EXPECT_FALSE(std::filesystem::exists(root + "/nightly"));
  // Made writable, the same request succeeds: the refusal was the directory's.
  ASSERT_EQ(chmod(root.c_str(), 0755), 0);
  r = core.Backup(request);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(std::filesystem::exists(root + "/nightly/BERTH_BACKUP.json"));
}

}  // namespace
}  // namespace berth
