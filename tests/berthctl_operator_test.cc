// berthctl's operator commands against a live berthd (real gRPC, RocksDB and
// Docker), and the exit codes and messages for bad input
// (docs/api-cookbook.md). A job's life through push/watch/list/get is in
// berthctl_test.cc.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/berthctl_util.h"
#include "tests/berthd_process.h"
#include "tools/base/subprocess.h"

namespace berth {
namespace {

using testing::Ctl;
using testing::Describe;
using testing::Id;
using testing::kBerthctl;
using testing::kMiB;
using testing::WriteSnapshot;

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
  EXPECT_FALSE(absl::StrContains(r.out, "requeued")) << r.out;
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
  // Watch from beyond the current revision: revisions are never reused, so
  // the server says FAILED_PRECONDITION.
  r = ctl.Run(Role::kPusher, {"watch", "--follow", "--from", "1000000"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.err, "FAILED_PRECONDITION")) << r.err;
}

}  // namespace
}  // namespace berth
