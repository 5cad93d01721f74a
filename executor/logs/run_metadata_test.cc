#include "executor/logs/run_metadata.h"
#include "executor/logs/run_metadata_evidence.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace berth {
namespace {

std::string TempDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string d = absl::StrCat(base != nullptr ? base : "/tmp", "/", name);
  EXPECT_EQ(mkdir(d.c_str(), 0755), 0) << d;
  return d;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

v1::Job Finished(const std::string& id) {
  v1::Job j;
  j.mutable_spec()->set_id(id);
  j.mutable_spec()->set_workspace("ws");
  j.mutable_spec()->set_action("extract");
  j.mutable_spec()->set_image("berth-test/busybox:1");
  j.mutable_spec()->add_argv("sh");
  j.mutable_spec()->add_argv("-c");
  j.mutable_spec()->add_argv("echo hi");
  j.mutable_spec()->mutable_resources()->set_cpu_millis(500);
  j.mutable_spec()->mutable_resources()->set_memory_bytes(64 << 20);
  j.set_state(v1::JOB_STATE_FAILED);
  j.set_failure_cause(v1::FAILURE_CAUSE_NONZERO_EXIT);
  j.set_exit_code(3);
  j.set_has_exit_code(true);
  j.set_message("exited with code 3");
  j.set_requeue_count(1);  // the final run is attempt 2
  j.mutable_started_at()->set_seconds(1'800'000'000);
  j.mutable_finished_at()->set_seconds(1'800'000'060);
  j.mutable_observed()->set_peak_memory_bytes(12345);
  j.mutable_observed()->set_run_seconds(60);
  return j;
}

class RunMetadataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = TempDir(absl::StrCat("ws-root-", counter_++));
    ASSERT_EQ(mkdir((root_ + "/ws").c_str(), 0777), 0);
    auto a = LogArchive::Open({TempDir(absl::StrCat("archive-", counter_++)), 1 << 20});
    ASSERT_TRUE(a.ok()) << a.status();
    archive_ = std::move(*a);
    options_.workspaces_root = root_;
    options_.gid = getegid();
  }
  static inline int counter_ = 0;
  std::string root_;
  std::unique_ptr<LogArchive> archive_;
  RunMetadataOptions options_;
};

TEST_F(RunMetadataTest, WritesTheFinalAttemptsLogAndTheRecord) {
  ASSERT_TRUE(archive_->Capture("job.1", 1, [](const LogSink& sink) {
    sink(LogStream::kStdout, "first attempt\n");
    return absl::OkStatus();
  }).ok());
  ASSERT_TRUE(archive_->Capture("job.1", 2, [](const LogSink& sink) {
    sink(LogStream::kStdout, "out-1\n");
    sink(LogStream::kStderr, "err-1\n");
    sink(LogStream::kStdout, "out-2\n");
    return absl::OkStatus();
  }).ok());
  absl::Status s = WriteRunMetadata(options_, Finished("job.1"), archive_.get(), "sha256:feed");
  ASSERT_TRUE(s.ok()) << s;
  const std::string dir = root_ + "/ws/metadata";
  EXPECT_EQ(ReadFile(dir + "/job.1.log"), "out-1\nout-2\n[berth: stderr]\nerr-1\n");
  const nlohmann::json j = nlohmann::json::parse(ReadFile(dir + "/job.1.json"));
  EXPECT_EQ(j["id"], "job.1");
  EXPECT_EQ(j["imageId"], "sha256:feed");
  EXPECT_EQ(j["argv"], nlohmann::json({"sh", "-c", "echo hi"}));
  EXPECT_EQ(j["resources"]["memoryBytes"], 64 << 20);
  EXPECT_EQ(j["state"], "JOB_STATE_FAILED");
  EXPECT_EQ(j["failureCause"], "FAILURE_CAUSE_NONZERO_EXIT");
  EXPECT_EQ(j["exitCode"], 3);
  EXPECT_EQ(j["attempt"], 2);
  EXPECT_EQ(j["startedAt"], "2027-01-15T08:00:00Z");
  EXPECT_EQ(j["finishedAt"], "2027-01-15T08:01:00Z");
  EXPECT_FALSE(j.contains("queuedAt"));
  EXPECT_EQ(j["observed"]["peakMemoryBytes"], 12345);
  EXPECT_EQ(j["logBytes"]["stdout"], 12);
  EXPECT_EQ(j["logBytes"]["stderr"], 6);
  struct stat st;
  ASSERT_EQ(stat((dir + "/job.1.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(st.st_gid, getegid());
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  // No temporary file is left; a second write replaces both.
  EXPECT_NE(access((dir + "/.job.1.log.tmp").c_str(), F_OK), 0);
  ASSERT_TRUE(WriteRunMetadata(options_, Finished("job.1"), archive_.get(), "").ok());
  EXPECT_EQ(nlohmann::json::parse(ReadFile(dir + "/job.1.json"))["imageId"], "");
}

// Every attempt, not only the final one: an OOM kill before a retry leaves
// its trace, and a cut log says so.
TEST(RunMetadataJsonTest, ListsEveryAttemptWithItsTruncation) {
  v1::Job job;
  job.mutable_spec()->set_id("job.2");
  job.set_state(v1::JOB_STATE_SUCCEEDED);
  job.set_requeue_count(1);
  v1::Attempt* oom = job.add_attempts();
  oom->set_number(1);
  oom->set_outcome(v1::JOB_STATE_QUEUED);
  oom->set_failure_cause(v1::FAILURE_CAUSE_OOM_KILLED);
  oom->set_exit_code(137);
  oom->set_has_exit_code(true);
  oom->mutable_observed()->set_peak_memory_bytes(32 << 20);
  oom->mutable_observed()->set_peak_exact(true);
  oom->set_stdout_log_bytes(100);
  oom->mutable_started_at()->set_seconds(1800000000);
  v1::Attempt* ok = job.add_attempts();
  ok->set_number(2);
  ok->set_outcome(v1::JOB_STATE_SUCCEEDED);
  ok->set_exit_code(0);
  ok->set_has_exit_code(true);
  ok->set_stdout_log_bytes(1000 + 60);  // over a 1000-byte cap: head, marker, tail
  ok->set_stderr_log_bytes(10);
  const nlohmann::json j =
      nlohmann::json::parse(RunMetadataJson(job, "", 1060, 10, /*log_cap_bytes=*/1000));
  ASSERT_EQ(j["attempts"].size(), 2u);
  const nlohmann::json& a1 = j["attempts"][0];
  EXPECT_EQ(a1["number"], 1);
  EXPECT_EQ(a1["outcome"], "JOB_STATE_QUEUED");
  EXPECT_EQ(a1["failureCause"], "FAILURE_CAUSE_OOM_KILLED");
  EXPECT_EQ(a1["exitCode"], 137);
  EXPECT_EQ(a1["observed"]["peakMemoryBytes"], 32 << 20);
  EXPECT_EQ(a1["observed"]["peakExact"], true);
  EXPECT_EQ(a1["startedAt"], "2027-01-15T08:00:00Z");
  EXPECT_EQ(a1["logTruncated"]["stdout"], false);
  const nlohmann::json& a2 = j["attempts"][1];
  EXPECT_EQ(a2["number"], 2);
  EXPECT_EQ(a2["exitCode"], 0);
  EXPECT_FALSE(a2.contains("observed"));
  EXPECT_EQ(a2["logBytes"]["stdout"], 1060);
  EXPECT_EQ(a2["logTruncated"]["stdout"], true);
  EXPECT_EQ(a2["logTruncated"]["stderr"], false);
  // Without the cap, truncation is not claimed either way.
  EXPECT_FALSE(nlohmann::json::parse(RunMetadataJson(job, "", 0, 0))["attempts"][1].contains(
      "logTruncated"));
}

TEST_F(RunMetadataTest, NeverFollowsLinksTheJobPlanted) {
  const std::string outside = TempDir(absl::StrCat("outside-", counter_++));
  ASSERT_EQ(symlink(outside.c_str(), (root_ + "/ws/metadata").c_str()), 0);
  absl::Status s = WriteRunMetadata(options_, Finished("job.2"), archive_.get(), "");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(s.message(), "/ws/metadata")) << s;
  EXPECT_NE(access((outside + "/job.2.json").c_str(), F_OK), 0);

  // A link planted as the file itself is replaced, not written through.
  ASSERT_EQ(unlink((root_ + "/ws/metadata").c_str()), 0);
  ASSERT_EQ(mkdir((root_ + "/ws/metadata").c_str(), 0777), 0);
  const std::string target = outside + "/victim";
  { std::ofstream(target) << "keep"; }
  ASSERT_EQ(symlink(target.c_str(), (root_ + "/ws/metadata/job.2.json").c_str()), 0);
  ASSERT_TRUE(WriteRunMetadata(options_, Finished("job.2"), archive_.get(), "").ok());
  EXPECT_EQ(ReadFile(target), "keep");
  struct stat st;
  ASSERT_EQ(lstat((root_ + "/ws/metadata/job.2.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  // No archive (or no captured attempt): an empty .log, the record still.
  EXPECT_EQ(ReadFile(root_ + "/ws/metadata/job.2.log"), "");

  absl::Status missing = WriteRunMetadata(options_, [] {
    v1::Job j = Finished("job.3");
    j.mutable_spec()->set_workspace("gone");
    return j;
  }(), nullptr, "");
  EXPECT_EQ(missing.code(), absl::StatusCode::kFailedPrecondition);
}

TEST(PendingRunMetadataTest, NotedUntilClearedWithTheImageId) {
  const char* base = std::getenv("TEST_TMPDIR");
  RunMetadataOptions o;
  o.pending_dir = absl::StrCat(base != nullptr ? base : "/tmp", "/pending-", getpid());
  EXPECT_TRUE(PendingRunMetadata(o).empty());  // no directory yet
  ASSERT_TRUE(MarkRunMetadataPending(o, "job-1", "sha256:abc").ok());
  ASSERT_TRUE(MarkRunMetadataPending(o, ".odd", "").ok());
  auto owed = PendingRunMetadata(o);
  std::sort(owed.begin(), owed.end());
  ASSERT_EQ(owed.size(), 2u);
  EXPECT_EQ(owed[0], (std::pair<std::string, std::string>(".odd", "")));
  EXPECT_EQ(owed[1], (std::pair<std::string, std::string>("job-1", "sha256:abc")));
  ClearRunMetadataPending(o, "job-1");
  ClearRunMetadataPending(o, ".odd");
  EXPECT_TRUE(PendingRunMetadata(o).empty());
  // Without a directory nothing is noted.
  EXPECT_TRUE(MarkRunMetadataPending(RunMetadataOptions{}, "job-1", "x").ok());
  EXPECT_TRUE(PendingRunMetadata(RunMetadataOptions{}).empty());
}

// What the writer wrote reads back as evidence of how the run ended.
TEST_F(RunMetadataTest, EvidenceReadsBackWhatWasWritten) {
  const v1::Job job = Finished("job.1");
  ASSERT_TRUE(WriteRunMetadata(options_, job, archive_.get(), "").ok());
  absl::StatusOr<RunEvidence> e = ReadRunEvidence(options_, job.spec());
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->state, v1::JOB_STATE_FAILED);
  EXPECT_EQ(e->failure_cause, v1::FAILURE_CAUSE_NONZERO_EXIT);
  EXPECT_EQ(e->exit_code, 3);
  EXPECT_EQ(e->attempt, 2);
  EXPECT_EQ(e->message, "exited with code 3");
  EXPECT_EQ(e->finished_at, absl::FromUnixSeconds(1'800'000'060));
  EXPECT_EQ(e->started_at, absl::FromUnixSeconds(1'800'000'000));
  EXPECT_EQ(e->path, root_ + "/ws/metadata/job.1.json");
}

// Table: what is not evidence, and the code it gets.
TEST_F(RunMetadataTest, EvidenceRefusesWhatTheJobCouldHaveWritten) {
  const v1::Job job = Finished("job.2");
  const std::string path = root_ + "/ws/metadata/job.2.json";
  // None written.
  EXPECT_EQ(ReadRunEvidence(options_, job.spec()).status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(WriteRunMetadata(options_, job, archive_.get(), "").ok());
  // Another job's spec under the same id (a different argv).
  v1::JobSpec other = job.spec();
  other.set_argv(0, "true");
  EXPECT_EQ(ReadRunEvidence(options_, other).status().code(),
            absl::StatusCode::kFailedPrecondition);
  // Writable by others: not trusted.
  ASSERT_EQ(chmod(path.c_str(), 0666), 0);
  EXPECT_EQ(ReadRunEvidence(options_, job.spec()).status().code(),
            absl::StatusCode::kFailedPrecondition);
  // A link planted in its place is never followed.
  ASSERT_EQ(unlink(path.c_str()), 0);
  ASSERT_EQ(symlink("/etc/hostname", path.c_str()), 0);
  EXPECT_EQ(ReadRunEvidence(options_, job.spec()).status().code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_EQ(unlink(path.c_str()), 0);
  // Not the writer's JSON.
  std::ofstream(path) << "{not json";
  ASSERT_EQ(chmod(path.c_str(), 0640), 0);
  EXPECT_EQ(ReadRunEvidence(options_, job.spec()).status().code(), absl::StatusCode::kDataLoss);
  // A state that is not final.
  std::ofstream(path, std::ios::trunc)
      << nlohmann::json({{"id", "job.2"}, {"workspace", "ws"}, {"action", "extract"},
                         {"image", "berth-test/busybox:1"}, {"argv", {"sh", "-c", "echo hi"}},
                         {"state", "JOB_STATE_RUNNING"}})
             .dump();
  EXPECT_EQ(ReadRunEvidence(options_, job.spec()).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// The log beside the metadata is kept in another archive (a restored
// store's) with its streams apart; a file whose size is not what the
// metadata says, or that others could write, is not kept.
TEST_F(RunMetadataTest, TheLogBesideTheMetadataIsImportedStreamByStream) {
  const v1::Job job = Finished("job.3");
  ASSERT_TRUE(archive_->Capture("job.3", 2, [](const LogSink& sink) {
    sink(LogStream::kStdout, "out-1\n[berth: stderr]\n");  // the marker in stdout itself
    sink(LogStream::kStderr, "err-1\n");
    return absl::OkStatus();
  }).ok());
  ASSERT_TRUE(WriteRunMetadata(options_, job, archive_.get(), "").ok());
  absl::StatusOr<RunEvidence> e = ReadRunEvidence(options_, job.spec());
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->stdout_log_bytes, 22);
  EXPECT_EQ(e->stderr_log_bytes, 6);

  auto restored = LogArchive::Open({TempDir(absl::StrCat("restored-", counter_++)), 1 << 20});
  ASSERT_TRUE(restored.ok()) << restored.status();
  ASSERT_TRUE(ImportRunLog(options_, job.spec(), *e, **restored).ok());
  bool eof = false;
  EXPECT_EQ(*(*restored)->Read("job.3", 2, LogStream::kStdout, 0, 1 << 20, &eof),
            "out-1\n[berth: stderr]\n");
  EXPECT_EQ(*(*restored)->Read("job.3", 2, LogStream::kStderr, 0, 1 << 20, &eof), "err-1\n");
  EXPECT_EQ(ImportRunLog(options_, job.spec(), *e, **restored).code(),
            absl::StatusCode::kAlreadyExists);

  const std::string log = root_ + "/ws/metadata/job.3.log";
  auto fresh = LogArchive::Open({TempDir(absl::StrCat("restored-", counter_++)), 1 << 20});
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  std::ofstream(log, std::ios::app) << "appended by the job\n";
  EXPECT_EQ(ImportRunLog(options_, job.spec(), *e, **fresh).code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_EQ(truncate(log.c_str(), 22 + 16 + 6), 0);
  ASSERT_EQ(chmod(log.c_str(), 0666), 0);
  EXPECT_EQ(ImportRunLog(options_, job.spec(), *e, **fresh).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE((*fresh)->Has("job.3", 2)) << "nothing kept of a refused log";
  ASSERT_EQ(chmod(log.c_str(), 0640), 0);
  EXPECT_TRUE(ImportRunLog(options_, job.spec(), *e, **fresh).ok());
}

}  // namespace
}  // namespace berth
