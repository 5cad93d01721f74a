#include "executor/runtime/fake_runtime.h"
#include "executor/runtime/faulty_runtime.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace berth {
namespace {

ContainerSpec Spec(const std::string& job, const std::string& image = "img") {
  ContainerSpec s;
  s.job_id = job;
  s.workspace = "ws";
  s.image = image;
  s.cpu_millis = 100;
  s.memory_bytes = 1 << 20;
  return s;
}

TEST(FakeRuntimeTest, LifecycleAndClassification) {
  FakeRuntime rt;
  std::vector<std::string> events;
  auto sub = rt.SubscribeEvents(
      [&](const RuntimeEvent& e) { events.push_back(e.job_id + ":" + e.action); });

  ASSERT_TRUE(rt.Start(Spec("ok")).ok());
  ASSERT_TRUE(rt.Start(Spec("bad")).ok());
  ASSERT_TRUE(rt.Start(Spec("oom")).ok());
  ASSERT_TRUE(rt.Start(Spec("cancel")).ok());
  ASSERT_TRUE(rt.Exit("ok", 0).ok());
  ASSERT_TRUE(rt.Exit("bad", 3).ok());
  ASSERT_TRUE(rt.OomKill("oom").ok());
  rt.AppendLog("cancel", "working\n");
  ASSERT_TRUE(rt.Stop("cancel", absl::Seconds(1)).ok());

  struct Case {
    std::string job;
    StopIntent intent;
    ExitKind want;
  };
  for (const Case& c : std::vector<Case>{{"ok", StopIntent::kNone, ExitKind::kSucceeded},
                                         {"bad", StopIntent::kNone, ExitKind::kNonzeroExit},
                                         {"oom", StopIntent::kNone, ExitKind::kOomKilled},
                                         {"cancel", StopIntent::kCancel, ExitKind::kCancelled}}) {
    SCOPED_TRACE(c.job);
    absl::StatusOr<ContainerObservation> obs = rt.Inspect(c.job);
    ASSERT_TRUE(obs.ok());
    std::optional<ExitOutcome> out = ClassifyExit(*obs, c.intent);
    ASSERT_TRUE(out.has_value());
    EXPECT_EQ(out->kind, c.want);
  }
  EXPECT_EQ(*rt.LogsTail("cancel", 4), "ing\n");
  EXPECT_EQ(rt.Counters().count("list"), 0u);
  EXPECT_EQ(rt.List()->size(), 4u);
  EXPECT_EQ(rt.Counters().at("list").calls, 1);
  ASSERT_TRUE(rt.Remove("ok").ok());
  EXPECT_EQ(rt.Inspect("ok").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rt.Remove("ok").code(), absl::StatusCode::kNotFound);
  EXPECT_NE(std::find(events.begin(), events.end(), "oom:oom"), events.end());
  EXPECT_NE(std::find(events.begin(), events.end(), "ok:die"), events.end());
}

TEST(FakeRuntimeTest, SecondStartAdopts) {
  FakeRuntime rt;
  absl::StatusOr<StartResult> a = rt.Start(Spec("j"));
  absl::StatusOr<StartResult> b = rt.Start(Spec("j"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_FALSE(a->adopted);
  EXPECT_TRUE(b->adopted);
  EXPECT_EQ(a->container_id, b->container_id);
  EXPECT_EQ(rt.creates(), 1);
}

TEST(FakeRuntimeTest, MissingImageIsStartFailed) {
  FakeRuntime rt;
  rt.AddMissingImage("gone:1");
  absl::StatusOr<StartResult> r = rt.Start(Spec("j", "gone:1"));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ClassifyStartError(r.status()), ExitKind::kStartFailed);
}

TEST(FaultyRuntimeTest, InjectedOutageIsTransientAndClears) {
  FakeRuntime fake;
  FaultyRuntime rt(fake);
  rt.Inject("create", absl::UnavailableError("docker down"), 2);
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<StartResult> r = rt.Start(Spec("j"));
    EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_EQ(ClassifyStartError(r.status()), std::nullopt);
  }
  EXPECT_TRUE(rt.Start(Spec("j")).ok());
  rt.Inject("inspect", absl::DeadlineExceededError("slow"));
  EXPECT_EQ(rt.Inspect("j").status().code(), absl::StatusCode::kDeadlineExceeded);
  rt.Clear();
  EXPECT_TRUE(rt.Inspect("j").ok());
  EXPECT_EQ(fake.creates(), 1);
}

}  // namespace
}  // namespace berth
