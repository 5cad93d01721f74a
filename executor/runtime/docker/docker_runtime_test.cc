// DockerRuntime against the real dockerd: hardening, workspaces, names,
// bulk listing, images, events (exits and logs: docker_runtime_exit_test.cc) (tools/setup.sh starts it and builds
// berth-test/busybox:1). Each test has its own instance label and job-id
// prefix and removes its containers, pass or fail.
#include "executor/runtime/docker/docker_runtime.h"

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
#include "executor/runtime/docker/docker_http.h"
#include "executor/runtime/docker/testing/docker_runtime_fixture.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace berth {
namespace {

using ::berth::testing::DockerRuntimeTest;
using ::berth::testing::InstanceCleanup;
using ::berth::testing::TestOptions;
using ::berth::testing::TestSpec;
using ::berth::testing::UniqueName;
using ::berth::testing::WaitFinished;
using ::berth::testing::WaitFor;

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
  // As a job-server would leave it: root's, 0755 (uid 65534 could
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

// Names carry the instance (container_names.h): two instances on one engine
// run the same job id side by side, each seeing only its own container.
TEST_F(DockerRuntimeTest, TwoInstancesRunTheSameJobId) {
  const std::string other_instance = UniqueName("other");
  InstanceCleanup other_cleanup(other_instance);
  auto other = DockerRuntime::Create(TestOptions(other_instance));
  ASSERT_TRUE(other.ok());
  const std::string job = Job("shared");
  absl::StatusOr<StartResult> theirs = (*other)->Start(TestSpec(job, {"sleep", "300"}));
  ASSERT_TRUE(theirs.ok()) << theirs.status();
  absl::StatusOr<StartResult> ours = rt_->Start(TestSpec(job, {"sleep", "300"}));
  ASSERT_TRUE(ours.ok()) << ours.status();
  EXPECT_FALSE(ours->adopted);
  EXPECT_NE(ours->container_id, theirs->container_id);
  absl::StatusOr<ContainerObservation> mine = rt_->Inspect(job);
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_EQ(mine->container_id, ours->container_id);
  EXPECT_EQ(mine->state, ContainerState::kRunning);
  absl::StatusOr<ContainerList> list = rt_->List();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ(list->at(job).container_id, ours->container_id);
  // Stopping and removing ours leaves theirs running.
  EXPECT_TRUE(rt_->Stop(job, absl::Seconds(1)).ok());
  EXPECT_TRUE(rt_->Remove(job).ok());
  absl::StatusOr<ContainerObservation> still = (*other)->Inspect(job);
  ASSERT_TRUE(still.ok()) << still.status();
  EXPECT_EQ(still->container_id, theirs->container_id);
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

// A container of an older berthd, named "berth-<job id>", is adopted across
// the upgrade: List() finds it by its labels and notes the old name, and
// Inspect/LogsTail/Stop/Remove reach it under that name.
TEST_F(DockerRuntimeTest, LegacyNamedContainerIsAdopted) {
  auto http = DockerHttp::Create(DockerEndpoint{});
  ASSERT_TRUE(http.ok());
  const std::string job = Job("legacy");
  ASSERT_NO_FATAL_FAILURE(CreateRaw(
      **http, "berth-" + job, {{"berth.job", job}, {"berth.instance", instance_}}));
  const int64_t calls_before = TotalCalls(rt_->Counters());
  absl::StatusOr<ContainerList> list = rt_->List();
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->count(job), 1u);
  absl::StatusOr<ContainerObservation> obs = rt_->Inspect(job);
  ASSERT_TRUE(obs.ok()) << obs.status();
  EXPECT_EQ(obs->container_id, list->at(job).container_id);
  EXPECT_EQ(obs->state, ContainerState::kCreated);
  EXPECT_TRUE(rt_->LogsTail(job, 1024).ok());
  EXPECT_TRUE(rt_->Stop(job, absl::Seconds(1)).ok());
  EXPECT_TRUE(rt_->Remove(job).ok());
  // No extra engine call for the old name: list, inspect, logs (inspect +
  // logs), stop (inspect + stop), remove (inspect + remove).
  EXPECT_EQ(TotalCalls(rt_->Counters()) - calls_before, 8);
  list = rt_->List();
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->count(job), 0u);
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
