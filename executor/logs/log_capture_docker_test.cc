// The log archive over the real dockerd: a container's whole log, captured
// with DockerRuntime::ReadLogs, comes back complete, in order, streams apart;
// over the cap it keeps head, marker and tail.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "executor/logs/capped_log_writer.h"
#include "executor/logs/log_archive.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "executor/runtime/docker/testing/docker_runtime_fixture.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using ::berth::testing::DockerRuntimeTest;
using ::berth::testing::TestSpec;

class LogCaptureTest : public DockerRuntimeTest {
 protected:
  std::unique_ptr<LogArchive> OpenArchive(int64_t cap) {
    static int counter = 0;
    const char* base = std::getenv("TEST_TMPDIR");
    absl::StatusOr<std::unique_ptr<LogArchive>> a = LogArchive::Open(
        {absl::StrCat(base != nullptr ? base : "/tmp", "/logs-", ++counter), cap});
    EXPECT_TRUE(a.ok()) << a.status();
    return std::move(*a);
  }
  absl::Status Capture(LogArchive& a, const std::string& job) {
    return a.Capture(job, 1, [&](const LogSink& sink) {
      return rt_->ReadLogs(job, LogReadOptions{}, sink);
    });
  }
  std::string ReadAll(const LogArchive& a, const std::string& job, LogStream s) {
    bool eof = false;
    absl::StatusOr<std::string> got = a.Read(job, 1, s, 0, int64_t{1} << 30, &eof);
    EXPECT_TRUE(got.ok()) << got.status();
    return got.value_or("");
  }
};

TEST_F(LogCaptureTest, TwoHundredThousandLinesCompleteAndInOrder) {
  const std::string job = Job("lines");
  ContainerObservation obs = RunToEnd(TestSpec(
      job, {"sh", "-c", "seq 1 200000; seq 1 500 | sed 's/^/err-/' >&2"}));
  ASSERT_EQ(obs.exit_code, 0);
  auto archive = OpenArchive(int64_t{64} << 20);
  ASSERT_TRUE(Capture(*archive, job).ok());
  // Captured before removal, readable after it.
  ASSERT_TRUE(rt_->Remove(job).ok());

  const std::string out = ReadAll(*archive, job, LogStream::kStdout);
  std::vector<absl::string_view> lines = absl::StrSplit(out, '\n');
  ASSERT_EQ(lines.size(), 200001u);  // the last is the empty piece after "\n"
  EXPECT_TRUE(lines.back().empty());
  for (int i = 0; i < 200000; ++i) {
    int n = 0;
    ASSERT_TRUE(absl::SimpleAtoi(lines[i], &n)) << "line " << i << ": " << lines[i];
    ASSERT_EQ(n, i + 1) << "line " << i;
  }
  const std::string err = ReadAll(*archive, job, LogStream::kStderr);
  std::vector<absl::string_view> errs = absl::StrSplit(err, '\n');
  ASSERT_EQ(errs.size(), 501u);
  EXPECT_EQ(errs[0], "err-1");
  EXPECT_EQ(errs[499], "err-500");
  EXPECT_EQ(archive->Attempts(job).at(0).stdout_bytes, static_cast<int64_t>(out.size()));
}

TEST_F(LogCaptureTest, OverTheCapKeepsHeadMarkerAndTail) {
  const std::string job = Job("capped");
  ContainerObservation obs = RunToEnd(TestSpec(job, {"sh", "-c", "seq 1 100000"}));
  ASSERT_EQ(obs.exit_code, 0);
  std::string all;
  for (int i = 1; i <= 100000; ++i) absl::StrAppend(&all, i, "\n");
  const int64_t cap = 10000;
  auto archive = OpenArchive(cap);
  ASSERT_TRUE(Capture(*archive, job).ok());
  const std::string out = ReadAll(*archive, job, LogStream::kStdout);
  const int64_t total = static_cast<int64_t>(all.size());
  const std::string marker = CappedLogWriter::MarkerLine(total - cap, total);
  // Head: the first 5000 bytes end mid-line, so the marker starts a line.
  const std::string head = all.substr(0, 5000);
  const std::string tail = all.substr(all.size() - 5000);
  EXPECT_EQ(out, absl::StrCat(head, head.back() == '\n' ? "" : "\n", marker, tail));
  EXPECT_TRUE(absl::StrContains(out, "1\n2\n3\n"));
  EXPECT_TRUE(absl::EndsWith(out, "99999\n100000\n"));
}

TEST_F(LogCaptureTest, AMissingContainerIsNotFoundAndKeepsNothing) {
  auto archive = OpenArchive(1 << 20);
  absl::Status s = Capture(*archive, Job("never-ran"));
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_FALSE(archive->Has(Job("never-ran"), 1));
}

}  // namespace
}  // namespace berth
