// QueueHeadWatch on the real planner's plans: a legitimate wait (for CPU,
// for a dependency, while paused) is never "blocked", however long; a head
// the plan admits that stays queued is blocked since the first such plan.
#include "executor/reconcile/queue_head.h"

#include "gtest/gtest.h"
#include "planner/plan/plan.h"

namespace berth {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'800'000'000);

planner::QueuedJob Queued(const std::string& id, int64_t cpu_millis) {
  planner::QueuedJob q;
  q.id = id;
  q.workspace = "ws";
  q.resources = {cpu_millis, int64_t{64} << 20};
  q.expected_duration = absl::Minutes(30);
  return q;
}

planner::RunningJob Running(const std::string& id, int64_t cpu_millis) {
  planner::RunningJob r;
  r.id = id;
  r.workspace = "ws";
  r.resources = {cpu_millis, int64_t{64} << 20};
  r.started_at = kT0 - absl::Minutes(5);
  r.expected_duration = absl::Minutes(30);
  return r;
}

// One and a half cores, plenty of memory and slots.
planner::Budgets Budgets() {
  planner::Budgets b;
  b.cpu_millis = 1500;
  b.memory_bytes = int64_t{8} << 30;
  b.max_workers = 10;
  return b;
}

// Plans `state` at kT0 + each of `at` and returns how long the head has been
// blocked at the last one.
absl::Duration BlockedAfterPlansAt(const planner::State& state,
                                   std::initializer_list<absl::Duration> at) {
  QueueHeadWatch watch;
  absl::Time last = kT0;
  for (absl::Duration d : at) {
    last = kT0 + d;
    watch.Observe(state, planner::Plan(state, Budgets(), planner::Policy(), last));
  }
  return watch.BlockedFor(last);
}

TEST(QueueHeadTest, ACpuWaitIsNeverBlocked) {
  // 1 of 1.5 cores used, the head needs 0.7: it waits for CPU, rightly.
  planner::State state;
  state.running = {Running("r", 1000)};
  state.queued = {Queued("head", 700)};
  const planner::PlanResult plan = planner::Plan(state, Budgets(), planner::Policy(), kT0);
  ASSERT_EQ(plan.decisions[0].reason, planner::Reason::kWaitingForCpu);
  EXPECT_FALSE(HeadIsBlocked(plan.decisions[0]));
  EXPECT_EQ(BlockedAfterPlansAt(state, {absl::ZeroDuration(), absl::Minutes(20),
                                        absl::Hours(3)}),
            absl::ZeroDuration());
}

TEST(QueueHeadTest, ADependencyWaitAndAPauseAreNeverBlocked) {
  planner::State state;
  state.running = {Running("parent", 200)};
  planner::QueuedJob child = Queued("child", 100);
  child.depends_on = {"parent"};
  state.queued = {child};
  const planner::PlanResult plan = planner::Plan(state, Budgets(), planner::Policy(), kT0);
  ASSERT_EQ(plan.decisions[0].reason, planner::Reason::kWaitingForDependencies);
  EXPECT_EQ(BlockedAfterPlansAt(state, {absl::ZeroDuration(), absl::Hours(1)}),
            absl::ZeroDuration());

  planner::State paused;
  paused.queued = {Queued("head", 100)};
  paused.paused = true;
  EXPECT_EQ(BlockedAfterPlansAt(paused, {absl::ZeroDuration(), absl::Hours(1)}),
            absl::ZeroDuration());
}

TEST(QueueHeadTest, AnAdmissionThatNeverTakesEffectIsBlockedSinceTheFirstPlan) {
  // 1.4 of 1.5 cores used and the head needs 0.1: it fits, the plan admits
  // it, and plan after plan it is still queued.
  planner::State state;
  state.running = {Running("r", 1400)};
  state.queued = {Queued("head", 100), Queued("next", 700)};
  const planner::PlanResult plan = planner::Plan(state, Budgets(), planner::Policy(), kT0);
  ASSERT_EQ(plan.decisions[0].verdict, planner::Verdict::kAdmit);
  EXPECT_EQ(BlockedAfterPlansAt(state, {absl::ZeroDuration(), absl::Minutes(4),
                                        absl::Minutes(10)}),
            absl::Minutes(10));

  // Once it is admitted, the next head waits for CPU: not blocked.
  QueueHeadWatch watch;
  watch.Observe(state, planner::Plan(state, Budgets(), planner::Policy(), kT0));
  EXPECT_EQ(watch.BlockedFor(kT0 + absl::Seconds(3)), absl::Seconds(3));
  planner::State moved;
  moved.running = {Running("r", 1400), Running("head", 100)};
  moved.queued = {Queued("next", 700)};
  watch.Observe(moved, planner::Plan(moved, Budgets(), planner::Policy(),
                                     kT0 + absl::Seconds(5)));
  EXPECT_EQ(watch.BlockedFor(kT0 + absl::Minutes(30)), absl::ZeroDuration());
  // A plan older than the last one observed changes nothing.
  watch.Observe(state, planner::Plan(state, Budgets(), planner::Policy(), kT0));
  EXPECT_EQ(watch.BlockedFor(kT0 + absl::Minutes(30)), absl::ZeroDuration());
}

TEST(QueueHeadTest, ABindingDimensionWithRoomIsBlocked) {
  planner::Decision d;
  d.verdict = planner::Verdict::kWait;
  d.reason = planner::Reason::kWaitingForMemory;
  d.needed = 100;
  d.free = 50;
  EXPECT_FALSE(HeadIsBlocked(d));
  d.free = 100;
  EXPECT_TRUE(HeadIsBlocked(d));
  d.reason = planner::Reason::kWaitingForPriority;
  EXPECT_FALSE(HeadIsBlocked(d));
}

TEST(QueueHeadTest, AnEmptyQueueIsNotBlocked) {
  planner::State state;
  EXPECT_EQ(BlockedAfterPlansAt(state, {absl::ZeroDuration(), absl::Hours(1)}),
            absl::ZeroDuration());
}

}  // namespace
}  // namespace berth
