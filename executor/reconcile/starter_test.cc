#include "executor/reconcile/starter.h"

#include <atomic>
#include <algorithm>
#include <string>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

TEST(StarterTest, AJobIsNeverStartedTwiceAtOnce) {
  Starter starter(2);
  absl::Notification release;
  std::atomic<int> runs{0};
  ASSERT_TRUE(starter.Submit("a", [&] {
    release.WaitForNotification();
    ++runs;
  }));
  EXPECT_FALSE(starter.Submit("a", [&] { ++runs; })) << "a is in flight";
  EXPECT_TRUE(starter.Busy("a", starter.Mark()));
  EXPECT_EQ(starter.in_flight(), 1u);
  release.Notify();
  starter.AwaitIdle();
  EXPECT_EQ(runs.load(), 1);
  // Done: a new start of the same job is accepted (its own outcome decides).
  EXPECT_TRUE(starter.Submit("a", [&] { ++runs; }));
  starter.AwaitIdle();
  EXPECT_EQ(runs.load(), 2);
}

TEST(StarterTest, ParallelismBoundsTheStartsRunningAtOnce) {
  Starter starter(2);
  absl::Mutex mu;
  int running = 0, peak = 0;
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(starter.Submit(std::to_string(i), [&] {
      absl::MutexLock l(&mu);
      peak = std::max(peak, ++running);
      // The first two meet (both threads busy at once); the rest pass.
      auto two = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return peak >= 2; };
      mu.Await(absl::Condition(&two));
      --running;
    }));
  }
  starter.AwaitIdle();
  EXPECT_EQ(peak, 2);
  EXPECT_EQ(starter.in_flight(), 0u);
}

TEST(StarterTest, BusyCoversStartsFinishedAfterTheMark) {
  Starter starter(1);
  std::atomic<int> done{0};
  starter.set_on_done([&] { ++done; });
  const uint64_t before = starter.Mark();
  ASSERT_TRUE(starter.Submit("a", [] {}));
  starter.AwaitIdle();
  EXPECT_EQ(done.load(), 1);
  // A pass that took its container list before a's start finished must
  // leave a alone; a later pass may act on it.
  EXPECT_TRUE(starter.Busy("a", before));
  const uint64_t after = starter.Mark();
  EXPECT_FALSE(starter.Busy("a", after));
  EXPECT_FALSE(starter.Busy("b", before));
  starter.Prune(after);
  EXPECT_FALSE(starter.Busy("a", before)) << "pruned";
}

TEST(StarterTest, DestructionDropsQueuedStartsAndWaitsForRunningOnes) {
  std::atomic<int> runs{0};
  absl::Notification running;
  absl::Notification release;
  {
    Starter starter(1);
    ASSERT_TRUE(starter.Submit("a", [&] {
      running.Notify();
      release.WaitForNotification();
      ++runs;
    }));
    ASSERT_TRUE(starter.Submit("b", [&] { ++runs; }));
    running.WaitForNotification();
    starter.Stop();
    EXPECT_FALSE(starter.Submit("c", [&] { ++runs; }));
    release.Notify();
  }
  EXPECT_EQ(runs.load(), 1) << "a finished, b was dropped";
}

}  // namespace
}  // namespace berth
