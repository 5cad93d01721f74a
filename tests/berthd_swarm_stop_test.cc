// Berth stops jobs on the real swarm (tools/swarm_cluster.sh up) through the
// real berthd --runtime=swarm: a cancelled job and one past its max_duration
// end their container -- as the nodes' own engines see it, not the manager's
// task list -- before Berth reports them ended, and nothing of them runs in
// the 20 s after. (Docker 20.10 does not stop a replicated job's task when
// its service is removed: executor/runtime/swarm/swarm_runtime.h.)
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "executor/runtime/swarm/testing/swarm_test_util.h"
#include "gtest/gtest.h"
#include "tests/swarm_berthd.h"

namespace berth {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

class BerthdSwarmStop : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<BerthdProcess>> b = StartSwarmBerthd(256 * kMiB);
    ASSERT_TRUE(b.ok()) << b.status();
    b_ = *std::move(b);
    c_ = b_->Client(Role::kPusher);
    prefix_ = UniqueJobPrefix();
  }
  void TearDown() override {
    if (b_ != nullptr) (void)testing::RemoveInstanceServices(b_->instance());
  }

  // Live containers of `job` on all nodes (-1 when a node did not answer).
  int Live(const std::string& job) {
    absl::StatusOr<testing::NodeProcesses> p = testing::SampleNodeProcesses(b_->instance());
    EXPECT_TRUE(p.ok()) << p.status();
    if (!p.ok()) return -1;
    auto it = p->nodes_by_job.find(job);
    return it == p->nodes_by_job.end() ? 0 : static_cast<int>(it->second.size());
  }

  // Runs `job` (a 120 s sleep) until its container runs on a node.
  void StartLong(const v1::JobSpec& job) {
    v1::Snapshot s;
    s.set_generation(1);
    *s.add_jobs() = job;
    ASSERT_TRUE(c_->Sync(s).ok());
    ASSERT_TRUE(WaitJob(*c_, job.id(),
                        [](const v1::Job& j) { return j.state() == v1::JOB_STATE_RUNNING; },
                        absl::Seconds(60))
                    .ok())
        << b_->Log();
    ASSERT_TRUE(testing::WaitFor([&] { return Live(job.id()) == 1; }, absl::Seconds(30)));
  }

  // Samples until the job is terminal (never two containers of it), checks
  // that none runs when Berth reports the end and for 20 s after; the job.
  v1::Job AwaitStoppedForGood(const std::string& id, absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    absl::StatusOr<v1::Job> j;
    while (true) {
      j = c_->GetJob(id);
      EXPECT_TRUE(j.ok()) << j.status();
      if (!j.ok()) return {};
      if (IsTerminalState(j->state())) break;
      EXPECT_LE(Live(id), 1) << id << ": two live attempts";
      if (absl::Now() > deadline) {
        ADD_FAILURE() << id << " not ended in time\n" << b_->Log();
        return *j;
      }
      absl::SleepFor(absl::Milliseconds(200));  // sampling interval, not a wait
    }
    EXPECT_EQ(Live(id), 0) << id << " runs on after Berth reported it ended";
    const absl::Time until = absl::Now() + absl::Seconds(20);
    int samples = 0;
    while (absl::Now() < until) {
      EXPECT_EQ(Live(id), 0) << id << " runs on after Berth reported it ended";
      ++samples;
      absl::SleepFor(absl::Milliseconds(500));  // sampling interval, not a wait
    }
    EXPECT_GE(samples, 10);
    return *j;
  }
  static bool IsTerminalState(v1::JobState s) {
    return s == v1::JOB_STATE_SUCCEEDED || s == v1::JOB_STATE_FAILED ||
           s == v1::JOB_STATE_CANCELLED;
  }

  std::unique_ptr<BerthdProcess> b_;
  std::unique_ptr<BerthClient> c_;
  std::string prefix_;
};

TEST_F(BerthdSwarmStop, CancelledJobsContainerEndsBeforeItIsReportedEnded) {
  const std::string id = prefix_ + "cancel";
  ASSERT_NO_FATAL_FAILURE(StartLong(BusyboxJob(id, "ws", 64 * kMiB, "sleep 120")));
  const absl::Time t0 = absl::Now();
  v1::Snapshot s;
  s.set_generation(2);  // without the job: withdrawn
  *s.add_jobs() = BusyboxJob(prefix_ + "other", "ws", 16 * kMiB, "true");
  ASSERT_TRUE(c_->Sync(s).ok());
  ASSERT_TRUE(WaitJob(*c_, id, [](const v1::Job& j) { return IsTerminalState(j.state()); },
                      absl::Seconds(60)).ok()) << b_->Log();
  const absl::Duration took = absl::Now() - t0;
  const v1::Job j = AwaitStoppedForGood(id, absl::Seconds(5));
  EXPECT_EQ(j.state(), v1::JOB_STATE_CANCELLED) << j.message();
  // The engine's own code (sleep ends on docker-init's SIGTERM), or none.
  if (j.has_exit_code()) {
    EXPECT_EQ(j.exit_code(), 143);
  }
  std::printf("swarm cancel: CANCELLED %s after the snapshot withdrew it (exit %s)\n",
              absl::FormatDuration(took).c_str(),
              j.has_exit_code() ? std::to_string(j.exit_code()).c_str() : "none");
}

TEST_F(BerthdSwarmStop, TimedOutJobsContainerEndsBeforeItIsReportedEnded) {
  const std::string id = prefix_ + "maxd";
  v1::JobSpec spec = BusyboxJob(id, "ws", 64 * kMiB, "sleep 120");
  spec.mutable_max_duration()->set_seconds(5);
  ASSERT_NO_FATAL_FAILURE(StartLong(spec));
  const v1::Job j = AwaitStoppedForGood(id, absl::Seconds(60));
  EXPECT_EQ(j.state(), v1::JOB_STATE_FAILED) << j.message();
  EXPECT_EQ(j.failure_cause(), v1::FAILURE_CAUSE_TIMED_OUT) << j.message();
  if (j.has_exit_code()) {
    EXPECT_EQ(j.exit_code(), 143);
  }
  const absl::Duration ran =
      absl::FromUnixSeconds(j.finished_at().seconds()) - absl::FromUnixSeconds(j.started_at().seconds());
  EXPECT_LT(ran, absl::Seconds(30)) << "ran " << ran << " of its 120 s";
  std::printf("swarm max_duration 5s: ended after %s of running (exit %s)\n",
              absl::FormatDuration(ran).c_str(),
              j.has_exit_code() ? std::to_string(j.exit_code()).c_str() : "none");
}

// The operator's drain requeues every running job and resume lets them run
// again: each job's new attempt starts only once its old container has ended
// (never two live containers of one job on any node), and each finishes
// once, in its second attempt.
TEST_F(BerthdSwarmStop, DrainThenResumeNeverRunsAJobTwiceAtOnce) {
  std::unique_ptr<BerthClient> op = b_->Client(Role::kOperator);
  std::vector<std::string> ids;
  v1::Snapshot s;
  s.set_generation(1);
  for (int i = 0; i < 3; ++i) {
    ids.push_back(absl::StrCat(prefix_, "drain", i));
    *s.add_jobs() = BusyboxJob(ids.back(), "ws", 64 * kMiB, "sleep 20");
  }
  ASSERT_TRUE(c_->Sync(s).ok());
  for (const std::string& id : ids) {
    ASSERT_TRUE(testing::WaitFor([&] { return Live(id) == 1; }, absl::Seconds(60)))
        << id << "\n" << b_->Log();
  }
  const absl::Time t0 = absl::Now();
  absl::StatusOr<v1::DrainResponse> drained = op->Drain("stop test");
  ASSERT_TRUE(drained.ok()) << drained.status();
  EXPECT_EQ(drained->requeued_job_ids_size(), 3);
  // Resume at once: the requeued jobs are planned again as soon as each
  // old attempt is known stopped.
  ASSERT_TRUE(op->Resume().ok());
  int samples = 0, overlaps = 0;
  const absl::Time deadline = absl::Now() + absl::Seconds(120);
  while (true) {
    bool all_done = true;
    for (const std::string& id : ids) {
      absl::StatusOr<v1::Job> j = c_->GetJob(id);
      ASSERT_TRUE(j.ok()) << j.status();
      all_done = all_done && IsTerminalState(j->state());
    }
    if (all_done) break;
    ASSERT_LT(absl::Now(), deadline) << "jobs not done in time\n" << b_->Log();
    absl::StatusOr<testing::NodeProcesses> p = testing::SampleNodeProcesses(b_->instance());
    ASSERT_TRUE(p.ok()) << p.status();
    ++samples;
    for (const auto& [job, nodes] : p->nodes_by_job) {
      EXPECT_LE(nodes.size(), 1u) << job << ": two live attempts at once";
      overlaps += nodes.size() > 1 ? 1 : 0;
    }
    absl::SleepFor(absl::Milliseconds(200));  // sampling interval, not a wait
  }
  const absl::Duration took = absl::Now() - t0;
  for (const std::string& id : ids) {
    absl::StatusOr<v1::Job> j = c_->GetJob(id);
    ASSERT_TRUE(j.ok());
    EXPECT_EQ(j->state(), v1::JOB_STATE_SUCCEEDED) << id << ": " << j->message();
    EXPECT_EQ(j->requeue_count(), 1) << id;
    EXPECT_EQ(Live(id), 0) << id;
  }
  std::printf("swarm drain + resume of 3 jobs: all done %s after the drain; two live attempts "
              "of one job in %d of %d samples\n",
              absl::FormatDuration(took).c_str(), overlaps, samples);
}

}  // namespace
}  // namespace berth
