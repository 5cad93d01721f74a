#include "executor/runtime/runtime.h"

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace berth {
namespace {

ContainerObservation Lost(int code) {
  ContainerObservation o;
  o.job_id = "j";
  o.state = ContainerState::kDead;
  o.exit_code = code;
  o.lost = true;
  return o;
}

ContainerObservation StartFailed() {
  ContainerObservation o;
  o.job_id = "j";
  o.state = ContainerState::kDead;
  o.start_failed = true;
  return o;
}

ContainerObservation Obs(ContainerState state, int code, bool oom) {
  ContainerObservation o;
  o.job_id = "j";
  o.container_id = "c";
  o.state = state;
  o.exit_code = code;
  o.oom_killed = oom;
  return o;
}

struct ClassifyCase {
  std::string name;
  std::optional<ContainerObservation> obs;
  StopIntent intent;
  std::optional<ExitOutcome> want;
};

TEST(ClassifyExitTest, Table) {
  using S = ContainerState;
  using K = ExitKind;
  const std::vector<ClassifyCase> cases = {
      {"exit0", Obs(S::kExited, 0, false), StopIntent::kNone,
       ExitOutcome{K::kSucceeded, 0}},
      {"exit3", Obs(S::kExited, 3, false), StopIntent::kNone,
       ExitOutcome{K::kNonzeroExit, 3}},
      {"137 without intent or OOM is just a nonzero exit",
       Obs(S::kExited, 137, false), StopIntent::kNone,
       ExitOutcome{K::kNonzeroExit, 137}},
      {"oom", Obs(S::kExited, 137, true), StopIntent::kNone,
       ExitOutcome{K::kOomKilled, 137}},
      {"oom wins over timeout", Obs(S::kExited, 137, true), StopIntent::kTimeout,
       ExitOutcome{K::kOomKilled, 137}},
      {"timeout SIGKILL", Obs(S::kExited, 137, false), StopIntent::kTimeout,
       ExitOutcome{K::kTimedOut, 137}},
      {"timeout SIGTERM", Obs(S::kExited, 143, false), StopIntent::kTimeout,
       ExitOutcome{K::kTimedOut, 143}},
      {"cancel", Obs(S::kExited, 143, false), StopIntent::kCancel,
       ExitOutcome{K::kCancelled, 143}},
      {"cancel wins over a clean exit", Obs(S::kExited, 0, false),
       StopIntent::kCancel, ExitOutcome{K::kCancelled, 0}},
      {"requeue", Obs(S::kExited, 137, false), StopIntent::kRequeue,
       ExitOutcome{K::kRequeued, 137}},
      {"dead counts as finished", Obs(S::kDead, 1, false), StopIntent::kNone,
       ExitOutcome{K::kNonzeroExit, 1}},
      {"running: nothing yet", Obs(S::kRunning, 0, false), StopIntent::kNone,
       std::nullopt},
      {"running with intent: nothing yet", Obs(S::kRunning, 0, false),
       StopIntent::kCancel, std::nullopt},
      {"created: nothing yet", Obs(S::kCreated, 0, false), StopIntent::kNone,
       std::nullopt},
      {"removing: nothing yet", Obs(S::kRemoving, 0, false), StopIntent::kNone,
       std::nullopt},
      {"vanished", std::nullopt, StopIntent::kNone, ExitOutcome{K::kLost, 0}},
      {"lost by the engine (node down): requeued", Lost(0), StopIntent::kNone,
       ExitOutcome{K::kRequeued, 0}},
      {"lost with a stale exit code: still requeued", Lost(143),
       StopIntent::kNone, ExitOutcome{K::kRequeued, 0}},
      {"lost after cancel: cancelled", Lost(0), StopIntent::kCancel,
       ExitOutcome{K::kCancelled, 0}},
      {"engine refused to start it", StartFailed(), StopIntent::kNone,
       ExitOutcome{K::kStartFailed, 0}},
      {"vanished after cancel", std::nullopt, StopIntent::kCancel,
       ExitOutcome{K::kCancelled, 0}},
      {"vanished after timeout", std::nullopt, StopIntent::kTimeout,
       ExitOutcome{K::kTimedOut, 0}},
      {"vanished after requeue", std::nullopt, StopIntent::kRequeue,
       ExitOutcome{K::kRequeued, 0}},
  };
  for (const ClassifyCase& c : cases) {
    SCOPED_TRACE(c.name);
    const std::optional<ExitOutcome> got = ClassifyExit(c.obs, c.intent);
    ASSERT_EQ(got.has_value(), c.want.has_value());
    if (got.has_value()) {
      EXPECT_EQ(ExitKindName(got->kind), ExitKindName(c.want->kind));
      EXPECT_EQ(got->exit_code, c.want->exit_code);
    }
  }
}

TEST(ClassifyStartErrorTest, PermanentVersusTransient) {
  struct Case {
    absl::Status status;
    std::optional<ExitKind> want;
  };
  const std::vector<Case> cases = {
      {absl::NotFoundError("image 'x' missing"), ExitKind::kStartFailed},
      {absl::PermissionDeniedError("not allowed"), ExitKind::kStartFailed},
      {absl::InvalidArgumentError("bad"), ExitKind::kStartFailed},
      {absl::FailedPreconditionError("no dir"), ExitKind::kStartFailed},
      {absl::AlreadyExistsError("other instance"), ExitKind::kStartFailed},
      {absl::UnavailableError("docker down"), std::nullopt},
      {absl::DeadlineExceededError("slow"), std::nullopt},
      {absl::InternalError("500"), std::nullopt},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.status.ToString());
    EXPECT_EQ(ClassifyStartError(c.status), c.want);
  }
}

TEST(NodeInfoTest, AcceptsJobsOnlyWhenReadyAndActive) {
  NodeInfo n;
  n.state = NodeState::kReady;
  EXPECT_TRUE(AcceptsJobs(n));
  n.availability = NodeAvailability::kDrain;
  EXPECT_FALSE(AcceptsJobs(n));
  n.availability = NodeAvailability::kPause;
  EXPECT_FALSE(AcceptsJobs(n));
  n.availability = NodeAvailability::kActive;
  n.state = NodeState::kDown;
  EXPECT_FALSE(AcceptsJobs(n));
  EXPECT_EQ(NodeStateName(NodeState::kDown), "down");
  EXPECT_EQ(NodeAvailabilityName(NodeAvailability::kDrain), "drain");
}

TEST(ContainerStateTest, ParseRoundTrip) {
  for (ContainerState s :
       {ContainerState::kCreated, ContainerState::kRunning,
        ContainerState::kPaused, ContainerState::kRestarting,
        ContainerState::kRemoving, ContainerState::kExited,
        ContainerState::kDead}) {
    EXPECT_EQ(ParseContainerState(ContainerStateName(s)), s);
  }
  EXPECT_EQ(ParseContainerState("weird"), ContainerState::kUnknown);
  EXPECT_TRUE(IsFinished(ContainerState::kExited));
  EXPECT_TRUE(IsFinished(ContainerState::kDead));
  EXPECT_FALSE(IsFinished(ContainerState::kRunning));
}

TEST(DiffContainerListsTest, ReportsOnlyChanges) {
  ContainerList before = {
      {"a", {"a", "ca", ContainerState::kRunning}},
      {"b", {"b", "cb", ContainerState::kRunning}},
      {"c", {"c", "cc", ContainerState::kRunning}},
      {"d", {"d", "cd", ContainerState::kExited}},
  };
  ContainerList after = before;
  ContainerListDiff none = DiffContainerLists(before, after);
  EXPECT_TRUE(none.changed.empty());
  EXPECT_TRUE(none.vanished.empty());

  after["b"].state = ContainerState::kExited;        // state changed
  after["c"].container_id = "cc2";                   // replaced container
  after.erase("d");                                  // vanished
  after["e"] = {"e", "ce", ContainerState::kCreated};  // new
  ContainerListDiff diff = DiffContainerLists(before, after);
  EXPECT_EQ(diff.changed, (std::vector<std::string>{"b", "c", "e"}));
  EXPECT_EQ(diff.vanished, (std::vector<std::string>{"d"}));

  ContainerListDiff from_empty = DiffContainerLists({}, after);
  EXPECT_EQ(from_empty.changed.size(), after.size());
}

TEST(CountersTest, TotalCalls) {
  CallCounters c = {{"list", {2, 1}}, {"create", {3, 0}}};
  EXPECT_EQ(TotalCalls(c), 5);
  EXPECT_EQ(TotalCalls({}), 0);
}

}  // namespace
}  // namespace berth
