// Fault injection: DockerRuntime through DockerProxy (delays, dropped
// connections, 500s) in front of the real dockerd. Checks that timeouts fire,
// retries succeed once the fault clears, retried creates never make a second
// container, and no job is misclassified.
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "executor/runtime/docker/testing/docker_proxy.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using ::berth::testing::DockerProxy;
using ::berth::testing::InstanceCleanup;
using ::berth::testing::TestOptions;
using ::berth::testing::TestSpec;
using ::berth::testing::UniqueName;
using ::berth::testing::WaitFinished;
using ::berth::testing::WaitFor;
using Kind = DockerProxy::FaultKind;

class DockerFaultTest : public ::testing::Test {
 protected:
  DockerFaultTest() : instance_(UniqueName("flt")), cleanup_(instance_) {}

  void SetUp() override {
    // Short path: unix socket paths are limited to 107 bytes.
    auto proxy = DockerProxy::Start(absl::StrCat("/tmp/", instance_, ".sock"));
    ASSERT_TRUE(proxy.ok()) << proxy.status();
    proxy_ = std::move(*proxy);
    rt_ = MakeRuntime(absl::Seconds(10), 4);
    ASSERT_TRUE(rt_->Ping().ok());
  }

  std::unique_ptr<DockerRuntime> MakeRuntime(absl::Duration timeout, int attempts) {
    DockerRuntimeOptions o = TestOptions(instance_);
    o.endpoint.url = proxy_->url();
    o.call_timeout = timeout;
    o.max_attempts = attempts;
    auto rt = DockerRuntime::Create(o);
    EXPECT_TRUE(rt.ok()) << rt.status();
    return rt.ok() ? std::move(*rt) : nullptr;
  }

  std::string Job(const std::string& name) { return instance_ + "-" + name; }

  const std::string instance_;
  InstanceCleanup cleanup_;
  std::unique_ptr<DockerProxy> proxy_;
  std::unique_ptr<DockerRuntime> rt_;
};

TEST_F(DockerFaultTest, SlowEngineHitsTheCallTimeout) {
  auto rt = MakeRuntime(absl::Milliseconds(500), 1);
  proxy_->AddFault({"GET", "/containers/json", Kind::kDelay, absl::Seconds(3), -1});
  const absl::Time t0 = Clock::Real()->Now();
  absl::StatusOr<ContainerList> list = rt->List();
  const absl::Duration took = Clock::Real()->Now() - t0;
  EXPECT_EQ(list.status().code(), absl::StatusCode::kDeadlineExceeded) << list.status();
  EXPECT_LT(took, absl::Seconds(2));
  EXPECT_GE(took, absl::Milliseconds(450));
  EXPECT_EQ(rt->Counters().at("list").errors, 1);
}

TEST_F(DockerFaultTest, PermanentStartRefusalFailsAtOnceTransientIsRetried) {
  // What Docker 20.10 answered for a 5-millicore quota: the same
  // on every retry, so the start fails at once with Docker's reason.
  const std::string refusal =
      "failed to create shim task: OCI runtime create failed: runc create failed: "
      "unable to start container process: error during container init: error setting "
      "cgroup config for procHooks process: failed to write \"500\": write "
      "/sys/fs/cgroup/cpu/docker/x/cpu.cfs_quota_us: invalid argument: unknown";
  DockerProxy::Fault f{"POST", "/start", Kind::kError500, {}, -1};
  f.message = refusal;
  proxy_->AddFault(f);
  absl::StatusOr<StartResult> r = rt_->Start(TestSpec(Job("quota"), {"true"}));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "cpu.cfs_quota_us: invalid argument"))
      << r.status();
  EXPECT_EQ(ClassifyStartError(r.status()), ExitKind::kStartFailed);
  EXPECT_EQ(proxy_->Seen("POST", "/start"), 1);  // not retried
  proxy_->ClearFaults();

  // An unexplained 500 twice: retried, then started.
  proxy_->AddFault({"POST", "/start", Kind::kError500, {}, 2});
  r = rt_->Start(TestSpec(Job("flaky"), {"true"}));
  EXPECT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(proxy_->Seen("POST", "/start"), 1 + 3);
}

TEST_F(DockerFaultTest, RetriesSucceedWhenTheFaultClears) {
  proxy_->AddFault({"GET", "/containers/json", Kind::kError500, {}, 2});
  absl::StatusOr<ContainerList> list = rt_->List();
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(rt_->Counters().at("list").calls, 3);
  EXPECT_EQ(rt_->Counters().at("list").errors, 2);

  // A slow answer once: the first attempt times out, the retry succeeds.
  auto rt = MakeRuntime(absl::Milliseconds(500), 3);
  proxy_->AddFault({"GET", "/containers/json", Kind::kDelay, absl::Seconds(2), 1});
  list = rt->List();
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(rt->Counters().at("list").calls, 2);

  // A dropped connection once: retried.
  proxy_->AddFault({"GET", "/info", Kind::kDropBeforeForward, {}, 1});
  EXPECT_TRUE(rt->GetHostInfo().ok());
  // Ping is a health probe: tried once, so a dropped connection shows.
  proxy_->AddFault({"GET", "/_ping", Kind::kDropBeforeForward, {}, 1});
  EXPECT_EQ(rt->Ping().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(rt->Ping().ok());

  // A persistent 500 exhausts the attempts: INTERNAL, never NOT_FOUND.
  proxy_->AddFault({"GET", "/containers/json", Kind::kError500, {}, -1});
  list = rt_->List();
  EXPECT_EQ(list.status().code(), absl::StatusCode::kInternal) << list.status();
  EXPECT_TRUE(absl::StrContains(list.status().message(), "injected fault"));
}

TEST_F(DockerFaultTest, LostCreateAnswerDoesNotMakeASecondContainer) {
  const std::string job = Job("lostcreate");
  // dockerd creates the container but the answer never arrives.
  proxy_->AddFault({"POST", "/containers/create", Kind::kDropAfterForward, {}, 1});
  absl::StatusOr<StartResult> r = rt_->Start(TestSpec(job, {"sh", "-c", "echo ran"}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->adopted);  // the retry hit 409 and adopted the first one
  EXPECT_EQ(proxy_->Seen("POST", "/containers/create"), 2);
  absl::StatusOr<ContainerList> list = rt_->List();
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->size(), 1u);
  absl::StatusOr<ContainerObservation> obs = WaitFinished(*rt_, job, absl::Seconds(60));
  ASSERT_TRUE(obs.ok()) << obs.status();
  EXPECT_EQ(ClassifyExit(*obs, StopIntent::kNone)->kind, ExitKind::kSucceeded);
  EXPECT_EQ(*rt_->LogsTail(job, 100), "ran\n");
}

TEST_F(DockerFaultTest, CreateRefusedThenAcceptedMakesOneContainer) {
  const std::string job = Job("create500");
  proxy_->AddFault({"POST", "/containers/create", Kind::kError500, {}, 1});
  proxy_->AddFault({"POST", "/containers/create", Kind::kDropBeforeForward, {}, 1});
  absl::StatusOr<StartResult> r = rt_->Start(TestSpec(job, {"sh", "-c", "exit 0"}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->adopted);
  EXPECT_EQ(proxy_->Seen("POST", "/containers/create"), 3);
  EXPECT_EQ(rt_->List()->size(), 1u);
}

TEST_F(DockerFaultTest, LostStartAnswerNeverRunsTheJobTwice) {
  const std::string job = Job("loststart");
  // The job runs and exits at once; the start answer is lost; the retry must
  // see "exited" and not start it again (which would run it twice).
  proxy_->AddFault({"POST", "/start", Kind::kDropAfterForward, {}, 1});
  absl::StatusOr<StartResult> r = rt_->Start(TestSpec(job, {"sh", "-c", "echo ran"}));
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<ContainerObservation> obs = WaitFinished(*rt_, job, absl::Seconds(60));
  ASSERT_TRUE(obs.ok()) << obs.status();
  EXPECT_EQ(ClassifyExit(*obs, StopIntent::kNone)->kind, ExitKind::kSucceeded);
  EXPECT_EQ(proxy_->Seen("POST", "/start"), 1);
  EXPECT_EQ(*rt_->LogsTail(job, 100), "ran\n");
}

TEST_F(DockerFaultTest, StartRefusedOnceIsRetried) {
  const std::string job = Job("start500");
  proxy_->AddFault({"POST", "/start", Kind::kError500, {}, 1});
  absl::StatusOr<StartResult> r = rt_->Start(TestSpec(job, {"sh", "-c", "exit 5"}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(proxy_->Seen("POST", "/start"), 2);
  absl::StatusOr<ContainerObservation> obs = WaitFinished(*rt_, job, absl::Seconds(60));
  ASSERT_TRUE(obs.ok()) << obs.status();
  const std::optional<ExitOutcome> out = ClassifyExit(*obs, StopIntent::kNone);
  EXPECT_EQ(out->kind, ExitKind::kNonzeroExit);
  EXPECT_EQ(out->exit_code, 5);
}

TEST_F(DockerFaultTest, FailingInspectIsNeverMistakenForAVanishedJob) {
  const std::string job = Job("inspect500");
  ASSERT_TRUE(rt_->Start(TestSpec(job, {"sleep", "300"})).ok());
  proxy_->AddFault({"GET", "/json", Kind::kError500, {}, -1});
  absl::StatusOr<ContainerObservation> obs = rt_->Inspect(job);
  // INTERNAL, not NOT_FOUND: the caller must not call ClassifyExit(nullopt)
  // and so must not declare the job LOST.
  EXPECT_EQ(obs.status().code(), absl::StatusCode::kInternal) << obs.status();
  EXPECT_EQ(ClassifyStartError(obs.status()), std::nullopt);
  proxy_->ClearFaults();
  obs = rt_->Inspect(job);
  ASSERT_TRUE(obs.ok()) << obs.status();
  EXPECT_EQ(obs->state, ContainerState::kRunning);
  EXPECT_EQ(ClassifyExit(*obs, StopIntent::kNone), std::nullopt);

  // A stop whose answer is lost is retried and still ends as CANCELLED.
  proxy_->AddFault({"POST", "/stop", Kind::kDropAfterForward, {}, 1});
  ASSERT_TRUE(rt_->Stop(job, absl::Seconds(2)).ok());
  EXPECT_EQ(proxy_->Seen("POST", "/stop"), 2);
  obs = rt_->Inspect(job);
  ASSERT_TRUE(obs.ok());
  EXPECT_EQ(obs->state, ContainerState::kExited);
  EXPECT_EQ(ClassifyExit(*obs, StopIntent::kCancel)->kind, ExitKind::kCancelled);
}

TEST_F(DockerFaultTest, SlowLogReadIsReadToItsEndAStalledOneFails) {
  const std::string job = Job("slowlog");
  ASSERT_TRUE(rt_->Start(TestSpec(job, {"seq", "1", "20000"})).ok());
  ASSERT_TRUE(WaitFinished(*rt_, job, absl::Seconds(60)).ok());
  std::string want;
  for (int i = 1; i <= 20000; ++i) absl::StrAppend(&want, i, "\n");

  DockerRuntimeOptions o = TestOptions(instance_);
  o.endpoint.url = proxy_->url();
  o.logs_read_timeout = absl::Seconds(1);
  auto rt = DockerRuntime::Create(o);
  ASSERT_TRUE(rt.ok()) << rt.status();
  // ~270 KB framed, 8 KiB every 100 ms: the read lasts several times the
  // limit, but the engine is never quiet for it, so all of it comes.
  DockerProxy::Fault trickle;
  trickle.method = "GET";
  trickle.path_contains = "/logs";
  trickle.kind = Kind::kTrickle;
  trickle.delay = absl::Milliseconds(100);
  trickle.trickle_bytes = 8192;
  trickle.times = 1;
  proxy_->AddFault(trickle);
  std::string got;
  const LogSink keep = [&](LogStream, absl::string_view d) {
    got.append(d.data(), d.size());
    return true;
  };
  absl::Time t0 = Clock::Real()->Now();
  absl::Status read = (*rt)->ReadLogs(job, LogReadOptions{}, keep);
  ASSERT_TRUE(read.ok()) << read;
  EXPECT_GT(Clock::Real()->Now() - t0, absl::Seconds(2));
  EXPECT_TRUE(got == want) << got.size() << " bytes read of " << want.size();

  // An engine that sends nothing for the limit: the read fails, no hang.
  proxy_->AddFault({"GET", "/logs", Kind::kDelay, absl::Seconds(5), 1});
  got.clear();
  t0 = Clock::Real()->Now();
  read = (*rt)->ReadLogs(job, LogReadOptions{}, keep);
  EXPECT_EQ(read.code(), absl::StatusCode::kDeadlineExceeded) << read;
  EXPECT_LT(Clock::Real()->Now() - t0, absl::Seconds(4));
}

TEST_F(DockerFaultTest, EngineDownIsUnavailableNotAJobFailure) {
  DockerRuntimeOptions o = TestOptions(instance_);
  o.endpoint.url = absl::StrCat("unix:///tmp/", instance_, "-nothing.sock");
  o.max_attempts = 2;
  auto rt = DockerRuntime::Create(o);
  ASSERT_TRUE(rt.ok());
  absl::StatusOr<StartResult> r = (*rt)->Start(TestSpec(Job("down"), {"true"}));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
  EXPECT_EQ(ClassifyStartError(r.status()), std::nullopt);  // retry later
  EXPECT_EQ((*rt)->Inspect(Job("down")).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ((*rt)->List().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ((*rt)->Counters().at("create").calls, 2);
}

TEST_F(DockerFaultTest, EventsReconnectAfterADroppedStream) {
  // The first /events connection is dropped; the subscription reconnects,
  // asks for a resync, and still reports the job's exit.
  proxy_->AddFault({"GET", "/events", Kind::kDropBeforeForward, {}, 1});
  absl::Mutex mu;
  std::vector<RuntimeEvent> events;
  auto sub = rt_->SubscribeEvents([&](const RuntimeEvent& e) {
    absl::MutexLock l(&mu);
    events.push_back(e);
  });
  ASSERT_TRUE(WaitFor([&] { return proxy_->Seen("GET", "/events") >= 2; },
                      absl::Seconds(10)));
  const std::string job = Job("events");
  ASSERT_TRUE(rt_->Start(TestSpec(job, {"sh", "-c", "sleep 1"})).ok());
  EXPECT_TRUE(WaitFor(
      [&] {
        absl::MutexLock l(&mu);
        for (const RuntimeEvent& e : events) {
          if (e.job_id == job && e.action == "die") return true;
        }
        return false;
      },
      absl::Seconds(30)));
  sub.reset();
  absl::MutexLock l(&mu);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().action, "resync");
  EXPECT_GE(rt_->Counters().at("events").errors, 1);
}

TEST(DockerTcpTest, PlainTcpEndpointAndTlsFailures) {
  const std::string instance = UniqueName("tcp");
  InstanceCleanup cleanup(instance);
  auto proxy = DockerProxy::StartTcp();
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  DockerRuntimeOptions o = TestOptions(instance);
  o.endpoint.url = (*proxy)->url();
  auto rt = DockerRuntime::Create(o);
  ASSERT_TRUE(rt.ok());
  EXPECT_TRUE((*rt)->Ping().ok());
  const std::string job = instance + "-job";
  ASSERT_TRUE((*rt)->Start(TestSpec(job, {"sh", "-c", "exit 2"})).ok());
  absl::StatusOr<ContainerObservation> obs = WaitFinished(**rt, job, absl::Seconds(60));
  ASSERT_TRUE(obs.ok()) << obs.status();
  EXPECT_EQ(obs->exit_code, 2);

  // https:// against a plain-HTTP port: the server never answers the TLS
  // ClientHello, so the call times out (transient, like a hung engine).
  o.endpoint.url = absl::StrReplaceAll((*proxy)->url(), {{"http://", "https://"}});
  o.max_attempts = 1;
  o.call_timeout = absl::Seconds(1);
  auto tls = DockerRuntime::Create(o);
  ASSERT_TRUE(tls.ok());
  absl::Status s = (*tls)->Ping();
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  // A client certificate that cannot be read is a configuration error.
  o.endpoint.tls_cert_file = "/nonexistent/cert.pem";
  o.endpoint.tls_key_file = "/nonexistent/key.pem";
  auto badcert = DockerRuntime::Create(o);
  ASSERT_TRUE(badcert.ok());
  s = (*badcert)->Ping();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
}

}  // namespace
}  // namespace berth
