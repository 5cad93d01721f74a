// WatchEvents streams hold no berthd thread while they wait (callback API):
// 200 idle streams leave berthd's thread count (/proc/<pid>/status Threads)
// bounded, and new events still reach every stream, contiguous.
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "berth/v1/executor.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/berthd_process.h"

namespace berth {
namespace {

constexpr int kStreams = 200;

int ThreadsOf(pid_t pid) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (absl::StartsWith(line, "Threads:")) {
      int n = 0;
      if (absl::SimpleAtoi(absl::StripAsciiWhitespace(line.substr(8)), &n)) return n;
    }
  }
  return -1;
}

// The value of an unlabelled gauge in a /metrics page; -1 if absent.
double Gauge(const std::string& page, const std::string& name) {
  for (absl::string_view line : absl::StrSplit(page, '\n')) {
    if (absl::StartsWith(line, name + " ")) {
      double v = 0;
      if (absl::SimpleAtod(line.substr(name.size() + 1), &v)) return v;
    }
  }
  return -1;
}

TEST(BerthdWatchTest, IdleStreamsHoldNoThreadsAndAllGetEvents) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> started = BerthdProcess::Start({});
  ASSERT_TRUE(started.ok()) << started.status();
  BerthdProcess& b = **started;
  std::unique_ptr<BerthClient> op = b.Client(Role::kOperator);
  // Settle: the first reconcile passes have run.
  absl::StatusOr<v1::Budgets> budgets = op->GetBudgets();
  ASSERT_TRUE(budgets.ok()) << budgets.status();
  const int baseline = ThreadsOf(b.pid());
  ASSERT_GT(baseline, 0);

  absl::StatusOr<v1::Plan> plan = op->GetPlan();
  ASSERT_TRUE(plan.ok()) << plan.status();
  // A control event marks the start; every stream reads from it on.
  absl::StatusOr<v1::ControlState> paused = op->Pause("watch test: start");
  ASSERT_TRUE(paused.ok()) << paused.status();

  auto channel = grpc::CreateChannel(b.target(), grpc::InsecureChannelCredentials());
  auto stub = v1::Executor::NewStub(channel);
  absl::Mutex mu;
  std::vector<std::vector<uint64_t>> seen(kStreams);
  uint64_t stop_at = 0;  // guarded by mu; 0 = not yet known
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::thread> readers;
  for (int i = 0; i < kStreams; ++i) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->AddMetadata("authorization", absl::StrCat("Bearer ", TokenFor(Role::kPusher)));
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
    grpc::ClientContext* c = ctx.get();
    contexts.push_back(std::move(ctx));
    readers.emplace_back([&, c, i] {
      v1::WatchEventsRequest request;
      request.set_from_revision(0);
      auto reader = stub->WatchEvents(c, request);
      v1::Event e;
      while (reader->Read(&e)) {
        absl::MutexLock lock(&mu);
        seen[i].push_back(e.revision());
        if (stop_at != 0 && e.revision() >= stop_at) break;
      }
      c->TryCancel();
      reader->Finish().IgnoreError();
    });
  }
  // Await every stream open (the gauge) and idle (each has read the
  // retained history, up to the Pause).
  absl::Time deadline = absl::Now() + absl::Seconds(60);
  double open = 0;
  while (absl::Now() < deadline) {
    absl::StatusOr<std::string> m = b.Metrics();
    if (m.ok()) open = Gauge(*m, "berth_watch_streams");
    if (open == kStreams) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_EQ(open, kStreams);
  {
    // Idle: every stream has read the history up to the same revision.
    auto caught_up = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu) {
      for (const auto& v : seen) {
        if (v.empty() || v.back() != seen[0].back()) return false;
      }
      return true;
    };
    absl::MutexLock lock(&mu);
    ASSERT_TRUE(mu.AwaitWithTimeout(absl::Condition(&caught_up), absl::Seconds(60)));
  }
  const int with_streams = ThreadsOf(b.pid());
  std::cerr << "berthd threads: " << baseline << " before, " << with_streams << " with "
            << kStreams << " idle WatchEvents streams\n";
  // One thread per stream would be baseline + 200.
  EXPECT_LE(with_streams, baseline + 16);

  // New events reach every stream: Resume and Pause write two events.
  {
    absl::MutexLock lock(&mu);
    stop_at = seen[0].back() + 2;
  }
  absl::StatusOr<v1::ControlState> resumed = op->Resume();
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  absl::StatusOr<v1::ControlState> again = op->Pause("watch test: end");
  ASSERT_TRUE(again.ok()) << again.status();
  for (std::thread& t : readers) t.join();
  absl::MutexLock lock(&mu);
  for (int i = 0; i < kStreams; ++i) {
    SCOPED_TRACE(i);
    ASSERT_FALSE(seen[i].empty());
    EXPECT_EQ(seen[i].back(), stop_at);
    for (size_t k = 1; k < seen[i].size(); ++k) {
      ASSERT_EQ(seen[i][k], seen[i][k - 1] + 1) << "gap";
    }
  }
}

}  // namespace
}  // namespace berth
