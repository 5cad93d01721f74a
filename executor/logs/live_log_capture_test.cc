// LiveLogCapture on the fake runtime: with idle_class its follow threads
// read in Linux's idle scheduling class (SCHED_IDLE), without it in the
// normal one, and either way the followed attempt is kept whole.
#include <dirent.h>
#include <sched.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "executor/logs/live_log_capture.h"
#include "executor/logs/log_archive.h"
#include "executor/runtime/fake_runtime.h"
#include "executor/runtime/unit_test_spec.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

// How many threads of this process are in scheduling policy `policy`
// (/proc/self/task/<tid>/stat: field 41, counted after the ")" that ends
// the command name).
int ThreadsInPolicy(int policy) {
  int count = 0;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream in(absl::StrCat("/proc/self/task/", entry->d_name, "/stat"));
    std::stringstream text;
    text << in.rdbuf();
    const std::string stat = text.str();
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    // Fields from 3 (state) on, after "pid (comm) ".
    const std::vector<std::string> fields =
        absl::StrSplit(stat.substr(close + 2), ' ', absl::SkipEmpty());
    int value = -1;
    if (fields.size() > 41 - 3 && absl::SimpleAtoi(fields[41 - 3], &value) && value == policy) {
      ++count;
    }
  }
  closedir(dir);
  return count;
}

// Awaits a thread in `policy`; false after 10 s.
bool AwaitThreadInPolicy(int policy) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (absl::Now() < deadline) {
    if (ThreadsInPolicy(policy) > 0) return true;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return false;
}

class LiveLogCaptureTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    static int counter = 0;
    const char* base = std::getenv("TEST_TMPDIR");
    absl::StatusOr<std::unique_ptr<LogArchive>> a = LogArchive::Open(
        {absl::StrCat(base != nullptr ? base : "/tmp", "/live-capture-", ++counter), 1 << 20});
    ASSERT_TRUE(a.ok()) << a.status();
    archive_ = std::move(*a);
  }

  FakeRuntime runtime_;
  std::unique_ptr<LogArchive> archive_;
};

TEST_P(LiveLogCaptureTest, FollowsInTheClassAskedForAndKeepsTheWholeAttempt) {
  const bool idle_class = GetParam();
  ASSERT_EQ(ThreadsInPolicy(SCHED_IDLE), 0);
  LiveLogCaptureOptions options;
  options.idle_class = idle_class;
  LiveLogCapture live(*archive_, runtime_, options);
  ASSERT_TRUE(runtime_.Start(UnitTestSpec("a", {"work"})).ok());
  runtime_.AppendLog("a", "first\n");
  live.Follow("a", 1);
  if (idle_class) {
    EXPECT_TRUE(AwaitThreadInPolicy(SCHED_IDLE)) << "no follow thread in SCHED_IDLE";
  } else {
    // The follow reads (the fake counts the call) in the normal class.
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (runtime_.Counters()["logs"].calls < 1 && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    EXPECT_EQ(ThreadsInPolicy(SCHED_IDLE), 0);
  }
  runtime_.AppendLog("a", "second\n");
  ASSERT_TRUE(runtime_.Exit("a", 0).ok());
  ASSERT_TRUE(live.Finish("a", 1).ok());
  EXPECT_EQ(ThreadsInPolicy(SCHED_IDLE), 0);  // the follow's thread has ended
  bool eof = false;
  absl::StatusOr<std::string> kept = archive_->Read("a", 1, LogStream::kStdout, 0, 1 << 20, &eof);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(*kept, "first\nsecond\n");
}

TEST(LiveLogCaptureIdleClassTest, AStoppedFollowLeavesTheIdleClassAtOnce) {
  // A follow no one needs any more is stopped; its thread must not linger
  // starved in the idle class (the caller then joins it).
  // Run outside the sandbox (BUILD: no-sandbox), as root, like berthd.
  ASSERT_TRUE(CanLeaveIdleClass()) << "needs root or CAP_SYS_NICE";
  FakeRuntime runtime;
  const char* base = std::getenv("TEST_TMPDIR");
  absl::StatusOr<std::unique_ptr<LogArchive>> archive = LogArchive::Open(
      {absl::StrCat(base != nullptr ? base : "/tmp", "/live-capture-stopped"), 1 << 20});
  ASSERT_TRUE(archive.ok()) << archive.status();
  LiveLogCaptureOptions options;
  options.idle_class = true;
  LiveLogCapture live(**archive, runtime, options);
  ASSERT_TRUE(runtime.Start(UnitTestSpec("a", {"work"})).ok());
  live.Follow("a", 1);
  ASSERT_TRUE(AwaitThreadInPolicy(SCHED_IDLE));
  live.Retain([](const std::string&, int) { return false; });
  // Checked at once: the thread notices the stop only at its next poll.
  EXPECT_EQ(ThreadsInPolicy(SCHED_IDLE), 0);
}

INSTANTIATE_TEST_SUITE_P(Classes, LiveLogCaptureTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "IdleClass" : "NormalClass";
                         });

}  // namespace
}  // namespace berth
