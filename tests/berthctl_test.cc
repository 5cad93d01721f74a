// berthctl against a live berthd (real gRPC, RocksDB and Docker): a job's
// life through push, watch, list, get, explain and plan (JSON parsed where
// convenient). The operator commands and bad input are in
// berthctl_operator_test.cc (docs/api-cookbook.md).
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
#include "tests/berthctl_util.h"
#include "tests/berthd_process.h"
#include "tools/base/subprocess.h"
#include "planner/base/proto_json.h"

namespace berth {
namespace {

using testing::Ctl;
using testing::Describe;
using testing::Id;
using testing::IsTerminal;
using testing::kBerthctl;
using testing::kMiB;
using testing::WriteSnapshot;

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
  // The revision and the history epoch it belongs to (Event.epoch).
  const std::string saved = *ReadFileToString(rev_file);
  EXPECT_TRUE(absl::StartsWith(saved, "4 ")) << saved;
  EXPECT_EQ(saved.size(), 2u + 16u + 1u) << saved;
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
  // The plan's input as a workload file for berth-plan, the plan as usual.
  const std::string state_path = absl::StrCat(std::getenv("TEST_TMPDIR"), "/state.json");
  r = ctl.Run(Role::kReader, {"plan", "--state-out", state_path});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, Id("ctl-waiting"))) << r.out;
  absl::StatusOr<v1::Workload> state = ReadJsonFile<v1::Workload>(state_path);
  ASSERT_TRUE(state.ok()) << state.status();
  ASSERT_EQ(state->jobs_size(), 1);
  EXPECT_EQ(state->jobs(0).spec().id(), Id("ctl-waiting"));
  EXPECT_TRUE(state->jobs(0).has_queued_at());
  EXPECT_EQ(state->jobs(0).spec().argv_size(), 0);
  EXPECT_EQ(state->budgets().memory_bytes(), 1024 * kMiB);
  r = ctl.Run(Role::kOperator, {"resume"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "admission:       open")) << r.out;

  // explain shows the arithmetic behind a rank: paused, a priority-2 job is
  // ahead of a priority-0 job of another workspace, and says why.
  r = ctl.Run(Role::kOperator, {"pause", "--reason", "rank"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  v1::Snapshot gen4 = gen3;
  gen4.set_generation(4);
  v1::JobSpec low = BusyboxJob(Id("ctl-rank-low"), "ws3", 64 * kMiB, "true");
  low.set_priority(0);
  v1::JobSpec high = BusyboxJob(Id("ctl-rank-high"), "ws4", 64 * kMiB, "true");
  high.set_priority(2);
  *gen4.add_jobs() = low;
  *gen4.add_jobs() = high;
  r = ctl.Run(Role::kPusher, {"push", WriteSnapshot(gen4, "gen4.json"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  auto ranked = ctl.Json<v1::Explanation>(Role::kReader, {"explain", Id("ctl-rank-low")});
  ASSERT_TRUE(ranked.has_rank()) << ranked.DebugString();
  EXPECT_EQ(ranked.rank().policy(), "drf");
  EXPECT_EQ(ranked.rank().priority(), 0);
  EXPECT_EQ(ranked.rank().workspace(), "ws3");
  EXPECT_EQ(ranked.rank().memory_budget_bytes(), 1024 * kMiB);
  ASSERT_GE(ranked.rank().first_ahead_size(), 1) << ranked.DebugString();
  EXPECT_EQ(ranked.rank().first_ahead(0).job_id(), Id("ctl-rank-high"));
  EXPECT_EQ(ranked.rank().first_ahead(0).reason(), "higher priority");
  int32_t counted = 0;
  for (const auto& c : ranked.rank().ahead_by_reason()) counted += c.count();
  EXPECT_EQ(counted, ranked.jobs_ahead());
  r = ctl.Run(Role::kReader, {"explain", Id("ctl-rank-low")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "rank:            drf, priority 0 (its own;")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "share:           ws3 ")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, absl::StrCat(Id("ctl-rank-high"), " (higher priority)")))
      << r.out;
  r = ctl.Run(Role::kOperator, {"resume"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
}

}  // namespace
}  // namespace berth
