// berthctl against a live berthd (real gRPC, RocksDB and Docker): every
// subcommand's output (JSON parsed where convenient) and the exit codes and
// messages for bad input (docs/OPERATIONS.md).
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/berthd_process.h"
#include "tests/subprocess.h"
#include "planner/base/proto_json.h"

namespace berth {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
const char kBerthctl[] = "tools/berthctl";

std::string TmpDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

std::string Describe(const ProcessResult& r) {
  return absl::StrCat("exit ", r.exit_code, "\n--- stdout:\n", r.out, "\n--- stderr:\n", r.err);
}

// Job ids are container names ("berth-<id>"), global on the Docker host:
// unique per test process so that concurrent runs never collide (a random
// suffix: pids repeat across Bazel's sandboxes, which have their own pid
// namespaces).
std::string Id(absl::string_view name) {
  static const uint32_t run = absl::Uniform<uint32_t>(absl::BitGen(), 0, 1u << 30);
  return absl::StrCat(name, "-", run);
}

bool IsTerminal(v1::JobState s) {
  return s == v1::JOB_STATE_SUCCEEDED || s == v1::JOB_STATE_FAILED ||
         s == v1::JOB_STATE_CANCELLED || s == v1::JOB_STATE_REJECTED;
}

// Runs berthctl against `b` with the token of `role` (via the environment,
// as scripts do) and extra arguments.
class Ctl {
 public:
  explicit Ctl(const BerthdProcess& b) : b_(b) {}
  ProcessResult Run(Role role, std::vector<std::string> args,
                    std::map<std::string, std::string> env = {}) const {
    std::vector<std::string> argv = {kBerthctl, "--server", b_.target(), "--timeout", "20s"};
    argv.insert(argv.end(), args.begin(), args.end());
    env.emplace("BERTH_TOKEN", TokenFor(role));
    return RunProcess(argv, env, absl::Seconds(60));
  }
  template <typename M>
  M Json(Role role, std::vector<std::string> args) const {
    args.push_back("--json");
    ProcessResult r = Run(role, args);
    M m;
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    absl::Status s = ParseJsonMessage(r.out, "berthctl output", &m);
    EXPECT_TRUE(s.ok()) << s << "\n" << Describe(r);
    return m;
  }

 private:
  const BerthdProcess& b_;
};

std::string WriteSnapshot(const v1::Snapshot& s, const std::string& name) {
  std::string path = absl::StrCat(TmpDir(), "/", name);
  absl::StatusOr<std::string> json = ToJson(s);
  EXPECT_TRUE(json.ok());
  EXPECT_TRUE(WriteFileAtomically(path, *json).ok());
  return path;
}

std::vector<v1::Event> ParseEventLines(const std::string& out) {
  std::vector<v1::Event> events;
  for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
    v1::Event e;
    absl::Status s = ParseJsonMessage(line, "event line", &e);
    EXPECT_TRUE(s.ok()) << s << ": " << line;
    events.push_back(e);
  }
  return events;
}

uint64_t LastRevisionFromStderr(const std::string& err) {
  const std::string marker = "last revision ";
  size_t at = err.find(marker);
  if (at == std::string::npos) return 0;
  uint64_t rev = 0;
  std::string digits;
  for (size_t i = at + marker.size(); i < err.size() && isdigit(err[i]); ++i) digits += err[i];
  return absl::SimpleAtoi(digits, &rev) ? rev : 0;
}

TEST(BerthctlTest, PushWatchListGetExplainPlan) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> berthd = BerthdProcess::Start({});
  ASSERT_TRUE(berthd.ok()) << berthd.status();
  BerthdProcess& b = **berthd;
  Ctl ctl(b);

  v1::Snapshot snapshot;
  snapshot.set_generation(1);
  for (int i = 0; i < 3; ++i) {
    *snapshot.add_jobs() =
        BusyboxJob(Id(absl::StrCat("ctl-", i)), "ws1", 64 * kMiB, "echo hello-from-ctl; sleep 1");
  }
  std::string file = WriteSnapshot(snapshot, "gen1.json");

  // push --dry-run: the plan that would result, nothing changes.
  auto dry = ctl.Json<v1::DryRunResponse>(Role::kPusher, {"push", "--dry-run", file});
  EXPECT_EQ(dry.sync().added(), 3);
  EXPECT_EQ(dry.plan().decisions_size(), 3);
  EXPECT_EQ(ctl.Json<v1::ListJobsResponse>(Role::kReader, {"list"}).jobs_size(), 0);
  ProcessResult r = ctl.Run(Role::kPusher, {"push", file, "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "dry run of generation 1 (nothing changed): 3 added"))
      << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "resulting plan:")) << r.out;

  // push: applied; again: already applied.
  r = ctl.Run(Role::kPusher, {"push", file});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "generation 1 applied: 3 added")) << r.out;
  r = ctl.Run(Role::kPusher, {"push", file});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "already applied")) << r.out;

  // Wait until every job finished (through the API, with a deadline).
  std::unique_ptr<BerthClient> client = b.Client(Role::kReader);
  ASSERT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<v1::ListJobsResponse> l = client->ListJobs({});
        if (!l.ok() || l->jobs_size() != 3) return false;
        for (const v1::Job& j : l->jobs()) {
          if (!IsTerminal(j.state())) return false;
        }
        return true;
      },
      absl::Minutes(2)))
      << b.Log();

  // watch (no --follow): every event up to now, contiguous from 1; stderr
  // tells the last revision.
  r = ctl.Run(Role::kPusher, {"watch", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  std::vector<v1::Event> events = ParseEventLines(r.out);
  ASSERT_FALSE(events.empty());
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].revision(), i + 1);
  EXPECT_EQ(LastRevisionFromStderr(r.err), events.back().revision()) << r.err;
  int succeeded = 0;
  for (const v1::Event& e : events) {
    succeeded += e.type() == v1::EVENT_TYPE_JOB_STATE_CHANGED &&
                 e.state() == v1::JOB_STATE_SUCCEEDED;
  }
  EXPECT_EQ(succeeded, 3);
  const uint64_t last = events.back().revision();

  // Human lines, resumed from a revision: only the later events.
  r = ctl.Run(Role::kPusher, {"watch", "--from", absl::StrCat(last - 2)});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_TRUE(absl::StartsWith(lines[0], absl::StrCat(last - 1, "  "))) << lines[0];
  EXPECT_TRUE(absl::StartsWith(lines[1], absl::StrCat(last, "  "))) << lines[1];

  // --save-revision: a second run resumes where the first stopped.
  const std::string rev_file = TmpDir() + "/watch.rev";
  r = ctl.Run(Role::kPusher, {"watch", "--save-revision", rev_file, "--limit", "4"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(std::vector<std::string>(absl::StrSplit(r.out, '\n', absl::SkipEmpty())).size(), 4u);
  EXPECT_EQ(*ReadFileToString(rev_file), "4\n");
  r = ctl.Run(Role::kPusher, {"watch", "--save-revision", rev_file, "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  events = ParseEventLines(r.out);
  ASSERT_EQ(events.size(), last - 4);
  EXPECT_EQ(events.front().revision(), 5u);

  // watch --follow: live events of a new snapshot, stopped by --limit.
  v1::Snapshot gen2 = snapshot;
  gen2.set_generation(2);
  *gen2.add_jobs() = BusyboxJob(Id("ctl-live"), "ws2", 64 * kMiB, "echo live");
  std::string file2 = WriteSnapshot(gen2, "gen2.json");
  absl::StatusOr<std::unique_ptr<Subprocess>> follower = Subprocess::Start(
      {kBerthctl, "--server", b.target(), "watch", "--follow", "--from", absl::StrCat(last),
       "--json", "--limit", "5"},
      {{"BERTH_TOKEN", TokenFor(Role::kPusher)}});
  ASSERT_TRUE(follower.ok());
  r = ctl.Run(Role::kPusher, {"push", file2});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  r = (*follower)->Wait(absl::Minutes(2));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  events = ParseEventLines(r.out);
  ASSERT_EQ(events.size(), 5u) << r.out;
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].revision(), last + 1 + i);
  EXPECT_EQ(LastRevisionFromStderr(r.err), last + 5);

  // watch --follow stopped by SIGTERM: clean exit, last revision reported.
  follower = Subprocess::Start({kBerthctl, "--server", b.target(), "watch", "--follow"},
                               {{"BERTH_TOKEN", TokenFor(Role::kPusher)}});
  ASSERT_TRUE(follower.ok());
  ASSERT_TRUE(WaitFor([&] { return (*follower)->Stdout().find('\n') != std::string::npos; },
                      absl::Seconds(20)));
  (*follower)->Signal(SIGTERM);
  r = (*follower)->Wait(absl::Seconds(20));
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_GT(LastRevisionFromStderr(r.err), last) << r.err;

  // list: JSON (every page), filters, human table, paging.
  ASSERT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<v1::Job> j = client->GetJob(Id("ctl-live"));
        return j.ok() && IsTerminal(j->state());
      },
      absl::Minutes(2)));
  auto all = ctl.Json<v1::ListJobsResponse>(Role::kReader, {"list", "--all", "--page-size", "1"});
  ASSERT_EQ(all.jobs_size(), 4);
  EXPECT_EQ(all.jobs(0).spec().id(), Id("ctl-0"));
  EXPECT_TRUE(all.next_page_token().empty());
  auto ws2 = ctl.Json<v1::ListJobsResponse>(
      Role::kReader, {"list", "--workspace", "ws2", "--state", "succeeded", "--state", "failed"});
  ASSERT_EQ(ws2.jobs_size(), 1);
  EXPECT_EQ(ws2.jobs(0).spec().id(), Id("ctl-live"));
  EXPECT_EQ(ctl.Json<v1::ListJobsResponse>(Role::kReader, {"list", "--state", "queued"})
                .jobs_size(),
            0);
  r = ctl.Run(Role::kReader, {"list", "--pool", "default"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "JOB")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, Id("ctl-2"))) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "SUCCEEDED")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "64 MiB")) << r.out;
  r = ctl.Run(Role::kReader, {"list", "--page-size", "2"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "more jobs: add --all")) << r.out;
  EXPECT_FALSE(absl::StrContains(r.out, Id("ctl-live"))) << r.out;

  // get: human and JSON.
  r = ctl.Run(Role::kReader, {"get", Id("ctl-1")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "state:           SUCCEEDED")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "memory:          64 MiB")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "cpu:             0.1 cores")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "hello-from-ctl")) << r.out;
  auto job = ctl.Json<v1::Job>(Role::kReader, {"get", Id("ctl-1")});
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job.spec().workspace(), "ws1");

  // explain and plan: pause, then a queued job waits with reason PAUSED.
  r = ctl.Run(Role::kOperator, {"pause", "--reason", "ctl test"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  v1::Snapshot gen3 = gen2;
  gen3.set_generation(3);
  *gen3.add_jobs() = BusyboxJob(Id("ctl-waiting"), "ws2", 128 * kMiB, "echo waited");
  r = ctl.Run(Role::kPusher, {"push", WriteSnapshot(gen3, "gen3.json"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  auto explanation = ctl.Json<v1::Explanation>(Role::kReader, {"explain", Id("ctl-waiting")});
  EXPECT_EQ(explanation.state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(explanation.reason(), v1::PAUSED);
  EXPECT_EQ(explanation.queue_position(), 1);
  r = ctl.Run(Role::kReader, {"explain", Id("ctl-waiting")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "reason:          PAUSED")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "queue position:  1")) << r.out;
  r = ctl.Run(Role::kReader, {"explain", Id("ctl-0")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "state:           SUCCEEDED")) << r.out;

  auto plan = ctl.Json<v1::Plan>(Role::kReader, {"plan"});
  EXPECT_TRUE(plan.paused());
  EXPECT_EQ(plan.queued_count(), 1);
  ASSERT_EQ(plan.decisions_size(), 1);
  EXPECT_EQ(plan.decisions(0).job_id(), Id("ctl-waiting"));
  EXPECT_EQ(plan.budgets().memory_bytes(), 1024 * kMiB);
  r = ctl.Run(Role::kReader, {"plan", "--limit", "5"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "admission:       PAUSED")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "of 1 GiB")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "of 2 cores")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, Id("ctl-waiting"))) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "PAUSED")) << r.out;
  r = ctl.Run(Role::kOperator, {"resume"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "admission:       open")) << r.out;
}

TEST(BerthctlTest, OperatorCommands) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> berthd = BerthdProcess::Start({});
  ASSERT_TRUE(berthd.ok()) << berthd.status();
  BerthdProcess& b = **berthd;
  Ctl ctl(b);

  // budgets get.
  ProcessResult r = ctl.Run(Role::kReader, {"budgets", "get"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "memory:          1 GiB")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "cpu:             2 cores")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "max workers:     8")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "pool max:        database=2")) << r.out;

  // budgets set: only the given fields change; pools are merged.
  r = ctl.Run(Role::kOperator, {"budgets", "set", "--memory", "2Gi", "--cpus", "1.5",
                                "--pool-max", "gpu=1", "--workspace-max", "3"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "memory:          2 GiB")) << r.out;
  auto budgets = ctl.Json<v1::Budgets>(Role::kReader, {"budgets", "get"});
  EXPECT_EQ(budgets.memory_bytes(), 2048 * kMiB);
  EXPECT_EQ(budgets.cpu_millis(), 1500);
  EXPECT_EQ(budgets.max_workers(), 8);
  EXPECT_EQ(budgets.workspace_max_workers(), 3);
  ASSERT_EQ(budgets.pools().count("database"), 1u);
  EXPECT_EQ(budgets.pools().at("database").max_workers(), 2);
  ASSERT_EQ(budgets.pools().count("gpu"), 1u);
  EXPECT_EQ(budgets.pools().at("gpu").max_workers(), 1);
  budgets = ctl.Json<v1::Budgets>(Role::kOperator,
                                  {"budgets", "set", "--max-workers", "24", "--pool-max",
                                   "database=4"});
  EXPECT_EQ(budgets.max_workers(), 24);
  EXPECT_EQ(budgets.memory_bytes(), 2048 * kMiB);
  EXPECT_EQ(budgets.pools().at("database").max_workers(), 4);
  EXPECT_EQ(budgets.pools().at("gpu").max_workers(), 1);
  // Bad values: usage errors before any call; server-side refusal: 1.
  r = ctl.Run(Role::kOperator, {"budgets", "set", "--memory", "256Gx"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.err, "--memory")) << r.err;
  r = ctl.Run(Role::kOperator, {"budgets", "set"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.err, "nothing to set")) << r.err;
  r = ctl.Run(Role::kOperator, {"budgets", "set", "--memory", "0"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.err, "INVALID_ARGUMENT")) << r.err;
  r = ctl.Run(Role::kOperator, {"budgets", "frobnicate"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);

  // pause / resume.
  auto state = ctl.Json<v1::ControlState>(Role::kOperator, {"pause", "--reason", "upgrade"});
  EXPECT_TRUE(state.paused());
  EXPECT_EQ(state.pause_reason(), "upgrade");
  r = ctl.Run(Role::kOperator, {"pause"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "admission:       PAUSED")) << r.out;
  state = ctl.Json<v1::ControlState>(Role::kOperator, {"resume"});
  EXPECT_FALSE(state.paused());

  // maintenance POOL on|off: with a running database job, which is requeued.
  v1::Snapshot s;
  s.set_generation(1);
  v1::JobSpec db = BusyboxJob(Id("ctl-db"), "ws1", 64 * kMiB, "sleep 60");
  db.set_pool("database");
  *s.add_jobs() = db;
  *s.add_jobs() = BusyboxJob(Id("ctl-default"), "ws1", 64 * kMiB, "sleep 60");
  r = ctl.Run(Role::kPusher, {"push", WriteSnapshot(s, "ops.json")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  std::unique_ptr<BerthClient> client = b.Client(Role::kReader);
  auto in_state = [&](const std::string& id, v1::JobState state) {
    absl::StatusOr<v1::Job> j = client->GetJob(id);
    return j.ok() && j->state() == state;
  };
  auto running = [&](const std::string& id) { return in_state(id, v1::JOB_STATE_RUNNING); };
  ASSERT_TRUE(WaitFor([&] { return running(Id("ctl-db")) && running(Id("ctl-default")); },
                      absl::Minutes(1)))
      << b.Log();
  auto maintenance = ctl.Json<v1::SetPoolMaintenanceResponse>(
      Role::kOperator, {"maintenance", "database", "on", "--reason", "db upgrade"});
  ASSERT_EQ(maintenance.requeued_job_ids_size(), 1);
  EXPECT_EQ(maintenance.requeued_job_ids(0), Id("ctl-db"));
  ASSERT_EQ(maintenance.state().pools_in_maintenance_size(), 1);
  // The requeue is asynchronous: the reconciler stops the container, then
  // the job is QUEUED again.
  ASSERT_TRUE(WaitFor([&] { return in_state(Id("ctl-db"), v1::JOB_STATE_QUEUED); },
                      absl::Seconds(30)))
      << b.Log();
  EXPECT_EQ(maintenance.state().maintenance_reasons().at("database"), "db upgrade");
  auto explanation = ctl.Json<v1::Explanation>(Role::kReader, {"explain", Id("ctl-db")});
  EXPECT_EQ(explanation.reason(), v1::POOL_IN_MAINTENANCE);
  EXPECT_TRUE(absl::StartsWith(explanation.summary(),
                               "Pool database is in maintenance: db upgrade."))
      << explanation.summary();
  // The text forms show the reason too.
  r = ctl.Run(Role::kReader, {"explain", Id("ctl-db")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "Pool database is in maintenance: db upgrade.")) << r.out;
  r = ctl.Run(Role::kReader, {"plan"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "pools in maintenance: database (db upgrade)")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "pool 'database' in maintenance: db upgrade")) << r.out;
  // A new reason replaces the old one.
  auto again = ctl.Json<v1::SetPoolMaintenanceResponse>(
      Role::kOperator, {"maintenance", "database", "on", "--reason", "schema migration"});
  EXPECT_EQ(again.state().maintenance_reasons().at("database"), "schema migration");
  r = ctl.Run(Role::kOperator, {"maintenance", "database", "off"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "maintenance:     -")) << r.out;
  r = ctl.Run(Role::kOperator, {"maintenance", "database", "maybe"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  r = ctl.Run(Role::kOperator, {"maintenance", "no-such-pool", "on"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.err, "NOT_FOUND")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "hint:")) << r.err;

  // drain: requeues everything running and pauses admission.
  ASSERT_TRUE(WaitFor([&] { return running(Id("ctl-db")) && running(Id("ctl-default")); },
                      absl::Minutes(1)))
      << b.Log();
  r = ctl.Run(Role::kOperator, {"drain", "--reason", "reboot"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "admission:       PAUSED (reboot)")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "requeued:        2 (")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, Id("ctl-db"))) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, Id("ctl-default"))) << r.out;
  ASSERT_TRUE(WaitFor(
      [&] {
        return in_state(Id("ctl-db"), v1::JOB_STATE_QUEUED) &&
               in_state(Id("ctl-default"), v1::JOB_STATE_QUEUED);
      },
      absl::Seconds(30)))
      << b.Log();
  auto queued = ctl.Json<v1::ListJobsResponse>(Role::kReader, {"list", "--state", "queued"});
  EXPECT_EQ(queued.jobs_size(), 2);
  state = ctl.Json<v1::ControlState>(Role::kOperator, {"resume"});
  EXPECT_FALSE(state.paused());
  // Stop the sleepers quickly: an empty snapshot cancels them.
  v1::Snapshot empty;
  empty.set_generation(2);
  empty.set_allow_mass_cancel(true);
  r = ctl.Run(Role::kPusher, {"push", WriteSnapshot(empty, "empty.json")});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
}

TEST(BerthctlTest, BadInputAndExitCodes) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> berthd = BerthdProcess::Start({});
  ASSERT_TRUE(berthd.ok()) << berthd.status();
  BerthdProcess& b = **berthd;
  Ctl ctl(b);

  // Unknown job: 1, NOT_FOUND, and what to do.
  for (const char* command : {"get", "explain"}) {
    ProcessResult r = ctl.Run(Role::kReader, {command, "no-such-job"});
    EXPECT_EQ(r.exit_code, 1) << command << ": " << Describe(r);
    EXPECT_TRUE(absl::StrContains(r.err, "NOT_FOUND")) << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, "no-such-job")) << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, "berthctl list")) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }

  // Malformed file: 2, naming the file, the job and the field; nothing sent.
  const std::string bad = TmpDir() + "/bad.json";
  ASSERT_TRUE(WriteFileAtomically(bad, R"({"generation": 1, "jobs": [
      {"id": "ok-1", "workspace": "w", "image": "berth-test/busybox:1",
       "resources": {"cpuMillis": 100, "memoryBytes": 1000000}},
      {"id": "broken-2", "workspace": "w", "image": "berth-test/busybox:1",
       "resources": {"cpuMillis": 100, "memoryBytes": "lots"}}]})")
                  .ok());
  ProcessResult r = ctl.Run(Role::kPusher, {"push", bad});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.err, bad)) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "broken-2")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "memory")) << r.err;
  ASSERT_TRUE(WriteFileAtomically(bad, "{\"generation\": 1, \"jobz\": []}").ok());
  r = ctl.Run(Role::kPusher, {"push", bad});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.err, "jobz")) << r.err;
  r = ctl.Run(Role::kPusher, {"push", TmpDir() + "/missing.json"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.err, "missing.json")) << r.err;
  EXPECT_EQ(ctl.Json<v1::ListJobsResponse>(Role::kReader, {"list"}).jobs_size(), 0);

  // Wrong token: 1, UNAUTHENTICATED, with a hint.
  r = ctl.Run(Role::kReader, {"plan", "--token", "not-a-valid-token-at-all"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.err, "UNAUTHENTICATED")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "hint:")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "--token")) << r.err;
  // Right token, wrong role: 1, PERMISSION_DENIED, with a hint.
  r = ctl.Run(Role::kReader, {"pause"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.err, "PERMISSION_DENIED")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "operator token")) << r.err;
  // Token from a file.
  const std::string token_file = TmpDir() + "/token";
  ASSERT_TRUE(WriteFileAtomically(token_file, TokenFor(Role::kReader) + "\n").ok());
  r = ctl.Run(Role::kReader, {"budgets", "get", "--token-file", token_file},
              {{"BERTH_TOKEN", "\x01unset"}});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  // No token at all: 2, and what to do.
  r = RunProcess({kBerthctl, "--server", b.target(), "plan"}, {{"BERTH_TOKEN", "\x01unset"}});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.err, "no token: pass --token")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "BERTH_TOKEN")) << r.err;
  // Server from the environment.
  r = RunProcess({kBerthctl, "budgets", "get"},
                 {{"BERTH_TOKEN", TokenFor(Role::kReader)}, {"BERTH_SERVER", b.target()}});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);

  // Unreachable: 3, quickly.
  const absl::Time start = absl::Now();
  r = RunProcess({kBerthctl, "--server", absl::StrCat("127.0.0.1:", PickFreePort()), "plan"},
                 {{"BERTH_TOKEN", TokenFor(Role::kReader)}});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.err, "cannot connect to berthd")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "BERTH_SERVER")) << r.err;
  EXPECT_LT(absl::Now() - start, absl::Seconds(15));
  // Local input is checked before connecting: a malformed file is 2 even then.
  r = RunProcess({kBerthctl, "--server", absl::StrCat("127.0.0.1:", PickFreePort()), "push", bad},
                 {{"BERTH_TOKEN", TokenFor(Role::kPusher)}});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);

  // Usage errors: 2.
  const std::vector<std::vector<std::string>> usage = {
      {"frobnicate"},
      {"plan", "--frob"},
      {"plan", "--limit", "many"},
      {"get"},
      {"get", "a", "b"},
      {"list", "--state", "sleeping"},
      {"watch", "--from", "-1"},
      {"plan", "--timeout", "soon"},
      {},
  };
  for (const auto& args : usage) {
    r = ctl.Run(Role::kReader, args);
    EXPECT_EQ(r.exit_code, 2) << absl::StrJoin(args, " ") << ": " << Describe(r);
    EXPECT_FALSE(r.err.empty());
  }
  r = RunProcess({kBerthctl, "help"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "maintenance POOL on|off")) << r.out;

  // A server-side refusal of a well-formed snapshot: 1 with the server's reason.
  v1::Snapshot s;
  s.set_generation(5);
  ASSERT_EQ(ctl.Run(Role::kPusher, {"push", WriteSnapshot(s, "g5.json")}).exit_code, 0);
  s.set_generation(4);
  r = ctl.Run(Role::kPusher, {"push", WriteSnapshot(s, "g4.json")});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.err, "FAILED_PRECONDITION")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "--generation")) << r.err;
  // Watch from beyond the current revision: the server says INVALID_ARGUMENT.
  r = ctl.Run(Role::kPusher, {"watch", "--follow", "--from", "1000000"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.err, "INVALID_ARGUMENT")) << r.err;
}

}  // namespace
}  // namespace berth
