// The reconciler with live log capture, on fakes: a running job's
// log is followed from its start and kept from the follow when it ends, so
// a whole read at the end (what the engine still holds) is not needed; a
// job that no longer runs is no longer followed.
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "executor/logs/live_log_capture.h"
#include "executor/logs/log_archive.h"
#include "executor/reconcile/reconciler.h"
#include "executor/reconcile/testing/reconciler_fixture.h"
#include "executor/reconcile/testing/test_jobs.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using ::berth::testing::Job;

struct LiveArchiveHolder {
  LiveArchiveHolder() {
    static int counter = 0;
    const char* base = std::getenv("TEST_TMPDIR");
    absl::StatusOr<std::unique_ptr<LogArchive>> a = LogArchive::Open(
        {absl::StrCat(base != nullptr ? base : "/tmp", "/reconciler-live-logs-", ++counter),
         1 << 20});
    EXPECT_TRUE(a.ok()) << a.status();
    archive = std::move(*a);
  }
  ReconcilerOptions Options(LiveLogCapture* live) {
    ReconcilerOptions o;
    o.log_archive = archive.get();
    o.live_logs = live;  // constructed after the reconciler, used by passes only
    return o;
  }
  std::unique_ptr<LogArchive> archive;
};

class ReconcilerLiveLogsTest : private LiveArchiveHolder, public testing::ReconcilerTest {
 protected:
  ReconcilerLiveLogsTest() : ReconcilerTest(Options(&live_)), live_(*archive, faulty_) {}

  // Awaits the follow's read of the engine's log (the fake counts it).
  bool AwaitFollowing(int64_t calls) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (absl::Now() < deadline) {
      if (runtime_.Counters()["logs"].calls >= calls) return true;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return false;
  }
  std::string Stdout(const std::string& id, int attempt) {
    bool eof = false;
    absl::StatusOr<std::string> s =
        archive->Read(id, attempt, LogStream::kStdout, 0, 1 << 20, &eof);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.value_or("");
  }
  LogArchive& logs() { return *archive; }

  LiveLogCapture live_;
};

TEST_F(ReconcilerLiveLogsTest, ARunningJobsLogIsFollowedAndKeptFromTheFollow) {
  Sync(1, {Job("a", 1)});
  Pass();  // admits and starts "a": followed from its start
  ASSERT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  runtime_.AppendLog("a", "one\n");
  ASSERT_TRUE(AwaitFollowing(1));
  EXPECT_EQ(live_.following(), 1);
  // A whole read now fails: only the follow can keep the log.
  faulty_.Inject("logs", absl::UnavailableError("dockerd busy"));
  runtime_.AppendLog("a", "two\n");
  ASSERT_TRUE(runtime_.Exit("a", 0).ok());
  EXPECT_EQ(Pass().finalised, 1);
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(Stdout("a", 1), "one\ntwo\n");
  EXPECT_EQ(live_.following(), 0);
  EXPECT_EQ(runtime_.List()->count("a"), 0u);  // removed after the capture
}

TEST_F(ReconcilerLiveLogsTest, WithoutAFollowTheWholeLogIsReadAtTheEnd) {
  Sync(1, {Job("a", 1)});
  Pass();
  runtime_.AppendLog("a", "kept\n");
  ASSERT_TRUE(AwaitFollowing(1));
  // The follow breaks (the engine restarted): the attempt starts over from
  // what the engine holds, once, at the end.
  faulty_.Inject("logs", absl::UnavailableError("dockerd restarting"));
  live_.Retain([](const std::string&, int) { return false; });
  EXPECT_EQ(live_.following(), 0);
  ASSERT_TRUE(runtime_.Exit("a", 0).ok());
  Pass();  // not followed (it ended): the whole read, which fails
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  faulty_.Clear();
  Pass();
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(Stdout("a", 1), "kept\n");
}

TEST_F(ReconcilerLiveLogsTest, AJobThatNoLongerRunsIsNoLongerFollowed) {
  Sync(1, {Job("a", 1)});
  Pass();
  ASSERT_TRUE(AwaitFollowing(1));
  EXPECT_EQ(live_.following(), 1);
  Sync(2, {});  // withdrawn: cancelled, its container stopped
  for (int i = 0; i < 3 && Get("a").state() != v1::JOB_STATE_CANCELLED; ++i) Pass();
  ASSERT_EQ(Get("a").state(), v1::JOB_STATE_CANCELLED);
  Pass();
  EXPECT_EQ(live_.following(), 0);
  EXPECT_TRUE(logs().Has("a", 1));  // kept from the follow at its end
}

}  // namespace
}  // namespace berth
