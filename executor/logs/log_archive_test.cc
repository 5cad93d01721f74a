#include "executor/logs/log_archive.h"

#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

std::string TempRoot() {
  static int counter = 0;
  const char* base = std::getenv("TEST_TMPDIR");
  return absl::StrCat(base != nullptr ? base : "/tmp", "/archive-", ++counter);
}

std::unique_ptr<LogArchive> Open(int64_t cap = 1 << 20) {
  absl::StatusOr<std::unique_ptr<LogArchive>> a = LogArchive::Open({TempRoot(), cap});
  EXPECT_TRUE(a.ok()) << a.status();
  return std::move(*a);
}

absl::Status Emit(const LogSink& sink) {
  sink(LogStream::kStdout, "out-1\n");
  sink(LogStream::kStderr, "err-1\n");
  sink(LogStream::kStdout, "out-2\n");
  return absl::OkStatus();
}

std::string ReadStream(const LogArchive& a, const std::string& job, int attempt,
                       LogStream s) {
  bool eof = false;
  absl::StatusOr<std::string> got = a.Read(job, attempt, s, 0, 1 << 20, &eof);
  EXPECT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(eof);
  return got.value_or("");
}

TEST(LogArchiveTest, CaptureKeepsStreamsApartPerAttempt) {
  auto a = Open();
  ASSERT_TRUE(a->Capture("job-1", 1, Emit).ok());
  ASSERT_TRUE(a->Capture("job-1", 2, [](const LogSink& sink) {
                 sink(LogStream::kStdout, "second\n");
                 return absl::OkStatus();
               }).ok());
  EXPECT_EQ(ReadStream(*a, "job-1", 1, LogStream::kStdout), "out-1\nout-2\n");
  EXPECT_EQ(ReadStream(*a, "job-1", 1, LogStream::kStderr), "err-1\n");
  EXPECT_EQ(ReadStream(*a, "job-1", 2, LogStream::kStdout), "second\n");
  std::vector<AttemptLogInfo> attempts = a->Attempts("job-1");
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].attempt, 1);
  EXPECT_EQ(attempts[0].stdout_bytes, 12);
  EXPECT_EQ(attempts[0].stderr_bytes, 6);
  EXPECT_EQ(attempts[1].attempt, 2);
}

// A backup's copy holds every complete attempt, readable as an archive of
// its own, and never a capture still in progress.
TEST(LogArchiveTest, CopyToHoldsCompleteAttemptsOnly) {
  auto a = Open();
  ASSERT_TRUE(a->Capture("job-1", 1, Emit).ok());
  ASSERT_TRUE(a->Capture(".hidden", 1, Emit).ok());
  absl::StatusOr<std::unique_ptr<AttemptLogWriter>> live = a->Begin("job-2", 1);
  ASSERT_TRUE(live.ok()) << live.status();
  ASSERT_TRUE((*live)->Append(LogStream::kStdout, "partial\n").ok());
  const std::string to = TempRoot();
  absl::StatusOr<int64_t> files = a->CopyTo(to);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(*files, 4);  // stdout and stderr of two attempts
  absl::StatusOr<std::unique_ptr<LogArchive>> copy = LogArchive::Open({to, 1 << 20});
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_EQ(ReadStream(**copy, "job-1", 1, LogStream::kStdout), "out-1\nout-2\n");
  EXPECT_EQ(ReadStream(**copy, ".hidden", 1, LogStream::kStderr), "err-1\n");
  EXPECT_FALSE((*copy)->Has("job-2", 1));
  // An existing target is refused.
  EXPECT_EQ(a->CopyTo(to).status().code(), absl::StatusCode::kInternal);
}

TEST(LogArchiveTest, NeverCapturesAnAttemptTwice) {
  auto a = Open();
  ASSERT_TRUE(a->Capture("j", 1, Emit).ok());
  absl::Status again = a->Capture("j", 1, Emit);
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(ReadStream(*a, "j", 1, LogStream::kStdout), "out-1\nout-2\n");
}

TEST(LogArchiveTest, AFailedReadKeepsNothingAndCanBeRetried) {
  auto a = Open();
  absl::Status failed = a->Capture("j", 1, [](const LogSink& sink) {
    sink(LogStream::kStdout, "partial\n");
    return absl::UnavailableError("engine went away");
  });
  EXPECT_EQ(failed.code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(a->Has("j", 1));
  EXPECT_TRUE(a->Attempts("j").empty());
  ASSERT_TRUE(a->Capture("j", 1, Emit).ok());
  EXPECT_EQ(ReadStream(*a, "j", 1, LogStream::kStdout), "out-1\nout-2\n");
}

TEST(LogArchiveTest, ALeftoverTempDirectoryIsReplaced) {
  auto a = Open();
  const std::string tmp =
      absl::StrCat(a->options().root, "/", LogArchive::JobDirName("j"), "/.1.tmp");
  ASSERT_EQ(mkdir((a->options().root + "/j").c_str(), 0750), 0);
  ASSERT_EQ(mkdir(tmp.c_str(), 0750), 0);
  EXPECT_FALSE(a->Has("j", 1));
  ASSERT_TRUE(a->Capture("j", 1, Emit).ok());
  EXPECT_EQ(ReadStream(*a, "j", 1, LogStream::kStdout), "out-1\nout-2\n");
  struct stat st;
  EXPECT_NE(stat(tmp.c_str(), &st), 0);
}

TEST(LogArchiveTest, ReadsFromAnOffset) {
  auto a = Open();
  ASSERT_TRUE(a->Capture("j", 1, Emit).ok());
  bool eof = true;
  absl::StatusOr<std::string> part = a->Read("j", 1, LogStream::kStdout, 2, 5, &eof);
  ASSERT_TRUE(part.ok());
  EXPECT_EQ(*part, "t-1\no");
  EXPECT_FALSE(eof);
  EXPECT_EQ(a->Read("j", 1, LogStream::kStdout, 13, 5, &eof).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(a->Read("j", 3, LogStream::kStdout, 0, 5, &eof).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(LogArchiveTest, JobIdsAreEscapedAndRoundTrip) {
  for (const std::string id : {"plain-id_1.x", "../../etc", ".hidden", "a/b c%"}) {
    const std::string dir = LogArchive::JobDirName(id);
    EXPECT_EQ(dir.find('/'), std::string::npos) << id;
    EXPECT_NE(dir[0], '.') << id;
    std::string back;
    ASSERT_TRUE(LogArchive::ParseJobDirName(dir, &back)) << dir;
    EXPECT_EQ(back, id);
  }
  auto a = Open();
  ASSERT_TRUE(a->Capture("../escape", 1, Emit).ok());
  EXPECT_EQ(ReadStream(*a, "../escape", 1, LogStream::kStderr), "err-1\n");
}

TEST(LogArchiveTest, SweepRemovesJobsNoLongerKept) {
  auto a = Open();
  ASSERT_TRUE(a->Capture("keep", 1, Emit).ok());
  ASSERT_TRUE(a->Capture("drop/me", 1, Emit).ok());
  absl::StatusOr<int> removed =
      a->Sweep([](const std::string& id) { return id == "keep"; });
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(*removed, 1);
  EXPECT_TRUE(a->Has("keep", 1));
  EXPECT_FALSE(a->Has("drop/me", 1));
}

TEST(LogArchiveTest, BadOptionsAndAttemptsAreRefused) {
  EXPECT_EQ(LogArchive::Open({"", 100}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LogArchive::Open({TempRoot(), 1}).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto a = Open();
  EXPECT_EQ(a->Capture("j", 0, Emit).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace berth
