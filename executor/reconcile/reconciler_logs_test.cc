// The reconciler with a log archive, on fakes: every attempt's
// whole log is captured before the outcome is recorded and the container
// removed, once, and engine trouble delays finalising instead of losing it.
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "executor/logs/job_log_reader.h"
#include "executor/logs/log_archive.h"
#include "executor/reconcile/reconciler.h"
#include "executor/reconcile/testing/reconciler_fixture.h"
#include "executor/reconcile/testing/test_jobs.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using ::berth::testing::Job;

struct ArchiveHolder {
  ArchiveHolder() {
    static int counter = 0;
    const char* base = std::getenv("TEST_TMPDIR");
    absl::StatusOr<std::unique_ptr<LogArchive>> a = LogArchive::Open(
        {absl::StrCat(base != nullptr ? base : "/tmp", "/reconciler-logs-", ++counter), 1 << 20});
    EXPECT_TRUE(a.ok()) << a.status();
    archive = std::move(*a);
  }
  ReconcilerOptions Options() {
    ReconcilerOptions o;
    o.log_archive = archive.get();
    return o;
  }
  std::unique_ptr<LogArchive> archive;
};

class ReconcilerLogsTest : private ArchiveHolder, public testing::ReconcilerTest {
 protected:
  ReconcilerLogsTest() : ReconcilerTest(Options()) {}
  std::string Stdout(const std::string& id, int attempt) {
    bool eof = false;
    absl::StatusOr<std::string> s = archive->Read(id, attempt, LogStream::kStdout, 0, 1 << 20, &eof);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.value_or("");
  }
  LogArchive& logs() { return *archive; }
};

TEST_F(ReconcilerLogsTest, AFinishedJobsWholeLogIsKeptAfterRemoval) {
  Sync(1, {Job("a", 1)});
  Pass();
  runtime_.AppendLog("a", "one\ntwo\n");
  ASSERT_TRUE(runtime_.Exit("a", 0).ok());
  EXPECT_EQ(Pass().finalised, 1);
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(runtime_.List()->count("a"), 0u);  // removed
  EXPECT_EQ(Stdout("a", 1), "one\ntwo\n");
}

TEST_F(ReconcilerLogsTest, EngineTroubleDelaysFinalisingUntilCaptured) {
  Sync(1, {Job("a", 1)});
  Pass();
  runtime_.AppendLog("a", "kept\n");
  ASSERT_TRUE(runtime_.Exit("a", 3).ok());
  faulty_.Inject("logs", absl::UnavailableError("dockerd busy"));
  Pass();
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);  // not recorded yet
  EXPECT_FALSE(logs().Has("a", 1));
  EXPECT_EQ(runtime_.List()->count("a"), 1u);  // container kept
  faulty_.Clear();
  Pass();
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(Stdout("a", 1), "kept\n");
}

TEST_F(ReconcilerLogsTest, AnAttemptCapturedBeforeACrashIsNotCapturedAgain) {
  Sync(1, {Job("a", 1)});
  Pass();
  runtime_.AppendLog("a", "from the engine\n");
  ASSERT_TRUE(runtime_.Exit("a", 0).ok());
  // A previous process captured attempt 1 and died before recording it.
  ASSERT_TRUE(logs().Capture("a", 1, [](const LogSink& sink) {
                      sink(LogStream::kStdout, "captured first\n");
                      return absl::OkStatus();
                    }).ok());
  Pass();
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(Stdout("a", 1), "captured first\n");
  EXPECT_EQ(logs().Attempts("a").size(), 1u);
}

TEST_F(ReconcilerLogsTest, ARequeuedJobKeepsEachAttemptsLog) {
  Sync(1, {Job("a", 1)});
  Pass();
  runtime_.AppendLog("a", "first run\n");
  ASSERT_TRUE(store_.SetPaused(true, "drain", clock_.Now()).ok());
  ASSERT_TRUE(store_.RecordDecisions({DecisionRequest{"a", DecisionKind::kRequeue,
                                                      v1::JOB_STATE_RUNNING, "drain", 1, {}}},
                                     clock_.Now())
                  .ok());
  runtime_.set_stop_exit_code(137);
  Pass();
  Pass();
  ASSERT_EQ(Get("a").state(), v1::JOB_STATE_QUEUED);
  ASSERT_TRUE(store_.SetPaused(false, "", clock_.Now()).ok());
  Pass();
  ASSERT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  runtime_.AppendLog("a", "second run\n");
  ASSERT_TRUE(runtime_.Exit("a", 0).ok());
  Pass();
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(Stdout("a", 1), "first run\n");
  EXPECT_EQ(Stdout("a", 2), "second run\n");
  // Both attempts are in the record, with their kept log sizes.
  const v1::Job a = Get("a");
  EXPECT_EQ(a.attempt(), 2);
  ASSERT_EQ(a.attempts_size(), 2);
  EXPECT_EQ(a.attempts(0).number(), 1);
  EXPECT_EQ(a.attempts(0).outcome(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(a.attempts(0).message(), "requeued: drain");
  EXPECT_TRUE(a.attempts(0).log_kept());
  EXPECT_EQ(a.attempts(0).stdout_log_bytes(), 10);
  EXPECT_EQ(a.attempts(1).number(), 2);
  EXPECT_EQ(a.attempts(1).outcome(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_TRUE(a.attempts(1).has_exit_code());
  EXPECT_EQ(a.attempts(1).exit_code(), 0);
  EXPECT_EQ(a.attempts(1).stdout_log_bytes(), 11);
  EXPECT_EQ(a.attempts(1).stderr_log_bytes(), 0);
  EXPECT_EQ(a.attempts(1).stdout_cut().total_bytes(), 11);
  EXPECT_EQ(a.attempts(1).stdout_cut().dropped_bytes(), 0);
}

JobLogRequest Req(const std::string& id, int attempt = 0) {
  JobLogRequest r;
  r.job_id = id;
  r.attempt = attempt;
  return r;
}

// What JobLogReader hands over, as "<attempt>:<stream>:<data>" pieces.
std::string ReadJob(const JobLogReader& reader, JobLogRequest request,
                    absl::Status* status = nullptr) {
  std::string out;
  absl::Status s = reader.Read(
      request,
      [&](const JobLogPiece& p) {
        if (p.attempt_end) {
          absl::StrAppend(&out, "[end ", p.attempt, "]");
        } else if (p.cut.has_value()) {
          if (p.cut->dropped_bytes > 0) absl::StrAppend(&out, "[cut ", p.cut->dropped_bytes, "]");
        } else {
          absl::StrAppend(&out, p.attempt, p.stream == LogStream::kStdout ? ":out:" : ":err:",
                          p.data);
        }
        return true;
      },
      nullptr);
  if (status != nullptr) *status = s;
  EXPECT_TRUE(status != nullptr || s.ok()) << s;
  return out;
}

TEST_F(ReconcilerLogsTest, ReaderSendsKeptAndLiveAttemptsAndFollowsARequeue) {
  JobLogReader reader(store_, logs(), faulty_, JobLogReaderOptions{64 << 10, absl::Milliseconds(20)});
  Sync(1, {Job("a", 1)});
  Pass();
  runtime_.AppendLog("a", "first run\n");
  // Running: without follow, what the engine holds now; offsets skip.
  EXPECT_EQ(ReadJob(reader, Req("a")), "1:out:first run\n");
  JobLogRequest from6 = Req("a");
  from6.stdout_offset = 6;
  EXPECT_EQ(ReadJob(reader, from6), "1:out:run\n");
  absl::Status s;
  JobLogRequest second = Req("a", 2);
  ReadJob(reader, second, &s);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;

  // Drained: requeued, attempt 1 kept.
  ASSERT_TRUE(store_.SetPaused(true, "drain", clock_.Now()).ok());
  ASSERT_TRUE(store_.RecordDecisions({DecisionRequest{"a", DecisionKind::kRequeue,
                                                      v1::JOB_STATE_RUNNING, "drain", 1, {}}},
                                     clock_.Now())
                  .ok());
  runtime_.set_stop_exit_code(137);
  Pass();
  Pass();
  ASSERT_EQ(Get("a").state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(ReadJob(reader, Req("a")), "1:out:first run\n[end 1]");

  // Follow from attempt 1 while the job waits, runs again and ends.
  JobLogRequest follow = Req("a", 1);
  follow.follow = true;
  std::string followed;
  absl::Status follow_status;
  std::thread t([&] { followed = ReadJob(reader, follow, &follow_status); });
  ASSERT_TRUE(store_.SetPaused(false, "", clock_.Now()).ok());
  Pass();
  ASSERT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  runtime_.AppendLog("a", "second run\n");
  ASSERT_TRUE(runtime_.Exit("a", 0).ok());
  Pass();
  ASSERT_EQ(Get("a").state(), v1::JOB_STATE_SUCCEEDED);
  t.join();
  EXPECT_TRUE(follow_status.ok()) << follow_status;
  EXPECT_TRUE(absl::StartsWith(followed, "1:out:first run\n[end 1]")) << followed;
  EXPECT_TRUE(absl::StrContains(followed, "2:out:second run\n")) << followed;
  EXPECT_TRUE(absl::EndsWith(followed, "[end 2]")) << followed;
  // Afterwards: each attempt by number; bad requests say which field.
  EXPECT_EQ(ReadJob(reader, Req("a", 2)), "2:out:second run\n[end 2]");
  ReadJob(reader, Req("a", -1), &s);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  ReadJob(reader, Req("nope"), &s);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
}

// Over the archive's cap (1 MiB here): the record and the reader say what
// was dropped, and that the head and the tail are kept.
TEST_F(ReconcilerLogsTest, ACutLogSaysWhatWasDropped) {
  JobLogReader reader(store_, logs(), faulty_, JobLogReaderOptions{64 << 10, absl::Milliseconds(20)});
  Sync(1, {Job("a", 1)});
  Pass();
  const std::string big((3 << 20) + 5, 'x');
  runtime_.AppendLog("a", big);
  ASSERT_TRUE(runtime_.Exit("a", 0).ok());
  Pass();
  ASSERT_EQ(Get("a").state(), v1::JOB_STATE_SUCCEEDED);
  const v1::LogCut cut = Get("a").attempts(0).stdout_cut();
  EXPECT_EQ(cut.total_bytes(), static_cast<int64_t>(big.size()));
  EXPECT_EQ(cut.dropped_bytes(), static_cast<int64_t>(big.size()) - (1 << 20));
  EXPECT_EQ(cut.head_bytes(), 1 << 19);
  EXPECT_EQ(cut.tail_bytes(), 1 << 19);
  const std::string read = ReadJob(reader, Req("a", 1));
  EXPECT_TRUE(absl::EndsWith(read, absl::StrCat("[cut ", cut.dropped_bytes(), "][end 1]")))
      << read.substr(read.size() - 100);
}

class ReconcilerBackgroundLogsTest : private ArchiveHolder, public testing::ReconcilerTest {
 protected:
  ReconcilerBackgroundLogsTest() : ReconcilerTest(Background()) {}
  ReconcilerOptions Background() {
    ReconcilerOptions o = Options();
    o.background_log_capture = true;
    return o;
  }
  LogArchive& logs() { return *archive; }
};

// A long read of an ended job's log runs off the pass: passes go on
// (another job is admitted and started meanwhile), the ended job keeps its
// state, container and capacity until its log is kept, and the pass after
// the capture records it.
TEST_F(ReconcilerBackgroundLogsTest, ALongLogReadDoesNotHoldThePass) {
  Sync(1, {Job("a", 1)});
  Pass();
  runtime_.AppendLog("a", "all of it\n");
  ASSERT_TRUE(runtime_.Exit("a", 0).ok());
  faulty_.HoldReads(true);
  EXPECT_EQ(Pass().finalised, 0);
  Sync(2, {Job("a", 1), Job("b", 1)});
  EXPECT_EQ(Pass().started, 1);
  EXPECT_EQ(Get("b").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);  // not recorded before its log
  EXPECT_FALSE(logs().Has("a", 1));
  EXPECT_EQ(runtime_.List()->count("a"), 1u);
  faulty_.HoldReads(false);
  reconciler_.AwaitStarts();  // the capture too
  EXPECT_EQ(Pass().finalised, 1);
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_TRUE(Get("a").attempts(0).log_kept());
  EXPECT_EQ(runtime_.List()->count("a"), 0u);
  bool eof = false;
  EXPECT_EQ(logs().Read("a", 1, LogStream::kStdout, 0, 1 << 20, &eof).value_or(""),
            "all of it\n");
}

// A capture that fails (engine trouble) leaves the job unrecorded and is
// tried again after a pause, not by every pass.
TEST_F(ReconcilerBackgroundLogsTest, AFailedCaptureIsRetriedAfterAPause) {
  Sync(1, {Job("a", 1)});
  Pass();
  runtime_.AppendLog("a", "kept\n");
  ASSERT_TRUE(runtime_.Exit("a", 3).ok());
  faulty_.Inject("logs", absl::UnavailableError("dockerd busy"));
  Pass();
  reconciler_.AwaitStarts();
  faulty_.Clear();
  Pass();  // within the pause: not tried again
  reconciler_.AwaitStarts();
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  EXPECT_FALSE(logs().Has("a", 1));
  clock_.Advance(absl::Seconds(3));
  Pass();  // tried again
  reconciler_.AwaitStarts();
  Pass();
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_FAILED);
  EXPECT_TRUE(logs().Has("a", 1));
}

}  // namespace
}  // namespace berth
