#include "server/daemon/runtime_health.h"

#include <atomic>

#include "absl/synchronization/notification.h"
#include "executor/runtime/fake_runtime.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

// A runtime whose Ping hangs while `hang` is set, like a paused dockerd
// (accepts the connection, never answers), or fails while `down` is set.
class HangingRuntime final : public Runtime {
 public:
  absl::StatusOr<StartResult> Start(const ContainerSpec& s) override { return base_.Start(s); }
  absl::StatusOr<ContainerList> List() override { return base_.List(); }
  absl::StatusOr<ContainerObservation> Inspect(absl::string_view j) override {
    return base_.Inspect(j);
  }
  absl::Status Stop(absl::string_view j, absl::Duration g) override { return base_.Stop(j, g); }
  absl::StatusOr<std::string> LogsTail(absl::string_view j, size_t n) override {
    return base_.LogsTail(j, n);
  }
  absl::Status Remove(absl::string_view j) override { return base_.Remove(j); }
  absl::StatusOr<HostInfo> GetHostInfo() override { return base_.GetHostInfo(); }
  std::unique_ptr<EventSubscription> SubscribeEvents(
      std::function<void(const RuntimeEvent&)> cb) override {
    return base_.SubscribeEvents(std::move(cb));
  }
  CallCounters Counters() const override { return base_.Counters(); }
  absl::Status Ping() override {
    absl::MutexLock lock(&mu_);
    auto released = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !hang_; };
    mu_.Await(absl::Condition(&released));
    if (down_) return absl::UnavailableError("connection refused");
    return absl::OkStatus();
  }
  void SetHang(bool hang) {
    absl::MutexLock lock(&mu_);
    hang_ = hang;
  }
  void SetDown(bool down) {
    absl::MutexLock lock(&mu_);
    down_ = down;
  }

 private:
  FakeRuntime base_;
  absl::Mutex mu_;
  bool hang_ ABSL_GUARDED_BY(mu_) = false;
  bool down_ ABSL_GUARDED_BY(mu_) = false;
};

// Verdicts as reported, in order.
class Reports {
 public:
  void Add(bool healthy) {
    absl::MutexLock lock(&mu_);
    last_ = healthy;
    ++count_;
  }
  // Waits until the last verdict is `want`; false after `limit` (a bound for
  // the assertion, not a synchronisation sleep: it returns at the report).
  bool AwaitVerdict(bool want, absl::Duration limit) {
    absl::MutexLock lock(&mu_);
    auto reached = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return count_ > 0 && last_ == want;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), limit);
  }

 private:
  absl::Mutex mu_;
  bool last_ ABSL_GUARDED_BY(mu_) = false;
  int count_ ABSL_GUARDED_BY(mu_) = 0;
};

TEST(RuntimeHealthProbeTest, AHungEngineIsUnhealthyWithinTheDeadline) {
  HangingRuntime runtime;
  Reports reports;
  RuntimeHealthOptions o;
  o.interval = absl::Milliseconds(200);
  o.deadline = absl::Milliseconds(400);
  RuntimeHealthProbe probe(runtime, o, [&](bool h) { reports.Add(h); });
  ASSERT_TRUE(reports.AwaitVerdict(true, absl::Seconds(10)));
  EXPECT_TRUE(probe.healthy());

  // The engine stops answering (the ping never returns).
  const absl::Time hung_at = absl::Now();
  runtime.SetHang(true);
  ASSERT_TRUE(reports.AwaitVerdict(false, absl::Seconds(10)));
  // At most one interval until the next ping is sent, then the deadline,
  // then one watch period (plus scheduling slack on a busy 2-core host).
  EXPECT_LT(absl::Now() - hung_at, o.interval + o.deadline + absl::Seconds(1));
  EXPECT_FALSE(probe.healthy());

  runtime.SetHang(false);
  ASSERT_TRUE(reports.AwaitVerdict(true, absl::Seconds(10)));

  // A refused connection too.
  runtime.SetDown(true);
  ASSERT_TRUE(reports.AwaitVerdict(false, absl::Seconds(10)));
  runtime.SetDown(false);
  ASSERT_TRUE(reports.AwaitVerdict(true, absl::Seconds(10)));
}

}  // namespace
}  // namespace berth
