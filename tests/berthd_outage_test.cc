// Docker unreachable for 30 s while jobs run (DESIGN.md: "a Docker outage
// never fails jobs by itself"): berthd keeps serving reads and syncs,
// reports the runtime unhealthy (grpc.health.v1 service "berth.runtime"
// NOT_SERVING, metric berth_runtime_up 0), fails no job, and reconciles
// afterwards: jobs that ended during the outage are recorded SUCCEEDED, a
// job synced during the outage runs once Docker is back.
//
// Two ways to take Docker away:
//   ViaProxy        berthd talks to Docker through a fault-injecting unix
//                   socket proxy (executor/runtime/docker/testing/docker_proxy.h) that, for
//                   30 s, drops every new connection and cuts the open ones
//                   (the events stream). The containers keep running in the
//                   real dockerd. Safe next to other tests: //tests:berthd_outage_test.
//   RealDockerd     stops the host's dockerd (SIGTERM) for 30 s and starts it
//                   again, relying on live-restore (tools/setup.sh turns it
//                   on) to keep the containers alive. DISRUPTIVE: manual,
//                   exclusive, and only under `bazel run` (bazel test kills
//                   the dockerd the test restarts):
//                     bazel run //tests:berthd_dockerd_restart_test
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "executor/runtime/docker/testing/docker_proxy.h"
#include "executor/runtime/docker/testing/dockerd_control.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/berthd_process.h"
#include "tools/base/subprocess.h"

namespace berth {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr absl::Duration kOutage = absl::Seconds(30);

// grpc.health.v1 status of `service`, or UNKNOWN if the call fails.
grpc::health::v1::HealthCheckResponse::ServingStatus Health(const BerthdProcess& b,
                                                           const std::string& service) {
  auto stub = grpc::health::v1::Health::NewStub(
      grpc::CreateChannel(b.target(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  if (!stub->Check(&context, request, &response).ok()) {
    return grpc::health::v1::HealthCheckResponse::UNKNOWN;
  }
  return response.status();
}

// Value of an unlabelled metric; NaN-free: -1 when absent.
double Metric(const BerthdProcess& b, const std::string& name) {
  absl::StatusOr<std::string> m = b.Metrics();
  if (!m.ok()) return -1;
  for (absl::string_view line : absl::StrSplit(*m, '\n')) {
    if (absl::StartsWith(line, name + " ")) {
      double v = 0;
      if (absl::SimpleAtod(line.substr(name.size() + 1), &v)) return v;
    }
  }
  return -1;
}

// Takes Docker away and brings it back.
class Outage {
 public:
  virtual ~Outage() = default;
  // Extra berthd flags (e.g. --docker=<proxy>).
  virtual std::vector<std::string> BerthdFlags() const { return {}; }
  virtual void Begin() = 0;
  virtual void End() = 0;
  // True if the daemon itself stops: Docker then drops what a container
  // writes meanwhile if it exits before the daemon is back.
  virtual bool DaemonStops() const = 0;
};

class ProxyOutage final : public Outage {
 public:
  ProxyOutage() {
    absl::BitGen gen;
    // Unix socket paths are limited to 107 bytes: not under TEST_TMPDIR.
    path_ = absl::StrCat("/tmp/berth-outage-", getpid(), "-",
                         absl::Uniform<uint32_t>(gen, 0, 1u << 30), ".sock");
    absl::StatusOr<std::unique_ptr<testing::DockerProxy>> p = testing::DockerProxy::Start(path_);
    if (p.ok()) proxy_ = *std::move(p);
  }
  bool ok() const { return proxy_ != nullptr; }
  std::vector<std::string> BerthdFlags() const override {
    return {absl::StrCat("--docker=", proxy_->url())};
  }
  void Begin() override { proxy_->SetDown(true); }
  void End() override { proxy_->SetDown(false); }
  bool DaemonStops() const override { return false; }

 private:
  std::string path_;
  std::unique_ptr<testing::DockerProxy> proxy_;
};

// ---- The real dockerd (manual test) ----

using testing::DockerdPid;
using testing::ProcessAlive;
constexpr const char* kDockerPidFile = testing::kDockerdPidFile;

bool DockerPing() {
  DockerRuntimeOptions o;
  o.instance = "outage-probe";
  o.image_allow_list = {"*"};
  o.max_attempts = 1;
  o.call_timeout = absl::Seconds(2);
  absl::StatusOr<std::unique_ptr<DockerRuntime>> rt = DockerRuntime::Create(o);
  return rt.ok() && (*rt)->Ping().ok();
}

bool StartDockerd() { return testing::StartDockerd(DockerPing); }

class DockerdOutage final : public Outage {
 public:
  ~DockerdOutage() override {
    if (DockerPing()) return;
    std::cerr << "outage test: dockerd down at exit, starting it\n";
    if (!StartDockerd()) std::cerr << "outage test: dockerd did not come back!\n";
  }
  void Begin() override {
    int pid = DockerdPid();
    ASSERT_GT(pid, 0) << "no " << kDockerPidFile;
    ASSERT_EQ(kill(pid, SIGTERM), 0);
    ASSERT_TRUE(WaitFor([pid] { return !ProcessAlive(pid); }, absl::Seconds(60)))
        << "dockerd did not stop";
  }
  void End() override { ASSERT_TRUE(StartDockerd()) << "dockerd did not come back"; }
  bool DaemonStops() const override { return true; }
};

bool LiveRestore() {
  DockerRuntimeOptions o;
  o.instance = "outage-probe";
  o.image_allow_list = {"*"};
  absl::StatusOr<std::unique_ptr<DockerRuntime>> rt = DockerRuntime::Create(o);
  if (!rt.ok()) return false;
  absl::StatusOr<HostInfo> host = (*rt)->GetHostInfo();
  return host.ok() && host->live_restore;
}

// ---- The scenario, for either outage ----

// The kept log of `job`'s latest attempt (ReadJobLog without follow):
// stdout, or the status if the read failed.
absl::StatusOr<std::string> KeptStdout(BerthClient& client, const std::string& job) {
  grpc::ClientContext context;
  client.Prepare(&context);
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::ReadJobLogRequest request;
  request.set_job_id(job);
  auto reader = client.stub().ReadJobLog(&context, request);
  std::string out;
  v1::JobLogChunk chunk;
  while (reader->Read(&chunk)) {
    if (chunk.stream() != v1::LOG_STREAM_KIND_STDERR) out += chunk.data();
  }
  absl::Status status = FromGrpcStatus(reader->Finish());
  if (!status.ok()) return status;
  return out;
}

// 3,000 numbered lines: a log too long for logs_tail, to check whole.
constexpr char kNumbered[] = "seq 1 3000; ";
std::string NumberedLines() {
  std::string out;
  for (int i = 1; i <= 3000; ++i) absl::StrAppend(&out, i, "\n");
  return out;
}

void RunOutageScenario(Outage& outage) {
  using HealthStatus = grpc::health::v1::HealthCheckResponse;
  BerthdProcessOptions o;
  o.tick = "200ms";
  o.extra_flags = outage.BerthdFlags();
  absl::StatusOr<std::unique_ptr<BerthdProcess>> started = BerthdProcess::Start(o);
  ASSERT_TRUE(started.ok()) << started.status();
  BerthdProcess& b = **started;
  std::unique_ptr<BerthClient> pusher = b.Client(Role::kPusher);
  std::unique_ptr<BerthClient> reader = b.Client(Role::kReader);
  ASSERT_TRUE(WaitFor([&] { return Health(b, "berth.runtime") == HealthStatus::SERVING; },
                      absl::Seconds(10)));

  // Three jobs end during the outage, one after it.
  v1::Snapshot s;
  s.set_generation(1);
  // Container names are host-wide: ids unique to this run.
  const std::string prefix = UniqueJobPrefix();
  const std::string out_a = prefix + "out-a", out_long = prefix + "out-long",
                    out_new = prefix + "out-new";
  std::vector<std::string> ids = {out_a, prefix + "out-b", prefix + "out-c", out_long};
  for (const std::string& id : ids) {
    *s.add_jobs() = BusyboxJob(id, "ws", 32 * kMiB,
                               absl::StrCat("echo start; ", kNumbered,
                                            // out-long outlives the outage even
                                            // when a loaded machine stretches it
                                            // (40 s did not, in one CI run).
                                            id == out_long ? "sleep 90" : "sleep 10",
                                            "; echo done"));
  }
  ASSERT_TRUE(pusher->Sync(s).ok());
  v1::ListJobsRequest running;
  running.add_states(v1::JOB_STATE_RUNNING);
  ASSERT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<v1::ListJobsResponse> r = reader->ListJobs(running);
        return r.ok() && r->jobs_size() == 4;
      },
      absl::Seconds(30)))
      << b.Log();

  // What they print before sleeping has reached Docker's log (a RUNNING job
  // may still be printing): a daemon stopped now can drop only what comes
  // after, the premise of the log checks at the end.
  const std::string before = absl::StrCat("start\n", NumberedLines());
  std::unique_ptr<BerthClient> op = b.Client(Role::kOperator);
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const std::string& id : ids) {
          absl::StatusOr<std::string> kept = KeptStdout(*op, id);
          if (!kept.ok() || !absl::StartsWith(*kept, before)) return false;
        }
        return true;
      },
      absl::Seconds(30)))
      << "the jobs' first lines never reached Docker's log\n" << b.Log();

  // ---- Docker goes away ----
  const absl::Time began = absl::Now();
  outage.Begin();
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_TRUE(WaitFor(
      [&] { return Health(b, "berth.runtime") == HealthStatus::NOT_SERVING; },
      absl::Seconds(20)))
      << "runtime still reported healthy";
  EXPECT_TRUE(WaitFor([&] { return Metric(b, "berth_runtime_up") == 0; }, absl::Seconds(5)));
  EXPECT_EQ(Health(b, ""), HealthStatus::SERVING);
  EXPECT_EQ(Health(b, "berth.v1.Executor"), HealthStatus::SERVING);

  // Syncs are accepted; the new job waits for Docker.
  v1::Snapshot s2 = s;
  s2.set_generation(2);
  *s2.add_jobs() = BusyboxJob(out_new, "ws", 32 * kMiB, "echo new");
  absl::StatusOr<v1::SyncSnapshotResponse> synced = pusher->Sync(s2);
  ASSERT_TRUE(synced.ok()) << synced.status();
  EXPECT_EQ(synced->added(), 1);
  ids.push_back(out_new);

  // Reads keep working for the whole outage, and nothing fails.
  int reads = 0;
  int read_errors = 0;
  absl::Duration slowest;
  std::vector<std::string> failed;
  while (absl::Now() - began < kOutage) {
    absl::Time t0 = absl::Now();
    absl::Status st[4] = {reader->GetPlan(100).status(), reader->ListJobs({}).status(),
                          reader->ExplainJob(out_new).status(),
                          reader->GetJob(out_a).status()};
    slowest = std::max(slowest, absl::Now() - t0);
    for (const absl::Status& one : st) {
      ++reads;
      if (!one.ok()) {
        ++read_errors;
        ADD_FAILURE() << "read failed during the outage: " << one;
      }
    }
    for (const std::string& id : ids) {
      absl::StatusOr<v1::Job> j = reader->GetJob(id);
      if (j.ok() && (j->state() == v1::JOB_STATE_FAILED || j->state() == v1::JOB_STATE_CANCELLED)) {
        failed.push_back(absl::StrCat(id, ": ", j->message()));
      }
    }
    if (!failed.empty()) break;
    absl::SleepFor(absl::Milliseconds(250));
  }
  EXPECT_TRUE(failed.empty()) << absl::StrJoin(failed, "\n");
  EXPECT_EQ(read_errors, 0);
  EXPECT_GT(reads, 100);
  EXPECT_EQ(Health(b, "berth.runtime"), HealthStatus::NOT_SERVING);
  EXPECT_EQ(reader->GetJob(out_new)->state(), v1::JOB_STATE_QUEUED)
      << "admitted without Docker";
  // Behind the proxy the real dockerd still answers: what it recorded as
  // out-a/b/c's exit (docker inspect's State.FinishedAt), for comparing with
  // Berth's finished_at once it has seen the exits.
  std::map<std::string, absl::Time> docker_finished;
  if (!outage.DaemonStops()) {
    for (const std::string& id : ids) {
      if (id == out_long || id == out_new) continue;
      // Through sh: RunProcess execs its argv[0] as a path, without PATH.
      ProcessResult r = RunProcess({"/bin/sh", "-c", "exec docker \"$@\"", "docker", "ps", "-aq",
                                    "--filter", absl::StrCat("label=berth.job=", id)});
      const std::string cid(absl::StripAsciiWhitespace(r.out));
      ASSERT_FALSE(cid.empty()) << id << ": exit " << r.exit_code << " " << r.err;
      r = RunProcess({"/bin/sh", "-c", "exec docker \"$@\"", "docker", "inspect", "-f",
                      "{{.State.FinishedAt}}", cid});
      absl::Time t;
      std::string err;
      ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full,
                                  std::string(absl::StripAsciiWhitespace(r.out)), &t, &err))
          << id << ": " << r.out << r.err;
      docker_finished[id] = t;
    }
  }

  // ---- Docker is back ----
  outage.End();
  if (::testing::Test::HasFatalFailure()) return;
  const absl::Time restored = absl::Now();
  EXPECT_TRUE(WaitFor([&] { return Health(b, "berth.runtime") == HealthStatus::SERVING; },
                      absl::Seconds(30)));
  EXPECT_TRUE(WaitFor([&] { return Metric(b, "berth_runtime_up") == 1; }, absl::Seconds(5)));
  std::map<std::string, v1::Job> final_jobs;
  EXPECT_TRUE(WaitFor(
      [&] {
        for (const std::string& id : ids) {
          absl::StatusOr<v1::Job> j = reader->GetJob(id);
          if (!j.ok()) return false;
          final_jobs[id] = *j;
          if (j->state() != v1::JOB_STATE_SUCCEEDED && j->state() != v1::JOB_STATE_FAILED &&
              j->state() != v1::JOB_STATE_CANCELLED) {
            return false;
          }
        }
        return true;
      },
      absl::Seconds(120)))
      << b.Log();
  for (const std::string& id : ids) {
    const v1::Job& j = final_jobs[id];
    EXPECT_EQ(j.state(), v1::JOB_STATE_SUCCEEDED)
        << id << ": " << v1::JobState_Name(j.state()) << " " << j.message() << "\n"
        << b.Log();
    // out-a/b/c ended during the outage: Berth says their log may be
    // incomplete. With the daemon really stopped, Docker lost their "done"
    // (seen here with plain `docker run` too); what they wrote before the
    // outage is kept.
    const bool ended_in_outage = id != out_long && id != out_new;
    EXPECT_EQ(absl::StrContains(j.message(), "Docker was unreachable"), ended_in_outage)
        << id << ": " << j.message();
    if (auto it = docker_finished.find(id); it != docker_finished.end()) {
      // Recorded ~20 s late, stamped with Docker's own exit time.
      const absl::Time finished = absl::FromUnixSeconds(j.finished_at().seconds()) +
                                  absl::Nanoseconds(j.finished_at().nanos());
      EXPECT_LE(absl::AbsDuration(finished - it->second), absl::Seconds(1))
          << id << ": finished_at " << absl::FormatTime(finished) << ", docker's "
          << absl::FormatTime(it->second);
      ASSERT_GE(j.attempts_size(), 1) << id;
      EXPECT_EQ(j.attempts(j.attempts_size() - 1).finished_at().seconds(),
                j.finished_at().seconds())
          << id;
    }
    if (id == out_new) {
      EXPECT_TRUE(absl::StrContains(j.logs_tail(), "new")) << id << ": " << j.logs_tail();
    } else {
      EXPECT_TRUE(absl::StrContains(j.logs_tail(), "start")) << id << ": " << j.logs_tail();
      if (!ended_in_outage || !outage.DaemonStops()) {
        EXPECT_TRUE(absl::StrContains(j.logs_tail(), "done")) << id << ": " << j.logs_tail();
      }
    }
  }
  // The complete logs (a Docker restart loses none): the job that
  // ran across the outage and the one started after it have every line;
  // those that ended during it have every line written before it (with the
  // daemon really stopped Docker drops what they wrote after, see above).
  for (const std::string& id : ids) {
    absl::StatusOr<std::string> kept = KeptStdout(*op, id);
    ASSERT_TRUE(kept.ok()) << id << ": " << kept.status();
    if (id == out_new) {
      EXPECT_EQ(*kept, "new\n") << id;
      continue;
    }
    const bool ended_in_outage = id != out_long;
    if (ended_in_outage && outage.DaemonStops()) {
      EXPECT_TRUE(absl::StartsWith(*kept, before))
          << id << ": " << kept->size() << " bytes kept";
    } else {
      EXPECT_EQ(*kept, before + "done\n") << id << ": " << kept->size() << " bytes kept";
    }
  }
  std::cerr << "outage: " << reads << " reads during " << absl::FormatDuration(kOutage)
            << ", slowest round of 4 reads " << absl::FormatDuration(slowest)
            << "; all jobs done (out-long sleeps 90 s) "
            << absl::FormatDuration(absl::Now() - restored)
            << " after Docker came back\n";
}

TEST(BerthdOutageTest, ViaProxyReadsServedRuntimeUnhealthyNoJobFailed) {
  ProxyOutage outage;
  ASSERT_TRUE(outage.ok());
  RunOutageScenario(outage);
}

TEST(BerthdOutageTest, RealDockerdStoppedFor30s) {
  const char* allow = std::getenv("BERTH_ALLOW_DOCKERD_RESTART");
  if (std::getenv("BUILD_WORKSPACE_DIRECTORY") == nullptr &&
      (allow == nullptr || std::string(allow) != "1")) {
    GTEST_SKIP() << "stops the host's dockerd, which would die with this test under "
                    "`bazel test`: run `bazel run //tests:berthd_dockerd_restart_test`";
  }
  ASSERT_TRUE(DockerPing()) << "dockerd not reachable; run tools/setup.sh";
  ASSERT_TRUE(LiveRestore()) << "live-restore is off: containers would die with dockerd "
                                "(tools/setup.sh turns it on)";
  DockerdOutage outage;
  RunOutageScenario(outage);
}

}  // namespace
}  // namespace berth
