// DockerRuntime against the real dockerd: how containers end — exit codes,
// OOM, max-duration kills, cancels — and the log tail kept of them.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "executor/runtime/docker/testing/docker_runtime_fixture.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using ::berth::testing::DockerRuntimeTest;
using ::berth::testing::TestSpec;
using ::berth::testing::WaitFor;

TEST_F(DockerRuntimeTest, ExitZeroSucceeds) {
  const std::string job = Job("exit0");
  ContainerObservation obs = RunToEnd(TestSpec(job, {"sh", "-c", "echo hello"}));
  EXPECT_EQ(obs.state, ContainerState::kExited);
  EXPECT_EQ(obs.exit_code, 0);
  EXPECT_FALSE(obs.oom_killed);
  EXPECT_EQ(obs.job_id, job);
  ASSERT_TRUE(obs.started_at.has_value());
  ASSERT_TRUE(obs.finished_at.has_value());
  // Docker stamps StartedAt after the start completes, so a job this short
  // can "finish" a millisecond before it "started".
  EXPECT_GE(*obs.finished_at, *obs.started_at - absl::Seconds(1));
  EXPECT_LT(*obs.finished_at - *obs.started_at, absl::Seconds(30));
  EXPECT_EQ(Classify(obs, StopIntent::kNone).kind, ExitKind::kSucceeded);
  absl::StatusOr<std::string> logs = rt_->LogsTail(job, 1024);
  ASSERT_TRUE(logs.ok()) << logs.status();
  EXPECT_EQ(*logs, "hello\n");
}

TEST_F(DockerRuntimeTest, ExitThreeIsNonzeroExit) {
  ContainerObservation obs = RunToEnd(TestSpec(Job("exit3"), {"sh", "-c", "exit 3"}));
  EXPECT_EQ(obs.exit_code, 3);
  const ExitOutcome out = Classify(obs, StopIntent::kNone);
  EXPECT_EQ(out.kind, ExitKind::kNonzeroExit);
  EXPECT_EQ(out.exit_code, 3);
}

TEST_F(DockerRuntimeTest, MemoryHogIsOomKilled) {
  ContainerSpec spec = TestSpec(
      Job("oom"), {"sh", "-c", "head -c 100000000 /dev/zero | tail"});
  spec.memory_bytes = int64_t{32} << 20;
  ContainerObservation obs = RunToEnd(spec);
  EXPECT_TRUE(obs.oom_killed);
  EXPECT_EQ(obs.exit_code, 137);
  EXPECT_EQ(Classify(obs, StopIntent::kNone).kind, ExitKind::kOomKilled);
}

TEST_F(DockerRuntimeTest, MaxDurationKillIsTimedOut) {
  // The job ignores SIGTERM, so Stop must escalate to SIGKILL after grace.
  const std::string job = Job("timeout");
  ASSERT_TRUE(rt_->Start(TestSpec(
                  job, {"sh", "-c", "trap '' TERM; echo ready; sleep 300"}))
                  .ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<std::string> l = rt_->LogsTail(job, 100);
        return l.ok() && absl::StrContains(*l, "ready");
      },
      absl::Seconds(30)));
  // The caller records its intent, then stops.
  const StopIntent intent = StopIntent::kTimeout;
  const absl::Time t0 = Clock::Real()->Now();
  ASSERT_TRUE(rt_->Stop(job, absl::Seconds(1)).ok());
  const absl::Duration took = Clock::Real()->Now() - t0;
  EXPECT_GE(took, absl::Milliseconds(900));
  EXPECT_LT(took, absl::Seconds(15));
  absl::StatusOr<ContainerObservation> obs = rt_->Inspect(job);
  ASSERT_TRUE(obs.ok()) << obs.status();
  EXPECT_EQ(obs->state, ContainerState::kExited);
  EXPECT_EQ(obs->exit_code, 137);  // SIGKILL
  EXPECT_FALSE(obs->oom_killed);
  EXPECT_EQ(Classify(*obs, intent).kind, ExitKind::kTimedOut);
  // Without the intent, 137 is just a nonzero exit: the intent decides.
  EXPECT_EQ(Classify(*obs, StopIntent::kNone).kind, ExitKind::kNonzeroExit);
  // Stopping a stopped container is fine.
  EXPECT_TRUE(rt_->Stop(job, absl::Seconds(1)).ok());
}

TEST_F(DockerRuntimeTest, CancelKeepsLogs) {
  const std::string job = Job("cancel");
  ASSERT_TRUE(
      rt_->Start(TestSpec(job, {"sh", "-c", "echo started-work; sleep 300"})).ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<std::string> l = rt_->LogsTail(job, 100);
        return l.ok() && absl::StrContains(*l, "started-work");
      },
      absl::Seconds(30)));
  ASSERT_TRUE(rt_->Stop(job, absl::Seconds(5)).ok());
  absl::StatusOr<ContainerObservation> obs = rt_->Inspect(job);
  ASSERT_TRUE(obs.ok()) << obs.status();
  EXPECT_EQ(obs->state, ContainerState::kExited);
  EXPECT_EQ(obs->exit_code, 143);  // SIGTERM honoured within the grace
  EXPECT_EQ(Classify(*obs, StopIntent::kCancel).kind, ExitKind::kCancelled);
  // Logs survive the stop; read them before removal.
  absl::StatusOr<std::string> logs = rt_->LogsTail(job, 4096);
  ASSERT_TRUE(logs.ok()) << logs.status();
  EXPECT_EQ(*logs, "started-work\n");
  ASSERT_TRUE(rt_->Remove(job).ok());
  EXPECT_EQ(rt_->Inspect(job).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rt_->LogsTail(job, 10).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rt_->Remove(job).code(), absl::StatusCode::kNotFound);
  // Gone after Berth's own cancel: still CANCELLED; gone unasked: LOST.
  EXPECT_EQ(ClassifyExit(std::nullopt, StopIntent::kCancel)->kind,
            ExitKind::kCancelled);
  EXPECT_EQ(ClassifyExit(std::nullopt, StopIntent::kNone)->kind, ExitKind::kLost);
}

TEST_F(DockerRuntimeTest, LogsTailIsBoundedAndDemultiplexed) {
  const std::string job = Job("logs");
  RunToEnd(TestSpec(job, {"sh", "-c",
                          "i=1; while [ $i -le 2000 ]; do echo line-$i; "
                          "echo err-$i >&2; i=$((i+1)); done"}));
  absl::StatusOr<std::string> logs = rt_->LogsTail(job, 100);
  ASSERT_TRUE(logs.ok()) << logs.status();
  EXPECT_LE(logs->size(), 100u);
  EXPECT_GE(logs->size(), 90u);
  // stdout and stderr are copied separately by the engine, so either may
  // come last.
  EXPECT_TRUE(absl::EndsWith(*logs, "line-2000\n") ||
              absl::EndsWith(*logs, "err-2000\n"))
      << *logs;
  // No stream header bytes (\x01/\x02 followed by zeros) in the text.
  for (char c : *logs) {
    EXPECT_TRUE(c == '\n' || (c >= ' ' && c <= '~')) << static_cast<int>(c);
  }
}

}  // namespace
}  // namespace berth
