// EngineClient: backoff, retries and counters (table-driven), against the
// host's dockerd through the fault proxy (testing/docker_proxy.h), and the
// shared option checks.
#include "executor/runtime/docker/engine_client.h"

#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "executor/runtime/docker/testing/docker_proxy.h"
#include "gtest/gtest.h"
#include "planner/base/simulated_clock.h"

namespace berth {
namespace {

using testing::DockerProxy;

EngineRuntimeOptions Options(SimulatedClock* clock) {
  EngineRuntimeOptions o;
  o.instance = "engine-client-test";
  o.backoff_jitter = 0;  // exact sleeps
  o.clock = clock;
  return o;
}

std::unique_ptr<EngineClient> MustCreate(const EngineRuntimeOptions& o) {
  absl::StatusOr<std::unique_ptr<EngineClient>> c = EngineClient::Create(o);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *std::move(c) : nullptr;
}

TEST(EngineClientTest, BackoffDoublesUpToTheCap) {
  SimulatedClock clock;
  EngineRuntimeOptions o = Options(&clock);
  o.backoff_initial = absl::Milliseconds(100);
  o.backoff_max = absl::Milliseconds(500);
  std::unique_ptr<EngineClient> c = MustCreate(o);
  ASSERT_NE(c, nullptr);
  const struct {
    int retry;
    absl::Duration want;
  } kCases[] = {
      {1, absl::Milliseconds(100)}, {2, absl::Milliseconds(200)},
      {3, absl::Milliseconds(400)}, {4, absl::Milliseconds(500)},
      {30, absl::Milliseconds(500)},
  };
  for (const auto& tc : kCases) {
    EXPECT_EQ(c->Backoff(tc.retry), tc.want) << "retry " << tc.retry;
  }
  // Another initial/max (the events stream's).
  EXPECT_EQ(c->Backoff(3, absl::Seconds(1), absl::Seconds(3)), absl::Seconds(3));
  EXPECT_EQ(c->Backoff(2, absl::Seconds(1), absl::Seconds(3)), absl::Seconds(2));
}

TEST(EngineClientTest, BackoffJitterStaysInBounds) {
  SimulatedClock clock;
  EngineRuntimeOptions o = Options(&clock);
  o.backoff_jitter = 0.2;
  std::unique_ptr<EngineClient> c = MustCreate(o);
  ASSERT_NE(c, nullptr);
  for (int i = 0; i < 200; ++i) {
    const absl::Duration d = c->Backoff(2);  // 200ms nominal
    EXPECT_GE(d, absl::Milliseconds(160));
    EXPECT_LE(d, absl::Milliseconds(240));
  }
}

class EngineClientProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto proxy = DockerProxy::Start(absl::StrCat("/tmp/berth-ec-", getpid(), ".sock"));
    ASSERT_TRUE(proxy.ok()) << proxy.status();
    proxy_ = *std::move(proxy);
  }
  EngineRuntimeOptions ProxyOptions() {
    EngineRuntimeOptions o = Options(&clock_);
    o.endpoint.url = proxy_->url();
    return o;
  }

  SimulatedClock clock_;
  std::unique_ptr<DockerProxy> proxy_;
};

TEST_F(EngineClientProxyTest, CallRetriesCountsAndBacksOff) {
  const struct {
    const char* name;
    bool idempotent;
    int max_attempts;
    int faults;  // 500 answers before the engine's own (-1: all)
    absl::StatusCode want;
    int64_t calls;
    int64_t errors;
    absl::Duration slept;
  } kCases[] = {
      {"clean", true, 4, 0, absl::StatusCode::kOk, 1, 0, absl::ZeroDuration()},
      {"two faults", true, 4, 2, absl::StatusCode::kOk, 3, 2, absl::Milliseconds(300)},
      {"always 500", true, 4, -1, absl::StatusCode::kInternal, 4, 4,
       absl::Milliseconds(700)},
      {"not idempotent", false, 4, 1, absl::StatusCode::kInternal, 1, 1,
       absl::ZeroDuration()},
      {"one attempt", true, 1, 1, absl::StatusCode::kInternal, 1, 1,
       absl::ZeroDuration()},
  };
  for (const auto& tc : kCases) {
    SCOPED_TRACE(tc.name);
    proxy_->ClearFaults();
    if (tc.faults != 0) {
      DockerProxy::Fault f;
      f.path_contains = "/_ping";
      f.times = tc.faults;
      proxy_->AddFault(f);
    }
    EngineRuntimeOptions o = ProxyOptions();
    o.max_attempts = tc.max_attempts;
    std::unique_ptr<EngineClient> c = MustCreate(o);
    ASSERT_NE(c, nullptr);
    HttpRequest req;
    req.path = "/_ping";
    const absl::Time start = clock_.Now();
    absl::StatusOr<HttpResponse> resp = c->Call("ping", req, tc.idempotent, "test ping");
    EXPECT_EQ(resp.status().code(), tc.want) << resp.status();
    if (resp.ok()) {
      EXPECT_EQ(resp->status, 200);
    } else {
      EXPECT_TRUE(absl::StartsWith(resp.status().message(), "test ping")) << resp.status();
    }
    EXPECT_EQ(c->Counters()["ping"].calls, tc.calls);
    EXPECT_EQ(c->Counters()["ping"].errors, tc.errors);
    EXPECT_EQ(clock_.Now() - start, tc.slept);
  }
}

TEST_F(EngineClientProxyTest, ClientErrorsAreAnswersNotRetried) {
  std::unique_ptr<EngineClient> c = MustCreate(ProxyOptions());
  ASSERT_NE(c, nullptr);
  HttpRequest req;
  req.path = "/containers/berth-engine-client-test-no-such/json";
  absl::StatusOr<HttpResponse> resp = c->Call("inspect", req, true, "inspect");
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->status, 404);
  EXPECT_EQ(c->Counters()["inspect"].calls, 1);
  EXPECT_EQ(c->Counters()["inspect"].errors, 1);
}

TEST_F(EngineClientProxyTest, TimeoutIsPerAttempt) {
  DockerProxy::Fault f;
  f.path_contains = "/_ping";
  f.kind = DockerProxy::FaultKind::kDelay;
  f.delay = absl::Seconds(3);
  proxy_->AddFault(f);
  std::unique_ptr<EngineClient> c = MustCreate(ProxyOptions());
  ASSERT_NE(c, nullptr);
  HttpRequest req;
  req.path = "/_ping";
  absl::StatusOr<HttpResponse> resp =
      c->Call("ping", req, false, "slow ping", absl::Milliseconds(300));
  EXPECT_EQ(resp.status().code(), absl::StatusCode::kDeadlineExceeded) << resp.status();
  EXPECT_EQ(c->Counters()["ping"].errors, 1);
}

TEST_F(EngineClientProxyTest, LogsTailRetriesThenMapsErrors) {
  const struct {
    const char* name;
    int faults;
    int64_t calls;
  } kCases[] = {{"no fault", 0, 1}, {"one 500", 1, 2}};
  for (const auto& tc : kCases) {
    SCOPED_TRACE(tc.name);
    proxy_->ClearFaults();
    if (tc.faults != 0) {
      DockerProxy::Fault f;
      f.path_contains = "/logs";
      f.times = tc.faults;
      proxy_->AddFault(f);
    }
    std::unique_ptr<EngineClient> c = MustCreate(ProxyOptions());
    ASSERT_NE(c, nullptr);
    absl::StatusOr<std::string> logs = c->LogsTail(
        "/containers/berth-engine-client-test-no-such/logs", 1024, "logs of x");
    EXPECT_EQ(logs.status().code(), absl::StatusCode::kNotFound) << logs.status();
    EXPECT_TRUE(absl::StartsWith(logs.status().message(), "logs of x")) << logs.status();
    EXPECT_EQ(c->Counters()["logs"].calls, tc.calls);
    EXPECT_EQ(c->Counters()["logs"].errors, tc.calls);
  }
}

TEST(EngineClientTest, UnreachableEngineIsUnavailableAfterEveryAttempt) {
  SimulatedClock clock;
  EngineRuntimeOptions o = Options(&clock);
  o.endpoint.url = absl::StrCat("unix:///tmp/berth-ec-nothing-", getpid(), ".sock");
  o.max_attempts = 3;
  std::unique_ptr<EngineClient> c = MustCreate(o);
  ASSERT_NE(c, nullptr);
  HttpRequest req;
  req.path = "/info";
  absl::StatusOr<HttpResponse> resp = c->Call("info", req, true, "docker info");
  EXPECT_EQ(resp.status().code(), absl::StatusCode::kUnavailable) << resp.status();
  EXPECT_TRUE(absl::StartsWith(resp.status().message(), "docker info: "));
  EXPECT_EQ(c->Counters()["info"].calls, 3);
  EXPECT_EQ(c->Counters()["info"].errors, 3);
}

TEST(EngineClientTest, BadUrlIsRefused) {
  SimulatedClock clock;
  EngineRuntimeOptions o = Options(&clock);
  o.endpoint.url = "ftp://engine";
  EXPECT_EQ(EngineClient::Create(o).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ValidateEngineRuntimeOptionsTest, Table) {
  SimulatedClock clock;
  const struct {
    const char* name;
    void (*mutate)(EngineRuntimeOptions&);
    bool more_ok;
    const char* want_substr;  // nullptr: OK
  } kCases[] = {
      {"defaults", [](EngineRuntimeOptions&) {}, true, nullptr},
      {"no instance", [](EngineRuntimeOptions& o) { o.instance = ""; }, true,
       "x runtime: instance ''"},
      {"bad instance", [](EngineRuntimeOptions& o) { o.instance = "a/b"; }, true,
       "must be 1-128 chars"},
      {"root", [](EngineRuntimeOptions& o) { o.user = "0:0"; }, true, "x runtime: "},
      {"pids", [](EngineRuntimeOptions& o) { o.pids_limit = 0; }, true,
       "x runtime: pids_limit, max_attempts, log_max_files, extra and call_timeout "
       "must be positive"},
      {"attempts", [](EngineRuntimeOptions& o) { o.max_attempts = 0; }, true,
       "must be positive"},
      {"log files", [](EngineRuntimeOptions& o) { o.log_max_files = 0; }, true,
       "must be positive"},
      {"log driver", [](EngineRuntimeOptions& o) { o.log_driver = "syslog"; }, true,
       "x runtime: log_driver 'syslog' must be \"local\" or \"json-file\""},
      {"timeout", [](EngineRuntimeOptions& o) { o.call_timeout = absl::ZeroDuration(); },
       true, "must be positive"},
      {"runtime's own", [](EngineRuntimeOptions&) {}, false, "extra and call_timeout"},
      {"clock", [](EngineRuntimeOptions& o) { o.clock = nullptr; }, true,
       "x runtime: clock is null"},
  };
  for (const auto& tc : kCases) {
    SCOPED_TRACE(tc.name);
    EngineRuntimeOptions o = Options(&clock);
    tc.mutate(o);
    absl::Status s = ValidateEngineRuntimeOptions(o, "x runtime", tc.more_ok, "extra");
    if (tc.want_substr == nullptr) {
      EXPECT_TRUE(s.ok()) << s;
    } else {
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
      EXPECT_TRUE(absl::StrContains(s.message(), tc.want_substr)) << s;
    }
  }
  // The user is rewritten to its canonical form.
  EngineRuntimeOptions o = Options(&clock);
  o.user = "1000:1000";
  ASSERT_TRUE(ValidateEngineRuntimeOptions(o, "x runtime").ok());
  EXPECT_EQ(o.user, "1000:1000");
}

}  // namespace
}  // namespace berth
