// Outputs their owners can read, with the real berthd, dockerd and gRPC:
// --workspace_group makes the job's workspace setgid to the
// researchers' group and what the job writes the group's and
// group-readable; --write_run_metadata leaves <workspace>/metadata/<job>.log
// and .json that match GetJob; GetJob shows the workspace's host path.
// Without the flags the workspace is prepared as before.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/berthd_process.h"

namespace berth {
namespace {

using ::berth::testing::WaitFor;

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr uint32_t kGroup = 4243;  // the researchers' group (by gid: no name needed)

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The id of the test image, as `docker image inspect` gives it.
std::string ImageId() {
  FILE* p = popen("docker image inspect --format '{{.Id}}' berth-test/busybox:1", "r");
  if (p == nullptr) return "";
  char buf[256] = {};
  std::string out = fgets(buf, sizeof(buf), p) != nullptr ? buf : "";
  pclose(p);
  return std::string(absl::StripAsciiWhitespace(out));
}

std::string Rfc3339(const google::protobuf::Timestamp& t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E*SZ",
                          absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos()),
                          absl::UTCTimeZone());
}

class BerthdOutputsTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> flags, std::map<std::string, std::string> env = {}) {
    const char* tmp = std::getenv("TEST_TMPDIR");
    ASSERT_NE(tmp, nullptr);
    root_ = absl::StrCat(tmp, "/", UniqueJobPrefix(), "workspaces");
    ASSERT_EQ(mkdir(root_.c_str(), 0755), 0);
    ASSERT_EQ(mkdir((root_ + "/ws").c_str(), 0755), 0);  // as a job-server leaves it
    BerthdProcessOptions o;
    o.tick = "200ms";
    o.extra_flags = std::move(flags);
    o.extra_flags.push_back("--workspaces_root=" + root_);
    o.env = std::move(env);
    absl::StatusOr<std::unique_ptr<BerthdProcess>> b = BerthdProcess::Start(o);
    ASSERT_TRUE(b.ok()) << b.status();
    b_ = *std::move(b);
    prefix_ = UniqueJobPrefix();
  }
  // Runs one job to its end; its record.
  v1::Job Run(const std::string& id, const std::string& shell, v1::JobState want) {
    v1::Snapshot s;
    s.set_generation(1);
    *s.add_jobs() = BusyboxJob(id, "ws", 64 * kMiB, shell);
    absl::StatusOr<v1::SyncSnapshotResponse> r = b_->Client(Role::kPusher)->Sync(s);
    EXPECT_TRUE(r.ok()) << r.status();
    std::unique_ptr<BerthClient> c = b_->Client(Role::kReader);
    v1::Job job;
    EXPECT_TRUE(WaitFor(
        [&] {
          absl::StatusOr<v1::Job> j = c->GetJob(id);
          if (j.ok()) job = *j;
          return j.ok() && j->state() == want;
        },
        absl::Seconds(60)))
        << b_->Log();
    return job;
  }

  std::string root_;
  std::unique_ptr<BerthdProcess> b_;
  std::string prefix_;
};

TEST_F(BerthdOutputsTest, GroupReadableOutputsAndRunMetadata) {
  Start({absl::StrCat("--workspace_group=", kGroup), "--write_run_metadata"});
  const std::string id = prefix_ + "out";
  const v1::Job job = Run(id,
                          "echo result > /workspace/out.txt && mkdir -p /workspace/res && "
                          "echo more > /workspace/res/more.txt && seq 1 2000 && "
                          "echo oops >&2 && exit 3",
                          v1::JOB_STATE_FAILED);
  ASSERT_EQ(job.state(), v1::JOB_STATE_FAILED) << job.DebugString();
  const std::string dir = root_ + "/ws";
  EXPECT_EQ(job.workspace_path(), dir);

  // The workspace and what the job wrote: the group's, group-readable.
  struct stat st;
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, kGroup);
  EXPECT_EQ(st.st_mode & 07777, 02770u);
  for (const char* name : {"/out.txt", "/res", "/res/more.txt"}) {
    SCOPED_TRACE(name);
    ASSERT_EQ(stat((dir + name).c_str(), &st), 0);
    EXPECT_EQ(st.st_gid, kGroup);
    EXPECT_NE(st.st_mode & S_IRGRP, 0u) << std::oct << st.st_mode;
  }

  // The metadata: the complete log and the record, matching GetJob. They are
  // written right after the outcome is recorded: wait for the files.
  const std::string log_path = dir + "/metadata/" + id + ".log";
  const std::string json_path = dir + "/metadata/" + id + ".json";
  ASSERT_TRUE(WaitFor([&] { return access(json_path.c_str(), F_OK) == 0; }, absl::Seconds(10)))
      << b_->Log();
  std::string want_log;
  for (int i = 1; i <= 2000; ++i) absl::StrAppend(&want_log, i, "\n");
  want_log += "[berth: stderr]\noops\n";
  EXPECT_EQ(ReadFile(log_path), want_log);
  const nlohmann::json m = nlohmann::json::parse(ReadFile(json_path));
  EXPECT_EQ(m["id"], id);
  EXPECT_EQ(m["imageId"], ImageId());
  EXPECT_EQ(m["argv"], nlohmann::json(std::vector<std::string>(job.spec().argv().begin(),
                                                                job.spec().argv().end())));
  EXPECT_EQ(m["resources"]["memoryBytes"], job.spec().resources().memory_bytes());
  EXPECT_EQ(m["resources"]["cpuMillis"], job.spec().resources().cpu_millis());
  EXPECT_EQ(m["state"], "JOB_STATE_FAILED");
  EXPECT_EQ(m["failureCause"], "FAILURE_CAUSE_NONZERO_EXIT");
  EXPECT_EQ(m["exitCode"], 3);
  EXPECT_EQ(m["message"], job.message());
  EXPECT_EQ(m["startedAt"], Rfc3339(job.started_at()));
  EXPECT_EQ(m["finishedAt"], Rfc3339(job.finished_at()));
  EXPECT_EQ(m["queuedAt"], Rfc3339(job.queued_at()));
  ASSERT_TRUE(job.has_observed());
  EXPECT_EQ(m["observed"]["runSeconds"], job.observed().run_seconds());
  EXPECT_EQ(m["observed"]["peakMemoryBytes"], job.observed().peak_memory_bytes());
  for (const std::string& p : {log_path, json_path, dir + "/metadata"}) {
    SCOPED_TRACE(p);
    ASSERT_EQ(stat(p.c_str(), &st), 0);
    EXPECT_EQ(st.st_gid, kGroup);
    EXPECT_NE(st.st_mode & S_IRGRP, 0u) << std::oct << st.st_mode;
    EXPECT_EQ(st.st_mode & S_IWGRP, 0u) << std::oct << st.st_mode;  // jobs cannot rewrite it
  }
}

TEST_F(BerthdOutputsTest, WithoutTheFlagsTheWorkspaceIsAsBefore) {
  Start({});
  const std::string id = prefix_ + "plain";
  const v1::Job job = Run(id, "echo result > /workspace/out.txt", v1::JOB_STATE_SUCCEEDED);
  const std::string dir = root_ + "/ws";
  EXPECT_EQ(job.workspace_path(), dir);
  struct stat st;
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65534u);
  EXPECT_EQ(st.st_mode & 07777, 0770u);
  ASSERT_EQ(stat((dir + "/out.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, 65534u);
  EXPECT_NE(access((dir + "/metadata").c_str(), F_OK), 0);  // no metadata written
}

// kill -9 after the job's outcome is recorded and before its metadata is
// written: the restarted berthd writes it (noted as owed before the outcome),
// with the image id the killed one had from the engine.
TEST_F(BerthdOutputsTest, KillNineBeforeTheMetadataWritesItAtRestart) {
  Start({"--write_run_metadata"}, {{"BERTH_CRASH_POINT", "reconcile.after_finalise"}});
  const std::string id = prefix_ + "owed";
  v1::Snapshot s;
  s.set_generation(1);
  *s.add_jobs() = BusyboxJob(id, "ws", 64 * kMiB, "seq 1 100");
  ASSERT_TRUE(b_->Client(Role::kPusher)->Sync(s).ok());
  ASSERT_NE(b_->WaitExit(absl::Seconds(60)), -1) << "no crash\n" << b_->Log();
  const std::string json_path = root_ + "/ws/metadata/" + id + ".json";
  EXPECT_NE(access(json_path.c_str(), F_OK), 0) << "written before the crash point";
  ASSERT_TRUE(b_->Restart().ok());
  ASSERT_TRUE(WaitFor([&] { return access(json_path.c_str(), F_OK) == 0; }, absl::Seconds(30)))
      << b_->Log();
  const nlohmann::json m = nlohmann::json::parse(ReadFile(json_path));
  EXPECT_EQ(m["id"], id);
  EXPECT_EQ(m["state"], "JOB_STATE_SUCCEEDED");
  EXPECT_EQ(m["imageId"], ImageId());
  std::string want_log;
  for (int i = 1; i <= 100; ++i) absl::StrAppend(&want_log, i, "\n");
  EXPECT_EQ(ReadFile(root_ + "/ws/metadata/" + id + ".log"), want_log);
  // Written once: nothing is owed any more.
  DIR* d = opendir((b_->data_dir() + "/logs/.metadata-pending").c_str());
  ASSERT_NE(d, nullptr);
  int owed = 0;
  while (struct dirent* e = readdir(d)) owed += e->d_name[0] != '.';
  closedir(d);
  EXPECT_EQ(owed, 0);
}

}  // namespace
}  // namespace berth
