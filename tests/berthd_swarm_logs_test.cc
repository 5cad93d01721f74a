// Job logs on the real swarm through the real berthd --runtime=swarm
// ("a Swarm job's log"): a job that ends by itself keeps its whole
// log, read through the manager from the node that ran it, stdout and stderr
// apart, after its service is gone; a job Berth stops (its container removed
// with its task) keeps the tail read before the removal, after a line that
// says so; a follow of a running job goes on until the job ends.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "executor/runtime/swarm/testing/swarm_test_util.h"
#include "gtest/gtest.h"
#include "tests/read_job_log.h"
#include "tests/swarm_berthd.h"

namespace berth {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

class BerthdSwarmLogs : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<BerthdProcess>> b = StartSwarmBerthd(256 * kMiB);
    ASSERT_TRUE(b.ok()) << b.status();
    b_ = *std::move(b);
    c_ = b_->Client(Role::kPusher);
    op_ = b_->Client(Role::kOperator);
    prefix_ = UniqueJobPrefix();
  }
  void TearDown() override {
    if (b_ != nullptr) (void)testing::RemoveInstanceServices(b_->instance());
  }
  std::unique_ptr<BerthdProcess> b_;
  std::unique_ptr<BerthClient> c_, op_;
  std::string prefix_;
};

TEST_F(BerthdSwarmLogs, AFinishedJobKeepsItsWholeLogStreamsApart) {
  const std::string id = prefix_ + "lines";
  v1::Snapshot s;
  s.set_generation(1);
  *s.add_jobs() =
      BusyboxJob(id, "ws", 64 * kMiB, "seq 1 20000; seq 1 100 | sed 's/^/err-/' >&2");
  ASSERT_TRUE(c_->Sync(s).ok());
  absl::StatusOr<v1::Job> done = WaitTerminal(*c_, id, absl::Seconds(120));
  ASSERT_TRUE(done.ok()) << done.status() << "\n" << b_->Log();
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_FALSE(done->node().empty());

  JobLogRead log = ReadJobLog(*op_, id);
  ASSERT_TRUE(log.status.ok()) << log.status;
  std::vector<absl::string_view> out = absl::StrSplit(log.out, '\n');
  ASSERT_EQ(out.size(), 20001u) << log.out.substr(0, 200);
  for (int i = 0; i < 20000; ++i) {
    int n = 0;
    ASSERT_TRUE(absl::SimpleAtoi(out[i], &n) && n == i + 1) << "line " << i << ": " << out[i];
  }
  std::vector<absl::string_view> err = absl::StrSplit(log.err, '\n');
  ASSERT_EQ(err.size(), 101u) << log.err.substr(0, 200);
  EXPECT_EQ(err[0], "err-1");
  EXPECT_EQ(err[99], "err-100");
  EXPECT_EQ(log.ended, std::vector<int>{1});
  EXPECT_FALSE(absl::StrContains(b_->Log(), "job log not captured")) << b_->Log();
}

TEST_F(BerthdSwarmLogs, AStoppedJobKeepsTheTailReadBeforeItsServiceWasRemoved) {
  const std::string id = prefix_ + "stopped";
  v1::Snapshot s;
  s.set_generation(1);
  *s.add_jobs() = BusyboxJob(id, "ws", 64 * kMiB, "echo started-$HOSTNAME; sleep 300");
  ASSERT_TRUE(c_->Sync(s).ok());
  ASSERT_TRUE(WaitJob(*c_, id, [](const v1::Job& j) {
                return j.state() == v1::JOB_STATE_RUNNING;
              }, absl::Seconds(60)).ok())
      << b_->Log();
  // Its output is there before the stop (read live through the manager), so
  // the tail Stop reads holds it.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (!absl::StrContains(ReadJobLog(*op_, id).out, "started-")) {
    ASSERT_LT(absl::Now(), deadline) << "no live output\n" << b_->Log();
    absl::SleepFor(absl::Milliseconds(200));  // polling interval, not a wait
  }
  v1::Snapshot none;
  none.set_generation(2);  // the job-server withdraws it: cancelled
  ASSERT_TRUE(c_->Sync(none).ok());
  absl::StatusOr<v1::Job> done = WaitTerminal(*c_, id, absl::Seconds(60));
  ASSERT_TRUE(done.ok()) << done.status() << "\n" << b_->Log();
  EXPECT_EQ(done->state(), v1::JOB_STATE_CANCELLED) << done->message();

  JobLogRead log = ReadJobLog(*op_, id);
  ASSERT_TRUE(log.status.ok()) << log.status;
  EXPECT_TRUE(absl::StartsWith(log.out, "[berth: the job was stopped on Swarm")) << log.out;
  EXPECT_TRUE(absl::StrContains(log.out, "started-")) << log.out;
  EXPECT_EQ(log.ended, std::vector<int>{1});
}

TEST_F(BerthdSwarmLogs, AFollowOfARunningJobGoesOnUntilItEnds) {
  // ReadJobLog with follow, started while the job runs on a node: the
  // manager streams the task's output as it comes, and the read ends with
  // the attempt (its whole log, streams apart, the end marked).
  const std::string id = prefix_ + "followed";
  v1::Snapshot s;
  s.set_generation(1);
  *s.add_jobs() = BusyboxJob(
      id, "ws", 64 * kMiB, "echo first; echo first-err >&2; sleep 4; seq 1 2000; echo last");
  ASSERT_TRUE(c_->Sync(s).ok());
  ASSERT_TRUE(WaitJob(*c_, id, [](const v1::Job& j) {
                return j.state() == v1::JOB_STATE_RUNNING;
              }, absl::Seconds(60)).ok())
      << b_->Log();
  JobLogRead followed = ReadJobLog(*op_, id, 1, /*follow=*/true, absl::Seconds(90));
  ASSERT_TRUE(followed.status.ok()) << followed.status << "\n" << b_->Log();
  absl::StatusOr<v1::Job> done = c_->GetJob(id);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  std::string want = "first\n";
  for (int i = 1; i <= 2000; ++i) absl::StrAppend(&want, i, "\n");
  absl::StrAppend(&want, "last\n");
  EXPECT_TRUE(followed.out == want) << followed.out.size() << " bytes: "
                                    << followed.out.substr(0, 100);
  EXPECT_EQ(followed.err, "first-err\n");
  EXPECT_EQ(followed.ended, std::vector<int>{1});
}

}  // namespace
}  // namespace berth
