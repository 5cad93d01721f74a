// DockerRuntime against the real dockerd (tools/setup.sh starts it and builds
// berth-test/busybox:1). Each test has its own instance label and job-id
// prefix and removes its containers, pass or fail.
#include "executor/docker_runtime.h"

#include <sys/stat.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/ascii.h"
#include "absl/synchronization/mutex.h"
#include "executor/docker_http.h"
#include "executor/testing/docker_test_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace berth {
namespace {

using ::berth::testing::InstanceCleanup;
using ::berth::testing::TestOptions;
using ::berth::testing::TestSpec;
using ::berth::testing::UniqueName;
using ::berth::testing::WaitFinished;
using ::berth::testing::WaitFor;

class DockerRuntimeTest : public ::testing::Test {
 protected:
  DockerRuntimeTest()
      : instance_(UniqueName("it")), cleanup_(instance_), prefix_(instance_) {}

  void SetUp() override {
    absl::StatusOr<std::unique_ptr<DockerRuntime>> rt =
        DockerRuntime::Create(TestOptions(instance_));
    ASSERT_TRUE(rt.ok()) << rt.status();
    rt_ = std::move(*rt);
    ASSERT_TRUE(rt_->Ping().ok()) << "dockerd not reachable; run tools/setup.sh";
  }

  std::string Job(const std::string& name) { return prefix_ + "-" + name; }

  // Starts, waits for the end, returns the observation.
  ContainerObservation RunToEnd(const ContainerSpec& spec) {
    absl::StatusOr<StartResult> r = rt_->Start(spec);
    EXPECT_TRUE(r.ok()) << r.status();
    absl::StatusOr<ContainerObservation> obs =
        WaitFinished(*rt_, spec.job_id, absl::Seconds(60));
    EXPECT_TRUE(obs.ok()) << obs.status();
    return obs.ok() ? *obs : ContainerObservation{};
  }

  ExitOutcome Classify(const ContainerObservation& obs, StopIntent intent) {
    std::optional<ExitOutcome> out = ClassifyExit(obs, intent);
    EXPECT_TRUE(out.has_value());
    return out.value_or(ExitOutcome{});
  }

  const std::string instance_;
  InstanceCleanup cleanup_;
  const std::string prefix_;
  std::unique_ptr<DockerRuntime> rt_;
};

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

TEST_F(DockerRuntimeTest, HardeningSeenFromInside) {
  const std::string job = Job("hardening");
  const std::string script =
      "echo NETDEV; cat /proc/net/dev; echo END_NETDEV; "
      "grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs)' /proc/self/status; "
      "echo UID=$(id -u) GID=$(id -g); "
      "echo PIDSMAX=$(cat /sys/fs/cgroup/pids/pids.max); "
      "echo MEMLIMIT=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes); "
      "echo MEMSW=$(cat /sys/fs/cgroup/memory/memory.memsw.limit_in_bytes "
      "2>/dev/null || echo none); "
      "echo CPUQUOTA=$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) "
      "PERIOD=$(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us); "
      // (busybox's wget crashes in this image; nc tells "unreachable" -- no
      // interface can route -- from "refused" -- a network exists.)
      "echo NET=$(nc -w 2 172.17.0.1 9 </dev/null 2>&1 | "
      "grep -o -E 'unreachable|refused|timed out'); "
      "echo ROUTES=$(tail -n +2 /proc/net/route | wc -l); "
      "if touch /rootfs-probe 2>/dev/null; then echo ROOTFS=rw; else echo ROOTFS=ro; fi; "
      "if touch /tmp/probe; then echo TMP=rw; fi; "
      "echo PID1=$(cat /proc/1/comm)";
  ContainerObservation obs = RunToEnd(TestSpec(job, {"sh", "-c", script}));
  EXPECT_EQ(obs.exit_code, 0);
  absl::StatusOr<std::string> logs = rt_->LogsTail(job, 64 << 10);
  ASSERT_TRUE(logs.ok()) << logs.status();
  const std::string& out = *logs;
  SCOPED_TRACE(out);

  // Network: only the loopback interface exists.
  const size_t a = out.find("NETDEV\n"), b = out.find("END_NETDEV");
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  std::vector<std::string> ifaces;
  for (absl::string_view line :
       absl::StrSplit(out.substr(a + 7, b - a - 7), '\n', absl::SkipEmpty())) {
    if (absl::StrContains(line, "|")) continue;  // the two header lines
    ifaces.push_back(std::string(absl::StripAsciiWhitespace(
        line.substr(0, line.find(':')))));
  }
  EXPECT_EQ(ifaces, std::vector<std::string>{"lo"});
  EXPECT_TRUE(absl::StrContains(out, "NET=unreachable"));
  EXPECT_TRUE(absl::StrContains(out, "ROUTES=0"));

  // Capabilities: none effective, permitted or bounding; no-new-privileges.
  EXPECT_TRUE(absl::StrContains(out, "CapEff:\t0000000000000000"));
  EXPECT_TRUE(absl::StrContains(out, "CapPrm:\t0000000000000000"));
  EXPECT_TRUE(absl::StrContains(out, "CapBnd:\t0000000000000000"));
  EXPECT_TRUE(absl::StrContains(out, "NoNewPrivs:\t1"));

  // Identity and limits.
  EXPECT_TRUE(absl::StrContains(out, "UID=65534 GID=65534"));
  EXPECT_TRUE(absl::StrContains(out, "PIDSMAX=256"));
  EXPECT_TRUE(absl::StrContains(out, absl::StrCat("MEMLIMIT=", 64 << 20)));
  // memsw exists only with swap accounting; when it does, it equals memory.
  EXPECT_TRUE(absl::StrContains(out, absl::StrCat("MEMSW=", 64 << 20)) ||
              absl::StrContains(out, "MEMSW=none"));
  EXPECT_TRUE(absl::StrContains(out, "CPUQUOTA=50000 PERIOD=100000"));
  EXPECT_TRUE(absl::StrContains(out, "ROOTFS=ro"));
  EXPECT_TRUE(absl::StrContains(out, "TMP=rw"));
  // Init: true puts docker-init (tini) at PID 1.
  EXPECT_TRUE(absl::StrContains(out, "PID1=docker-init"));
}

TEST_F(DockerRuntimeTest, ForkBombStopsAtPidsLimit) {
  const std::string job = Job("pids");
  ContainerObservation obs = RunToEnd(TestSpec(
      job, {"sh", "-c",
            "i=0; while [ $i -lt 400 ]; do sleep 60 & i=$((i+1)); done; "
            "echo ALL_SPAWNED"}));
  absl::StatusOr<std::string> logs = rt_->LogsTail(job, 4096);
  ASSERT_TRUE(logs.ok()) << logs.status();
  EXPECT_TRUE(absl::StrContains(*logs, "can't fork")) << *logs;
  EXPECT_FALSE(absl::StrContains(*logs, "ALL_SPAWNED")) << *logs;
  EXPECT_NE(obs.exit_code, 0);
}

TEST_F(DockerRuntimeTest, WorkspaceMountedReadWrite) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  ASSERT_NE(tmp, nullptr);
  const std::string root = absl::StrCat(tmp, "/workspaces");
  const std::string ws = "ws-mount";
  ASSERT_EQ(mkdir(root.c_str(), 0755), 0);
  // As a job-server would leave it: root's, 0755 (issue 17: uid 65534 could
  // not write it). Berth prepares owner and mode before the start.
  ASSERT_EQ(mkdir((root + "/" + ws).c_str(), 0755), 0);
  ASSERT_EQ(chmod((root + "/" + ws).c_str(), 0755), 0);
  DockerRuntimeOptions o = TestOptions(instance_);
  o.workspaces_root = root;
  auto rt = DockerRuntime::Create(o);
  ASSERT_TRUE(rt.ok());
  ContainerSpec spec = TestSpec(
      Job("ws"), {"sh", "-c",
                  "echo result > /workspace/out.txt && id -u > /workspace/uid && "
                  "if touch /etc/evil 2>/dev/null || touch /evil 2>/dev/null; then exit 3; fi"});
  spec.workspace = ws;
  spec.mount_workspace = true;
  absl::StatusOr<StartResult> started = (*rt)->Start(spec);
  ASSERT_TRUE(started.ok()) << started.status();
  absl::StatusOr<ContainerObservation> obs =
      WaitFinished(**rt, spec.job_id, absl::Seconds(60));
  ASSERT_TRUE(obs.ok()) << obs.status();
  EXPECT_EQ(obs->exit_code, 0);  // 3: it could write outside /workspace and /tmp
  std::ifstream f(root + "/" + ws + "/out.txt");
  std::stringstream content;
  content << f.rdbuf();
  EXPECT_EQ(content.str(), "result\n");
  std::ifstream u(root + "/" + ws + "/uid");
  std::stringstream uid;
  uid << u.rdbuf();
  EXPECT_EQ(uid.str(), "65534\n");
  struct stat st;
  ASSERT_EQ(stat((root + "/" + ws).c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65534u);
  EXPECT_EQ(st.st_mode & 07777, 0770u);  // nobody else on the host
}

TEST_F(DockerRuntimeTest, SameJobTwiceIsOneContainer) {
  const std::string job = Job("twice");
  const ContainerSpec spec = TestSpec(job, {"sleep", "300"});
  absl::StatusOr<StartResult> first = rt_->Start(spec);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->adopted);
  absl::StatusOr<StartResult> second = rt_->Start(spec);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->adopted);
  EXPECT_EQ(second->container_id, first->container_id);

  // Racing starts of another job: exactly one creates, the rest adopt.
  const std::string raced = Job("raced");
  std::atomic<int> created{0}, adopted{0}, failed{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      absl::StatusOr<StartResult> r = rt_->Start(TestSpec(raced, {"sleep", "300"}));
      if (!r.ok()) {
        ++failed;
      } else if (r->adopted) {
        ++adopted;
      } else {
        ++created;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(created.load(), 1);
  EXPECT_EQ(adopted.load(), 3);
  EXPECT_EQ(failed.load(), 0);

  absl::StatusOr<ContainerList> list = rt_->List();
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->size(), 2u);
  EXPECT_EQ(list->at(job).container_id, first->container_id);
  EXPECT_EQ(list->at(job).state, ContainerState::kRunning);

  // An exited container is adopted, never restarted.
  const std::string done = Job("done");
  ContainerObservation obs = RunToEnd(TestSpec(done, {"sh", "-c", "exit 4"}));
  absl::StatusOr<StartResult> again = rt_->Start(TestSpec(done, {"sh", "-c", "exit 4"}));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->adopted);
  absl::StatusOr<ContainerObservation> after = rt_->Inspect(done);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->state, ContainerState::kExited);
  EXPECT_EQ(after->started_at, obs.started_at);
}

TEST_F(DockerRuntimeTest, NameTakenByAnotherInstanceIsAlreadyExists) {
  const std::string other_instance = UniqueName("other");
  InstanceCleanup other_cleanup(other_instance);
  auto other = DockerRuntime::Create(TestOptions(other_instance));
  ASSERT_TRUE(other.ok());
  const std::string job = Job("shared");
  ASSERT_TRUE((*other)->Start(TestSpec(job, {"sleep", "300"})).ok());
  absl::StatusOr<StartResult> r = rt_->Start(TestSpec(job, {"sleep", "300"}));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAlreadyExists) << r.status();
  // And the other instance's container is invisible and untouchable here.
  EXPECT_EQ(rt_->Inspect(job).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rt_->Stop(job, absl::Seconds(1)).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rt_->Remove(job).code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(rt_->List()->empty());
  absl::StatusOr<ContainerObservation> still = (*other)->Inspect(job);
  ASSERT_TRUE(still.ok());
  EXPECT_EQ(still->state, ContainerState::kRunning);
}

// Creates (without starting) a container with the given labels directly
// through the API, so the list test does not depend on Start.
void CreateRaw(DockerHttp& http, const std::string& name,
               const nlohmann::json& labels) {
  nlohmann::json body = {{"Image", testing::kTestImage},
                         {"Cmd", {"true"}},
                         {"Labels", labels},
                         {"HostConfig", {{"NetworkMode", "none"}}}};
  HttpRequest req;
  req.method = "POST";
  req.path = "/containers/create?name=" + name;
  req.body = body.dump();
  absl::StatusOr<HttpResponse> resp = http.Do(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  ASSERT_EQ(resp->status, 201) << resp->body;
}

TEST_F(DockerRuntimeTest, BulkListSeesExactlyOursInOneCall) {
  auto http = DockerHttp::Create(DockerEndpoint{});
  ASSERT_TRUE(http.ok());
  const std::string foreign = UniqueName("foreign");
  InstanceCleanup foreign_cleanup(foreign);
  for (int i = 0; i < 100; ++i) {
    const std::string job = Job(absl::StrCat("bulk-", i));
    ASSERT_NO_FATAL_FAILURE(CreateRaw(
        **http, "berth-" + job,
        {{"berth.job", job}, {"berth.instance", instance_},
         {"berth.workspace", "ws"}, {"berth.action", "run"}}));
  }
  // Foreign: another instance, and a berth.job label without our instance.
  for (int i = 0; i < 3; ++i) {
    const std::string job = absl::StrCat(foreign, "-", i);
    ASSERT_NO_FATAL_FAILURE(CreateRaw(
        **http, "berth-" + job, {{"berth.job", job}, {"berth.instance", foreign}}));
  }
  const std::string unlabelled = foreign + "-nolabel";
  ASSERT_NO_FATAL_FAILURE(
      CreateRaw(**http, "berth-" + unlabelled, {{"berth.job", unlabelled}}));

  absl::StatusOr<ContainerList> list = rt_->List();
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->size(), 100u);
  for (const auto& [job, summary] : *list) {
    EXPECT_TRUE(absl::StartsWith(job, prefix_ + "-bulk-")) << job;
    EXPECT_EQ(summary.state, ContainerState::kCreated);
  }
  CallCounters c = rt_->Counters();
  EXPECT_EQ(c.at("list").calls, 1);
  EXPECT_EQ(c.at("list").errors, 0);
  EXPECT_EQ(TotalCalls(c), 2);  // the Ping in SetUp + the one list

  // Nothing changed: a second pass diffs to nothing, so no inspect follows.
  absl::StatusOr<ContainerList> again = rt_->List();
  ASSERT_TRUE(again.ok());
  ContainerListDiff diff = DiffContainerLists(*list, *again);
  EXPECT_TRUE(diff.changed.empty());
  EXPECT_TRUE(diff.vanished.empty());

  // Remove the unlabelled one now (no instance label: cleanup can't see it).
  HttpRequest del;
  del.method = "DELETE";
  del.path = "/containers/berth-" + unlabelled + "?force=1";
  absl::StatusOr<HttpResponse> d = (*http)->Do(del);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->status, 204);
}

TEST_F(DockerRuntimeTest, ImageNotAllowedIsRefusedBeforeAnyCall) {
  auto rt = DockerRuntime::Create(TestOptions(instance_));
  ASSERT_TRUE(rt.ok());
  ContainerSpec spec = TestSpec(Job("denied"), {"true"});
  spec.image = "docker.io/library/busybox:latest";
  absl::StatusOr<StartResult> r = (*rt)->Start(spec);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(absl::StrContains(r.status().message(), spec.image)) << r.status();
  EXPECT_EQ(TotalCalls((*rt)->Counters()), 0);
  EXPECT_EQ(ClassifyStartError(r.status()), ExitKind::kStartFailed);
}

TEST_F(DockerRuntimeTest, MissingImageIsStartFailedNamingTheImage) {
  ContainerSpec spec = TestSpec(Job("missing"), {"true"});
  spec.image = "berth-test/does-not-exist:0";
  absl::StatusOr<StartResult> r = rt_->Start(spec);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), spec.image)) << r.status();
  EXPECT_EQ(ClassifyStartError(r.status()), ExitKind::kStartFailed);
  absl::StatusOr<ContainerList> list = rt_->List();
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(list->empty());
}

TEST_F(DockerRuntimeTest, EventsReportExits) {
  absl::Mutex mu;
  std::vector<RuntimeEvent> events;
  auto sub = rt_->SubscribeEvents([&](const RuntimeEvent& e) {
    absl::MutexLock l(&mu);
    events.push_back(e);
  });
  const std::string job = Job("events");
  // The job dies a second after starting, long after the stream connected.
  ASSERT_TRUE(rt_->Start(TestSpec(job, {"sh", "-c", "sleep 1; exit 0"})).ok());
  const bool saw_die = WaitFor(
      [&] {
        absl::MutexLock l(&mu);
        for (const RuntimeEvent& e : events) {
          if (e.job_id == job && e.action == "die") return true;
        }
        return false;
      },
      absl::Seconds(30));
  EXPECT_TRUE(saw_die);
  sub.reset();  // returns promptly and stops delivery
  absl::MutexLock l(&mu);
  for (const RuntimeEvent& e : events) {
    EXPECT_TRUE(e.job_id.empty() || absl::StartsWith(e.job_id, prefix_)) << e.job_id;
  }
}

TEST_F(DockerRuntimeTest, HostInfo) {
  absl::StatusOr<HostInfo> info = rt_->GetHostInfo();
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_GT(info->ncpu, 0);
  EXPECT_GT(info->mem_total_bytes, int64_t{1} << 30);
  EXPECT_FALSE(info->server_version.empty());
}

}  // namespace
}  // namespace berth
