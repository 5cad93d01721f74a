// Live log capture over the real dockerd: with Docker keeping
// only 2 files of 1 MB (json-file rotation), a job printing far more than
// that still leaves the exact head, the marker and the exact tail of what it
// printed, because its log was followed while it ran; a whole read at its end
// (what Docker still holds) has lost the head. A log Docker still holds
// whole is read whole at the end instead (Docker's follow can skip output).
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "executor/logs/capped_log_writer.h"
#include "executor/logs/live_log_capture.h"
#include "executor/logs/log_archive.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using ::berth::testing::InstanceCleanup;
using ::berth::testing::TestOptions;
using ::berth::testing::TestSpec;
using ::berth::testing::UniqueName;
using ::berth::testing::WaitFinished;

constexpr int kFirst = 100000;     // six digits on every line
constexpr int kLines = 300000;     // 2.1 MB printed, ~24 MB in json-file
constexpr int kBatch = 500;        // lines per batch, one batch per ~25 ms
constexpr int64_t kCap = 256 << 10;

class LiveLogCaptureDockerTest : public ::testing::Test {
 protected:
  LiveLogCaptureDockerTest() : instance_(UniqueName("live")), cleanup_(instance_) {}

  void SetUp() override {
    DockerRuntimeOptions o = TestOptions(instance_);
    // json-file's ~75 bytes per line make these jobs outgrow 1m x 2, so the
    // follow's part is what is kept (the local driver would hold them whole).
    o.log_driver = "json-file";
    o.log_max_size = "1m";
    o.log_max_files = 2;
    absl::StatusOr<std::unique_ptr<DockerRuntime>> rt = DockerRuntime::Create(o);
    ASSERT_TRUE(rt.ok()) << rt.status();
    rt_ = std::move(*rt);
    ASSERT_TRUE(rt_->Ping().ok()) << "dockerd not reachable; run tools/setup.sh";
    const char* base = std::getenv("TEST_TMPDIR");
    absl::StatusOr<std::unique_ptr<LogArchive>> a = LogArchive::Open(
        {absl::StrCat(base != nullptr ? base : "/tmp", "/live-logs-", instance_), kCap});
    ASSERT_TRUE(a.ok()) << a.status();
    archive_ = std::move(*a);
  }

  std::string Read(const std::string& job, int attempt) {
    bool eof = false;
    absl::StatusOr<std::string> got =
        archive_->Read(job, attempt, LogStream::kStdout, 0, int64_t{1} << 30, &eof);
    EXPECT_TRUE(got.ok()) << got.status();
    return got.value_or("");
  }

  const std::string instance_;
  InstanceCleanup cleanup_;
  std::unique_ptr<DockerRuntime> rt_;
  std::unique_ptr<LogArchive> archive_;
};

TEST_F(LiveLogCaptureDockerTest, KeepsExactHeadMarkerAndTailPastDockersRotation) {
  const std::string job = absl::StrCat(instance_, "-rotated");
  // Numbered lines kFirst .. kFirst+kLines-1, in paced batches (a job that
  // prints for a while, as real jobs do).
  const std::string script = absl::StrCat(
      "i=", kFirst, "; while [ $i -lt ", kFirst + kLines, " ]; do seq $i $((i+", kBatch - 1,
      ")); i=$((i+", kBatch, ")); usleep 20000; done");
  LiveLogCapture live(*archive_, *rt_);
  ASSERT_TRUE(rt_->Start(TestSpec(job, {"sh", "-c", script})).ok());
  live.Follow(job, 1);
  absl::StatusOr<ContainerObservation> obs = WaitFinished(*rt_, job, absl::Minutes(3));
  ASSERT_TRUE(obs.ok()) << obs.status();
  ASSERT_EQ(obs->exit_code, 0);
  ASSERT_TRUE(live.Finish(job, 1).ok());

  std::string all;
  for (int i = kFirst; i < kFirst + kLines; ++i) absl::StrAppend(&all, i, "\n");
  const int64_t total = static_cast<int64_t>(all.size());
  const std::string head = all.substr(0, kCap / 2);
  const std::string tail = all.substr(all.size() - kCap / 2);
  const std::string want =
      absl::StrCat(head, head.back() == '\n' ? "" : "\n",
                   CappedLogWriter::MarkerLine(total - kCap, total), tail);
  const std::string got = Read(job, 1);
  EXPECT_EQ(got.size(), want.size());
  size_t diff = 0;
  while (diff < got.size() && diff < want.size() && got[diff] == want[diff]) ++diff;
  const size_t from = diff > 40 ? diff - 40 : 0;
  EXPECT_TRUE(got == want) << "first difference at byte " << diff << "\ngot:  "
                           << got.substr(from, 120) << "\nwant: " << want.substr(from, 120);

  // What Docker still holds at the end has lost the head: the follow was
  // needed (this is what the whole read alone kept before).
  ASSERT_TRUE(archive_->Capture(job, 2, [&](const LogSink& sink) {
    return rt_->ReadLogs(job, LogReadOptions{}, sink);
  }).ok());
  EXPECT_FALSE(absl::StartsWith(Read(job, 2), absl::StrCat(kFirst, "\n")));
}

TEST_F(LiveLogCaptureDockerTest, AFollowStartedOverKeepsNothingTwice) {
  // berthd restarted while the job ran: a new follow replaces the old
  // attempt's temp directory and reads what Docker holds, once. The job then
  // prints past Docker's 2 x 1 MB (its first lines rotated away), so the
  // follow is what Finish keeps.
  const std::string job = absl::StrCat(instance_, "-restart");
  const std::string script =
      "seq 1 1000; sleep 2; i=1001; while [ $i -le 40000 ]; do seq $i $((i+499)); "
      "i=$((i+500)); usleep 20000; done";
  ASSERT_TRUE(rt_->Start(TestSpec(job, {"sh", "-c", script})).ok());
  {
    LiveLogCapture before(*archive_, *rt_);
    before.Follow(job, 1);
    ASSERT_EQ(before.following(), 1);
  }  // "killed": its follow ends, its capture is not kept
  EXPECT_FALSE(archive_->Has(job, 1));
  LiveLogCapture after(*archive_, *rt_);
  after.Follow(job, 1);
  absl::StatusOr<ContainerObservation> obs = WaitFinished(*rt_, job, absl::Minutes(1));
  ASSERT_TRUE(obs.ok()) << obs.status();
  absl::Status finished = after.Finish(job, 1);
  ASSERT_TRUE(finished.ok()) << finished;
  std::string all;
  for (int i = 1; i <= 40000; ++i) absl::StrAppend(&all, i, "\n");
  EXPECT_TRUE(Read(job, 1) == all) << Read(job, 1).size() << " bytes against " << all.size();
}

TEST_F(LiveLogCaptureDockerTest, ALogDockerStillHoldsWholeIsReadWholeAtTheEnd) {
  // Docker 20.10's follow can skip output when it lags across a rotation;
  // a job whose whole output Docker still holds (20,000 lines: ~1.5 MB of
  // json-file, under 2 x 1 MB) is read whole at its end instead, exactly.
  const std::string job = absl::StrCat(instance_, "-held");
  LiveLogCapture live(*archive_, *rt_);
  ASSERT_TRUE(rt_->Start(TestSpec(job, {"sh", "-c", "sleep 1; seq 1 20000"})).ok());
  live.Follow(job, 1);
  absl::StatusOr<ContainerObservation> obs = WaitFinished(*rt_, job, absl::Minutes(1));
  ASSERT_TRUE(obs.ok()) << obs.status();
  absl::Status finished = live.Finish(job, 1);
  EXPECT_EQ(finished.code(), absl::StatusCode::kFailedPrecondition) << finished;
  EXPECT_FALSE(archive_->Has(job, 1));  // nothing of the follow kept
  EXPECT_EQ(live.following(), 0);

  // The oldest message Docker holds, with its time: the job's first line.
  absl::Time oldest = absl::InfiniteFuture();
  std::string first;
  LogReadOptions ro;
  ro.first_message_time = &oldest;
  ASSERT_TRUE(rt_->ReadLogs(job, ro, [&](LogStream, absl::string_view text) {
    first = std::string(text);
    return false;
  }).ok());
  EXPECT_EQ(first, "1\n");
  EXPECT_LT(absl::Now() - oldest, absl::Minutes(1));
  EXPECT_GT(absl::Now() - oldest, absl::ZeroDuration());
}

}  // namespace
}  // namespace berth
