// Job logs with the real berthd, dockerd and gRPC: complete logs
// of every attempt kept after the container is gone, capped with a marker,
// read with ReadJobLog (roles), followed across a requeue, and kept exactly
// once when berthd is SIGKILLed between a job's exit and its removal.
#include <sys/wait.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "gtest/gtest.h"
#include "tests/berthd_process.h"
#include "tests/read_job_log.h"

namespace berth {
namespace {

using ::berth::testing::WaitFor;

constexpr int64_t kMiB = int64_t{1} << 20;

class BerthdLogsTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> flags, std::map<std::string, std::string> env = {}) {
    BerthdProcessOptions o;
    o.memory = "1Gi";
    o.tick = "200ms";
    o.stop_grace = "1s";
    o.extra_flags = std::move(flags);
    o.env = std::move(env);
    absl::StatusOr<std::unique_ptr<BerthdProcess>> b = BerthdProcess::Start(o);
    ASSERT_TRUE(b.ok()) << b.status();
    b_ = *std::move(b);
    prefix_ = UniqueJobPrefix();
  }
  void Sync(uint64_t generation, std::vector<v1::JobSpec> jobs) {
    v1::Snapshot s;
    s.set_generation(generation);
    for (v1::JobSpec& j : jobs) *s.add_jobs() = std::move(j);
    absl::StatusOr<v1::SyncSnapshotResponse> r = b_->Client(Role::kPusher)->Sync(s);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  bool WaitState(const std::string& id, v1::JobState state,
                 absl::Duration timeout = absl::Seconds(60)) {
    std::unique_ptr<BerthClient> c = b_->Client(Role::kReader);
    return WaitFor(
        [&] {
          absl::StatusOr<v1::Job> j = c->GetJob(id);
          return j.ok() && j->state() == state;
        },
        timeout);
  }
  bool DockerHasJob(const std::string& id) {
    const std::string cmd = absl::StrCat(
        "docker ps -a --filter label=berth.instance=", b_->instance(),
        " --filter label=berth.job=", id, " -q | grep -q .");
    return std::system(cmd.c_str()) == 0;
  }

  std::unique_ptr<BerthdProcess> b_;
  std::string prefix_;
};

TEST_F(BerthdLogsTest, CompleteLogsOutliveTheContainerAndTheCapKeepsHeadAndTail) {
  // 1,000,000 short lines are ~75 MB of json-file: Docker must keep them.
  // Followed, but Docker still holds the whole log at the end, so it is
  // read whole then (Docker 20.10's follow can skip part of a fast burst).
  Start({"--follow_logs", "--log_cap=4Mi", "--docker_log_max_size=50m",
         "--docker_log_max_files=3"});
  const std::string lines = prefix_ + "lines";
  const std::string big = prefix_ + "big";
  Sync(1, {BusyboxJob(lines, "ws", 64 * kMiB,
                      "seq 1 200000; seq 1 300 | sed 's/^/err-/' >&2"),
           BusyboxJob(big, "ws", 64 * kMiB, "seq 1 1000000")});
  ASSERT_TRUE(WaitState(lines, v1::JOB_STATE_SUCCEEDED)) << b_->Log();
  ASSERT_TRUE(WaitState(big, v1::JOB_STATE_SUCCEEDED)) << b_->Log();
  ASSERT_TRUE(WaitFor([&] { return !DockerHasJob(lines) && !DockerHasJob(big); },
                      absl::Seconds(30)));

  std::unique_ptr<BerthClient> op = b_->Client(Role::kOperator);
  JobLogRead log = ReadJobLog(*op, lines);
  ASSERT_TRUE(log.status.ok()) << log.status;
  std::vector<absl::string_view> out = absl::StrSplit(log.out, '\n');
  ASSERT_EQ(out.size(), 200001u);
  for (int i = 0; i < 200000; ++i) {
    int n = 0;
    ASSERT_TRUE(absl::SimpleAtoi(out[i], &n) && n == i + 1) << "line " << i << ": " << out[i];
  }
  std::vector<absl::string_view> err = absl::StrSplit(log.err, '\n');
  ASSERT_EQ(err.size(), 301u);
  EXPECT_EQ(err[299], "err-300");
  EXPECT_EQ(log.ended, std::vector<int>{1});

  // 6,888,896 bytes against a 4 MiB cap: 2 MiB of head, the marker, 2 MiB of tail.
  std::string all;
  for (int i = 1; i <= 1000000; ++i) absl::StrAppend(&all, i, "\n");
  const int64_t cap = 4 * kMiB;
  JobLogRead capped = ReadJobLog(*op, big);
  ASSERT_TRUE(capped.status.ok()) << capped.status;
  const std::string head = all.substr(0, cap / 2);
  const std::string marker =
      absl::StrCat("[berth: ", all.size() - cap, " bytes cut here; ", all.size(),
                   " bytes in all]\n");
  // (Compared with ==: gtest's diff of megabytes takes minutes.)
  EXPECT_TRUE(capped.out.compare(0, head.size(), head) == 0) << capped.out.substr(0, 100);
  EXPECT_NE(capped.out.find(marker), std::string::npos) << marker;
  EXPECT_TRUE(absl::EndsWith(capped.out, all.substr(all.size() - cap / 2)));
  EXPECT_EQ(capped.out.size(), head.size() + (head.back() == '\n' ? 0 : 1) + marker.size() +
                                   cap / 2);

  // Roles: readers need --readers_read_logs, pushers never.
  EXPECT_EQ(ReadJobLog(*b_->Client(Role::kReader), lines).status.code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(ReadJobLog(*b_->Client(Role::kPusher), lines).status.code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(ReadJobLog(*op, prefix_ + "unknown").status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadJobLog(*op, lines, 2).status.code(), absl::StatusCode::kNotFound);
}

TEST_F(BerthdLogsTest, FollowGoesOnAcrossARequeue) {
  Start({"--readers_read_logs"});
  const std::string job = prefix_ + "requeued";
  // Prints its attempt marker, then waits for a file only the second run
  // finds (the workspace is not mounted: /tmp is per container).
  Sync(1, {BusyboxJob(job, "ws", 32 * kMiB, "echo started; echo to-err >&2; sleep 4; echo done")});
  ASSERT_TRUE(WaitState(job, v1::JOB_STATE_RUNNING)) << b_->Log();
  std::unique_ptr<BerthClient> reader = b_->Client(Role::kReader);
  JobLogRead followed;
  std::thread t([&] { followed = ReadJobLog(*reader, job, 1, true, absl::Seconds(90)); });
  // Once the first run has printed, drain (requeues it) and resume.
  ASSERT_TRUE(WaitFor([&] { return absl::StrContains(ReadJobLog(*reader, job).out, "started"); },
                      absl::Seconds(20)));
  std::unique_ptr<BerthClient> op = b_->Client(Role::kOperator);
  ASSERT_TRUE(op->Drain("test drain").ok());
  ASSERT_TRUE(WaitState(job, v1::JOB_STATE_QUEUED)) << b_->Log();
  ASSERT_TRUE(op->Resume().ok());
  ASSERT_TRUE(WaitState(job, v1::JOB_STATE_SUCCEEDED)) << b_->Log();
  t.join();
  ASSERT_TRUE(followed.status.ok()) << followed.status;
  EXPECT_EQ(followed.attempts, (std::vector<int>{1, 2}));
  EXPECT_EQ(followed.out, "started\nstarted\ndone\n");
  EXPECT_EQ(followed.err, "to-err\nto-err\n");
  EXPECT_EQ(followed.ended, (std::vector<int>{1, 2}));
  // Each attempt stays readable by number.
  EXPECT_EQ(ReadJobLog(*reader, job, 1).out, "started\n");
  EXPECT_EQ(ReadJobLog(*reader, job, 2).out, "started\ndone\n");
}

// kill -9 after the log is captured but before the outcome is recorded, and
// after the files are written but before they are renamed into place: after
// a restart the job's log is there once, complete.
TEST_F(BerthdLogsTest, KillNineBetweenExitAndRemovalLosesNoLogAndStoresNoneTwice) {
  for (const char* point : {"reconcile.after_log_capture", "logs.before_rename"}) {
    SCOPED_TRACE(point);
    Start({}, {{"BERTH_CRASH_POINT", point}});
    const std::string job = prefix_ + "crash";
    Sync(1, {BusyboxJob(job, "ws", 32 * kMiB, "seq 1 5000; echo bye >&2")});
    ASSERT_NE(b_->WaitExit(absl::Seconds(60)), -1) << "no crash at " << point << "\n"
                                                   << b_->Log();
    EXPECT_TRUE(DockerHasJob(job)) << "the container must outlive the crash";
    ASSERT_TRUE(b_->Restart().ok());
    ASSERT_TRUE(WaitState(job, v1::JOB_STATE_SUCCEEDED)) << b_->Log();
    ASSERT_TRUE(WaitFor([&] { return !DockerHasJob(job); }, absl::Seconds(30)));
    JobLogRead log = ReadJobLog(*b_->Client(Role::kOperator), job);
    ASSERT_TRUE(log.status.ok()) << log.status;
    std::string want;
    for (int i = 1; i <= 5000; ++i) absl::StrAppend(&want, i, "\n");
    EXPECT_TRUE(log.out == want) << log.out.size() << " bytes, want " << want.size();
    EXPECT_EQ(log.err, "bye\n");
    EXPECT_EQ(log.ended, std::vector<int>{1});
    b_.reset();
  }
}

// Live capture (--follow_logs): Docker keeps 2 files of 1 MB of
// json-file (~28,000 short lines); a job printing 300,000 numbered lines
// still leaves the exact head, the marker and the exact tail.
TEST_F(BerthdLogsTest, AFollowedLogKeepsTheExactHeadPastDockersRotation) {
  Start({"--follow_logs", "--log_cap=256Ki", "--docker_log_max_size=1m",
         "--docker_log_max_files=2"});
  const std::string job = prefix_ + "rotated";
  // 600 batches of 500 six-digit lines, ~25 ms apart: 2.1 MB in ~15 s.
  Sync(1, {BusyboxJob(job, "ws", 32 * kMiB,
                      "i=100000; while [ $i -lt 400000 ]; do seq $i $((i+499)); "
                      "i=$((i+500)); usleep 20000; done")});
  ASSERT_TRUE(WaitState(job, v1::JOB_STATE_SUCCEEDED, absl::Minutes(3))) << b_->Log();
  std::string all;
  for (int i = 100000; i < 400000; ++i) absl::StrAppend(&all, i, "\n");
  const int64_t cap = 256 << 10;
  const std::string head = all.substr(0, cap / 2);
  const std::string want = absl::StrCat(
      head, head.back() == '\n' ? "" : "\n", "[berth: ", all.size() - cap,
      " bytes cut here; ", all.size(), " bytes in all]\n", all.substr(all.size() - cap / 2));
  JobLogRead log = ReadJobLog(*b_->Client(Role::kOperator), job);
  ASSERT_TRUE(log.status.ok()) << log.status;
  EXPECT_TRUE(log.out == want) << log.out.substr(0, 100) << "...\n"
                               << log.out.substr(cap / 2 - 50, 200);
}

// kill -9 of berthd while a job runs and prints: the restarted berthd follows
// it again from what Docker holds (all of it here), and keeps it once.
TEST_F(BerthdLogsTest, ARestartWhileAJobRunsKeepsItsLogOnce) {
  Start({"--follow_logs"});
  const std::string job = prefix_ + "restart";
  Sync(1, {BusyboxJob(job, "ws", 32 * kMiB,
                      "seq 1 3000; sleep 3; seq 3001 6000")});
  ASSERT_TRUE(WaitState(job, v1::JOB_STATE_RUNNING)) << b_->Log();
  std::unique_ptr<BerthClient> op = b_->Client(Role::kOperator);
  // It has printed its first half (berthd follows it) before the kill.
  ASSERT_TRUE(WaitFor([&] { return absl::StrContains(ReadJobLog(*op, job).out, "\n3000\n"); },
                      absl::Seconds(30)));
  b_->Kill9();
  ASSERT_TRUE(b_->Restart().ok());
  ASSERT_TRUE(WaitState(job, v1::JOB_STATE_SUCCEEDED)) << b_->Log();
  std::string want;
  for (int i = 1; i <= 6000; ++i) absl::StrAppend(&want, i, "\n");
  JobLogRead log = ReadJobLog(*b_->Client(Role::kOperator), job);
  ASSERT_TRUE(log.status.ok()) << log.status;
  EXPECT_TRUE(log.out == want) << log.out.size() << " bytes, want " << want.size();
  EXPECT_EQ(log.ended, std::vector<int>{1});
}

}  // namespace
}  // namespace berth
