// End to end: the real berthd binary, real RocksDB in a temp dir, real
// Docker, real gRPC on 127.0.0.1.
#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "executor/store/store.h"  // IsTerminal
#include "tests/berthd_process.h"

namespace berth {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

TEST(BerthdEndToEnd, FiftyJobsNeverOvercommitMemoryAndEveryTransitionIsReported) {
  BerthdProcessOptions options;
  options.memory = "512Mi";
  options.cpus = "2";
  options.max_workers = 10;
  absl::StatusOr<std::unique_ptr<BerthdProcess>> berthd = BerthdProcess::Start(options);
  ASSERT_TRUE(berthd.ok()) << berthd.status();
  BerthdProcess& b = **berthd;

  v1::Snapshot snapshot;
  snapshot.set_generation(1);
  const std::string prefix = UniqueJobPrefix();
  std::map<std::string, int64_t> memory;
  int64_t total = 0;
  for (int i = 0; i < 50; ++i) {
    int64_t mem = (64 + 32 * (i % 4)) * kMiB;  // 64..160 MiB
    std::string id = absl::StrCat(prefix, "e2e-", i);
    *snapshot.add_jobs() =
        BusyboxJob(id, absl::StrCat("ws", i % 3), mem, "echo start; sleep 1; echo done");
    memory[id] = mem;
    total += mem;
  }
  ASSERT_GT(total, 512 * kMiB * 5) << "the workload must not fit at once";

  // Sampler: what actually runs in Docker, every 50 ms.
  DockerRuntimeOptions ro;
  ro.instance = b.instance();
  ro.image_allow_list = {"*"};
  std::unique_ptr<DockerRuntime> docker = *DockerRuntime::Create(ro);
  std::atomic<bool> done{false};
  std::atomic<int64_t> peak{0};
  std::atomic<int> samples{0};
  std::atomic<int> over_budget{0};
  std::thread sampler([&] {
    while (!done) {
      absl::StatusOr<ContainerList> list = docker->List();
      if (list.ok()) {
        int64_t sum = 0;
        for (const auto& [job, c] : *list) {
          if (c.state == ContainerState::kRunning || c.state == ContainerState::kCreated) {
            sum += memory.count(job) ? memory[job] : 0;
          }
        }
        if (sum > 512 * kMiB) ++over_budget;
        int64_t p = peak.load();
        while (sum > p && !peak.compare_exchange_weak(p, sum)) {
        }
        ++samples;
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
  });

  // The job-server's view: the event stream from revision 0.
  std::map<std::string, std::vector<v1::JobState>> transitions;
  std::vector<uint64_t> revisions;
  std::set<std::string> finished;
  std::thread watcher([&] {
    std::unique_ptr<BerthClient> watch = b.Client(Role::kPusher);
    absl::Status s = watch->Watch(
        0,
        [&](const v1::Event& e) {
          revisions.push_back(e.revision());
          if (e.type() == v1::EVENT_TYPE_JOB_STATE_CHANGED) {
            transitions[e.job_id()].push_back(e.state());
            if (IsTerminal(e.state())) finished.insert(e.job_id());
          }
          return finished.size() < 50;
        },
        absl::Now() + absl::Minutes(3));
    EXPECT_TRUE(s.ok()) << s;
  });

  std::unique_ptr<BerthClient> pusher = b.Client(Role::kPusher);
  absl::StatusOr<v1::SyncSnapshotResponse> r = pusher->Sync(snapshot);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->added(), 50);
  watcher.join();
  done = true;
  sampler.join();

  EXPECT_EQ(over_budget.load(), 0) << "peak " << peak.load() / kMiB << " MiB";
  EXPECT_LE(peak.load(), 512 * kMiB);
  EXPECT_GT(peak.load(), 256 * kMiB) << "admission should use the budget";
  EXPECT_GT(samples.load(), 20);
  ASSERT_EQ(finished.size(), 50u) << b.Log();
  for (size_t i = 1; i < revisions.size(); ++i) {
    ASSERT_EQ(revisions[i], revisions[i - 1] + 1) << "gap in revisions";
  }
  const std::vector<v1::JobState> lifecycle = {v1::JOB_STATE_QUEUED, v1::JOB_STATE_ADMITTED,
                                               v1::JOB_STATE_RUNNING, v1::JOB_STATE_SUCCEEDED};
  for (const auto& [id, states] : transitions) {
    EXPECT_EQ(states, lifecycle) << id;
    absl::StatusOr<v1::Job> job = pusher->GetJob(id);
    ASSERT_TRUE(job.ok());
    EXPECT_EQ(job->state(), v1::JOB_STATE_SUCCEEDED) << id << ": " << job->message();
    EXPECT_TRUE(absl::StrContains(job->logs_tail(), "done")) << id;
  }
  absl::StatusOr<std::string> metrics = b.Metrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_TRUE(absl::StrContains(*metrics, "berth_reconcile_actions_total{action=\"started\"}"))
      << *metrics;
  EXPECT_TRUE(absl::StrContains(*metrics, "berth_rpcs_total{method=\"SyncSnapshot\",code=\"OK\"} 1"));
  EXPECT_TRUE(absl::StrContains(*metrics, "berth_plan_seconds_count"));
}

// ---- Auth: every role on every RPC ----

using RpcCall = std::function<absl::Status(BerthClient&)>;

std::map<std::string, RpcCall> EveryRpc() {
  static std::atomic<int> generation{100};
  return {
      {"SyncSnapshot",
       [](BerthClient& c) {
         v1::Snapshot s;
         s.set_generation(++generation);
         s.set_allow_mass_cancel(true);
         return c.Sync(s).status();
       }},
      {"DryRun",
       [](BerthClient& c) {
         v1::Snapshot s;
         s.set_generation(100000);
         s.set_allow_mass_cancel(true);
         return c.DryRun(s).status();
       }},
      {"WatchEvents",
       [](BerthClient& c) {
         absl::Status s = c.Watch(0, [](const v1::Event&) { return false; },
                                  absl::Now() + absl::Milliseconds(500));
         return s.code() == absl::StatusCode::kDeadlineExceeded ? absl::OkStatus() : s;
       }},
      {"GetPlan", [](BerthClient& c) { return c.GetPlan().status(); }},
      {"ListJobs", [](BerthClient& c) { return c.ListJobs({}).status(); }},
      {"GetJob", [](BerthClient& c) { return c.GetJob("no-such-job").status(); }},
      {"ExplainJob", [](BerthClient& c) { return c.ExplainJob("no-such-job").status(); }},
      {"GetBudgets", [](BerthClient& c) { return c.GetBudgets().status(); }},
      {"SetBudgets",
       [](BerthClient& c) {
         v1::SetBudgetsRequest r;
         r.mutable_budgets()->set_max_workers(8);
         r.mutable_update_mask()->add_paths("max_workers");
         return c.SetBudgets(r).status();
       }},
      {"Pause", [](BerthClient& c) { return c.Pause("auth test").status(); }},
      {"Resume", [](BerthClient& c) { return c.Resume().status(); }},
      {"SetPoolMaintenance",
       [](BerthClient& c) {
         v1::SetPoolMaintenanceRequest r;
         r.set_pool("database");
         r.set_in_maintenance(false);
         return c.SetPoolMaintenance(r).status();
       }},
      {"Drain", [](BerthClient& c) { return c.Drain("auth test").status(); }},
      {"RightSize", [](BerthClient& c) { return c.RightSize({}).status(); }},
      // No --backup_root here: an allowed caller gets FAILED_PRECONDITION.
      {"Backup", [](BerthClient& c) { return c.Backup("auth-test").status(); }},
      {"ReadJobLog",
       [](BerthClient& c) {
         grpc::ClientContext context;
         c.Prepare(&context);
         v1::ReadJobLogRequest r;
         r.set_job_id("no-such-job");
         v1::JobLogChunk chunk;
         auto reader = c.stub().ReadJobLog(&context, r);
         while (reader->Read(&chunk)) {
         }
         const grpc::Status s = reader->Finish();
         return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
       }},
  };
}

TEST(BerthdEndToEnd, EveryRoleOnEveryRpc) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> berthd = BerthdProcess::Start({});
  ASSERT_TRUE(berthd.ok()) << berthd.status();
  BerthdProcess& b = **berthd;
  const std::set<std::string> reads = {"GetPlan", "ListJobs", "GetJob", "ExplainJob",
                                       "GetBudgets", "WatchEvents", "RightSize"};
  const std::set<std::string> pusher = {"SyncSnapshot", "DryRun"};
  std::map<std::string, RpcCall> rpcs = EveryRpc();
  ASSERT_EQ(rpcs.size(), static_cast<size_t>(google::protobuf::DescriptorPool::generated_pool()
                                                 ->FindServiceByName("berth.v1.Executor")
                                                 ->method_count()));
  for (const auto& [name, call] : rpcs) {
    for (Role role : {Role::kPusher, Role::kOperator, Role::kReader}) {
      bool allowed = reads.count(name) > 0 ||
                     (role == Role::kPusher && pusher.count(name) > 0) ||
                     (role == Role::kOperator && reads.count(name) == 0 &&
                      pusher.count(name) == 0);
      absl::Status s = call(*b.Client(role));
      if (allowed) {
        EXPECT_NE(s.code(), absl::StatusCode::kPermissionDenied) << name << " " << RoleName(role) << s;
        EXPECT_NE(s.code(), absl::StatusCode::kUnauthenticated) << name << " " << RoleName(role) << s;
      } else {
        EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << name << " " << RoleName(role) << s;
      }
    }
    EXPECT_EQ(call(*b.ClientWithToken("")).code(), absl::StatusCode::kUnauthenticated) << name;
    EXPECT_EQ(call(*b.ClientWithToken("not-a-valid-token-at-all")).code(),
              absl::StatusCode::kUnauthenticated)
        << name;
  }
  // The log names who was refused; numbers are JSON numbers.
  const std::string log = b.Log();
  EXPECT_TRUE(absl::StrContains(log, "\"method\":\"Drain\",\"principal\":\"test-reader\""))
      << log;
  EXPECT_FALSE(absl::StrContains(log, "\"principal\":\"\"")) << log;
  EXPECT_TRUE(absl::StrContains(log, "\"msg\":\"snapshot applied\",\"principal\":\"test-pusher\","
                                     "\"generation\":101,")) << log;
}

// ---- Malformed syncs: each refused precisely; state unchanged ----

v1::SyncSnapshotRequest Header(uint64_t generation, uint64_t expected) {
  v1::SyncSnapshotRequest r;
  r.mutable_header()->set_generation(generation);
  r.mutable_header()->set_expected_job_count(expected);
  return r;
}

v1::SyncSnapshotRequest Batch(std::vector<v1::JobSpec> jobs) {
  v1::SyncSnapshotRequest r;
  for (v1::JobSpec& j : jobs) *r.mutable_batch()->add_jobs() = std::move(j);
  return r;
}

v1::SyncSnapshotRequest End(uint64_t count) {
  v1::SyncSnapshotRequest r;
  r.mutable_end()->set_job_count(count);
  return r;
}

v1::JobSpec Good(const std::string& id) { return BusyboxJob(id, "ws", 64 * kMiB, "true"); }

struct MalformedCase {
  std::string name;
  std::vector<v1::SyncSnapshotRequest> stream;
  absl::StatusCode code;  // kOk: accepted with a per-job rejection
  std::string mentions;   // in the status message, or in the rejection
  v1::RejectReason reason = v1::REJECT_REASON_UNSPECIFIED;
};

// Wraps `bad` into a valid stream of generation `g` with the base jobs.
std::vector<v1::SyncSnapshotRequest> WithBase(uint64_t g, v1::JobSpec bad) {
  return {Header(g, 3), Batch({Good("base-1"), Good("base-2"), std::move(bad)}), End(3)};
}

TEST(BerthdEndToEnd, MalformedSyncsAreRefusedPreciselyAndChangeNothing) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> berthd = BerthdProcess::Start({});
  ASSERT_TRUE(berthd.ok()) << berthd.status();
  BerthdProcess& b = **berthd;
  std::unique_ptr<BerthClient> pusher = b.Client(Role::kPusher);
  ASSERT_TRUE(b.Client(Role::kOperator)->Pause("keep the state still").ok());
  ASSERT_TRUE(pusher->SyncRaw({Header(10, 2), Batch({Good("base-1"), Good("base-2")}), End(2)}).ok());

  auto job = [](const std::string& id, auto mutate) {
    v1::JobSpec j = Good(id);
    mutate(&j);
    return j;
  };
  std::string huge(17 << 20, 'x');
  uint64_t g = 10;
  std::vector<MalformedCase> cases = {
      {"no header", {Batch({Good("a")}), End(1)}, absl::StatusCode::kInvalidArgument, "before the header"},
      {"empty message", {v1::SyncSnapshotRequest()}, absl::StatusCode::kInvalidArgument, "none of header"},
      {"second header", {Header(11, 0), Header(12, 0)}, absl::StatusCode::kInvalidArgument, "second header"},
      {"generation zero", {Header(0, 0), End(0)}, absl::StatusCode::kInvalidArgument, "generation"},
      {"stale generation", {Header(9, 0), End(0)}, absl::StatusCode::kFailedPrecondition, "older than"},
      {"count mismatch", {Header(11, 2), Batch({Good("a"), Good("b")}), End(3)}, absl::StatusCode::kInvalidArgument, "end.job_count: 3"},
      {"fewer than announced", {Header(11, 3), Batch({Good("a")}), End(1)}, absl::StatusCode::kInvalidArgument, "header.expected_job_count: 3 but 1 jobs were received"},
      {"more than announced", {Header(11, 1), Batch({Good("a"), Good("b")})}, absl::StatusCode::kInvalidArgument, "expected_job_count"},
      {"duplicate id", {Header(11, 2), Batch({Good("a"), Good("a")}), End(2)}, absl::StatusCode::kInvalidArgument, "repeats"},
      {"batch after end", {Header(11, 0), End(0), Batch({Good("a")})}, absl::StatusCode::kInvalidArgument, "after the end"},
      {"end twice", {Header(11, 0), End(0), End(0)}, absl::StatusCode::kInvalidArgument, "twice"},
      {"truncated", {Header(11, 2), Batch({Good("a")})}, absl::StatusCode::kInvalidArgument, "truncated"},
      {"oversized message", {Header(11, 1), Batch({job("big", [&](v1::JobSpec* j) { j->set_action(huge); })}), End(1)},
       absl::StatusCode::kInvalidArgument, "the maximum is 16 MiB"},  // gRPC's own answer was RESOURCE_EXHAUSTED
      {"invalid id characters", WithBase(++g, job("bad/id", [](v1::JobSpec*) {})), absl::StatusCode::kOk, "id must be", v1::REJECT_REASON_INVALID_ID},
      {"negative memory", WithBase(++g, job("neg", [](v1::JobSpec* j) { j->mutable_resources()->set_memory_bytes(-1); })), absl::StatusCode::kOk, "memory_bytes", v1::REJECT_REASON_INVALID_RESOURCES},
      {"zero cpu", WithBase(++g, job("zcpu", [](v1::JobSpec* j) { j->mutable_resources()->set_cpu_millis(0); })), absl::StatusCode::kOk, "cpu_millis", v1::REJECT_REASON_INVALID_RESOURCES},
      {"unknown pool", WithBase(++g, job("gpu", [](v1::JobSpec* j) { j->set_pool("gpu"); })), absl::StatusCode::kOk, "gpu", v1::REJECT_REASON_UNKNOWN_POOL},
      {"image not allowed", WithBase(++g, job("evil", [](v1::JobSpec* j) { j->set_image("evil:latest"); })), absl::StatusCode::kOk, "evil:latest", v1::REJECT_REASON_IMAGE_NOT_ALLOWED},
      {"never fits", WithBase(++g, job("huge", [](v1::JobSpec* j) { j->mutable_resources()->set_memory_bytes(int64_t{1} << 40); })), absl::StatusCode::kOk, "whole budget", v1::REJECT_REASON_NEVER_FITS},
      {"self dependency", WithBase(++g, job("self", [](v1::JobSpec* j) { j->add_depends_on("self"); })), absl::StatusCode::kOk, "itself", v1::REJECT_REASON_DEPENDENCY_CYCLE},
      {"unknown dependency", WithBase(++g, job("orphan", [](v1::JobSpec* j) { j->add_depends_on("ghost"); })), absl::StatusCode::kOk, "ghost", v1::REJECT_REASON_UNKNOWN_DEPENDENCY},
      {"bad env key", WithBase(++g, job("env", [](v1::JobSpec* j) { (*j->mutable_env())["1BAD"] = "x"; })), absl::StatusCode::kOk, "1BAD", v1::REJECT_REASON_INVALID_FIELD},
      {"workspace path", WithBase(++g, job("ws", [](v1::JobSpec* j) { j->set_workspace("../../etc"); })), absl::StatusCode::kOk, "workspace", v1::REJECT_REASON_INVALID_FIELD},
      {"negative max_duration", WithBase(++g, job("maxd", [](v1::JobSpec* j) { j->mutable_max_duration()->set_seconds(-5); })), absl::StatusCode::kOk, "max_duration", v1::REJECT_REASON_INVALID_FIELD},
  };
  // A cycle between two new jobs.
  v1::JobSpec cyc_a = job("cyc-a", [](v1::JobSpec* j) { j->add_depends_on("cyc-b"); });
  v1::JobSpec cyc_b = job("cyc-b", [](v1::JobSpec* j) { j->add_depends_on("cyc-a"); });
  cases.push_back({"dependency cycle",
                   {Header(++g, 4), Batch({Good("base-1"), Good("base-2"), cyc_a, cyc_b}), End(4)},
                   absl::StatusCode::kOk, "cycle", v1::REJECT_REASON_DEPENDENCY_CYCLE});
  ASSERT_GE(cases.size(), 20u);  // the mass-cancel guard has its own test below

  for (const MalformedCase& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<v1::Plan> before = pusher->GetPlan();
    ASSERT_TRUE(before.ok());
    absl::StatusOr<v1::SyncSnapshotResponse> r = pusher->SyncRaw(c.stream);
    absl::StatusOr<v1::Plan> after = pusher->GetPlan();
    ASSERT_TRUE(after.ok());
    if (c.code != absl::StatusCode::kOk) {
      EXPECT_EQ(r.status().code(), c.code) << r.status();
      EXPECT_TRUE(absl::StrContains(r.status().message(), c.mentions)) << r.status();
      EXPECT_EQ(after->revision(), before->revision()) << "state changed";
      continue;
    }
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_GE(r->rejections_size(), 1);
    bool found = false;
    for (const v1::JobRejection& rej : r->rejections()) {
      if (rej.reason() == c.reason && absl::StrContains(rej.message(), c.mentions)) found = true;
    }
    EXPECT_TRUE(found) << r->DebugString();
    // Only the offending jobs changed: the base jobs are still queued.
    EXPECT_EQ(r->unchanged(), 2);
    EXPECT_EQ(r->added(), 0);
    EXPECT_EQ(after->queued_count(), 2);
  }
}

TEST(BerthdEndToEnd, MassCancelGuard) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> berthd = BerthdProcess::Start({});
  ASSERT_TRUE(berthd.ok()) << berthd.status();
  BerthdProcess& b = **berthd;
  std::unique_ptr<BerthClient> pusher = b.Client(Role::kPusher);
  v1::Snapshot s;
  s.set_generation(1);
  const std::string prefix = UniqueJobPrefix();
  for (int i = 0; i < 3; ++i) {
    *s.add_jobs() = BusyboxJob(absl::StrCat(prefix, "long-", i), "ws", 32 * kMiB, "sleep 60");
  }
  ASSERT_TRUE(pusher->Sync(s).ok());
  // Wait until they run.
  absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline) {
    v1::ListJobsRequest r;
    r.add_states(v1::JOB_STATE_RUNNING);
    absl::StatusOr<v1::ListJobsResponse> running = pusher->ListJobs(r);
    if (running.ok() && running->jobs_size() == 3) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  v1::Snapshot empty;
  empty.set_generation(2);
  absl::StatusOr<v1::SyncSnapshotResponse> refused = pusher->Sync(empty);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
  EXPECT_EQ(pusher->GetJob(prefix + "long-0")->state(), v1::JOB_STATE_RUNNING);
  empty.set_allow_mass_cancel(true);
  absl::StatusOr<v1::SyncSnapshotResponse> ok = pusher->Sync(empty);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->cancelled(), 3);
  deadline = absl::Now() + absl::Seconds(30);
  v1::JobState state = v1::JOB_STATE_UNSPECIFIED;
  while (absl::Now() < deadline) {
    state = pusher->GetJob(prefix + "long-0")->state();
    if (state == v1::JOB_STATE_CANCELLED) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_EQ(state, v1::JOB_STATE_CANCELLED) << b.Log();
}

}  // namespace
}  // namespace berth
