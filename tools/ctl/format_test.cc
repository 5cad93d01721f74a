#include "tools/ctl/format.h"
#include "tools/ctl/format_attempts.h"
#include "tools/ctl/format_eta_range.h"
#include "tools/ctl/format_event.h"

#include <sstream>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tools/ctl/args.h"

namespace berth {
namespace ctl {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

google::protobuf::Timestamp At(absl::Time t) {
  google::protobuf::Timestamp ts;
  ts.set_seconds(absl::ToUnixSeconds(t));
  return ts;
}

// A job held because its Swarm node was lost shows the hold on its own line.
TEST(FormatTest, ExplanationOfAHeldJobShowsTheHold) {
  v1::Explanation e;
  e.set_job_id("a");
  e.set_state(v1::JOB_STATE_RUNNING);
  e.set_summary("Running since 2026-11-27 13:30:00 UTC in container abc.");
  std::ostringstream plain;
  PrintExplanation(e, absl::FromUnixSeconds(0), plain);
  EXPECT_FALSE(absl::StrContains(plain.str(), "held")) << plain.str();
  e.set_held("requeue once the node is back and its attempt has ended: node w1 (n1) lost at "
             "2026-11-27 13:31:05 UTC");
  std::ostringstream held;
  PrintExplanation(e, absl::FromUnixSeconds(0), held);
  EXPECT_TRUE(absl::StrContains(held.str(), "held")) << held.str();
  EXPECT_TRUE(absl::StrContains(held.str(), "node w1 (n1) lost at 2026-11-27 13:31:05 UTC"))
      << held.str();
}

TEST(FormatTest, ShortfallPerDimension) {
  v1::Shortfall s;
  s.set_dimension(v1::DIMENSION_MEMORY);
  s.set_needed(16 * kGiB);
  s.set_free(6 * kGiB);
  s.set_capacity(128 * kGiB);
  EXPECT_EQ(FormatShortfall(s), "needs 16 GiB memory, 6 GiB free of 128 GiB");
  s.set_dimension(v1::DIMENSION_CPU);
  s.set_needed(1500);
  s.set_free(500);
  s.set_capacity(32000);
  EXPECT_EQ(FormatShortfall(s), "needs 1.5 cores, 0.5 cores free of 32 cores");
  s.set_dimension(v1::DIMENSION_POOL_SLOTS);
  s.set_needed(1);
  s.set_free(0);
  s.set_capacity(4);
  EXPECT_EQ(FormatShortfall(s), "needs 1 pool slot(s), 0 free of 4");
  EXPECT_EQ(FormatShortfall(v1::Shortfall()), "");
}

TEST(FormatTest, Eta) {
  const absl::Time now = absl::FromUnixSeconds(1795341600);  // 2026-11-22 10:00 UTC
  EXPECT_EQ(FormatEta(google::protobuf::Timestamp(), now), "-");
  EXPECT_EQ(FormatEta(At(now - absl::Minutes(1)), now), "now");
  // A waiting job whose promised start has passed is not starting "now".
  EXPECT_EQ(FormatEta(At(now - absl::Minutes(1)), now, /*waiting=*/true),
            "overdue (was 09:59:00 UTC)");
  EXPECT_EQ(FormatEta(At(now + absl::Minutes(12)), now, /*waiting=*/true),
            "in 12m (10:12:00 UTC)");
  EXPECT_EQ(FormatEta(At(now + absl::Minutes(12)), now), "in 12m (10:12:00 UTC)");
  EXPECT_EQ(FormatEta(At(now + absl::Hours(1) + absl::Minutes(30)), now),
            "in 1h30m (11:30:00 UTC)");
  // What the kind says: beyond the bounded forecast only a lower bound,
  // no start at all "unknown" (never "-", never a made-up time).
  EXPECT_EQ(FormatStart(google::protobuf::Timestamp(), v1::ETA_KIND_BEYOND_FORECAST,
                        At(now + absl::Hours(2)), now, true),
            "beyond the forecast (after 12:00:00 UTC, in 2h)");
  EXPECT_EQ(FormatStart(google::protobuf::Timestamp(), v1::ETA_KIND_BEYOND_FORECAST,
                        At(now - absl::Minutes(1)), now, true),
            "beyond the forecast (after 09:59:00 UTC)");
  EXPECT_EQ(FormatStart(google::protobuf::Timestamp(), v1::ETA_KIND_UNKNOWN,
                        google::protobuf::Timestamp(), now, true),
            "unknown");
  EXPECT_EQ(FormatStart(At(now + absl::Minutes(12)), v1::ETA_KIND_IF_ESTIMATES_HOLD,
                        google::protobuf::Timestamp(), now, true),
            FormatEta(At(now + absl::Minutes(12)), now, true));
}

// A kept log over the cap says what was dropped; a whole one says nothing.
TEST(FormatTest, LogCut) {
  v1::LogCut cut;
  cut.set_total_bytes(100 << 20);
  cut.set_head_bytes(32 << 20);
  cut.set_tail_bytes(32 << 20);
  EXPECT_EQ(FormatLogCut(cut), "");
  cut.set_dropped_bytes(36 << 20);
  EXPECT_EQ(FormatLogCut(cut), "36 MiB dropped of 100 MiB, first 32 MiB and last 32 MiB kept");
  v1::Attempt a;
  a.set_outcome(v1::JOB_STATE_SUCCEEDED);
  a.set_log_kept(true);
  *a.mutable_stdout_cut() = cut;
  EXPECT_NE(FormatAttempt(a).find("stdout cut: 36 MiB dropped of 100 MiB"), std::string::npos)
      << FormatAttempt(a);
  EXPECT_EQ(FormatAttempt(a).find("stderr cut"), std::string::npos) << FormatAttempt(a);
}

// A reserved start that moved later than first promised always says so.
TEST(FormatTest, SlipOfAReservation) {
  const absl::Time now = absl::FromUnixSeconds(1795341600);  // 2026-11-22 10:00 UTC
  EXPECT_EQ(FormatSlip(google::protobuf::Timestamp(), now), "");
  EXPECT_EQ(FormatSlip(At(now - absl::Seconds(2)), now), ", overdue (was 09:59:58 UTC)");
  EXPECT_EQ(FormatSlip(At(now), now), ", overdue (was 10:00:00 UTC)");
  EXPECT_EQ(FormatSlip(At(now + absl::Minutes(1)), now),
            ", later than first promised (10:01:00 UTC)");
}

TEST(FormatTest, StateNamesParseBothWays) {
  EXPECT_EQ(StateName(v1::JOB_STATE_QUEUED), "QUEUED");
  EXPECT_EQ(ReasonName(v1::REASON_ADMITTED), "ADMITTED");
  EXPECT_EQ(ReasonName(v1::WAITING_FOR_MEMORY), "WAITING_FOR_MEMORY");
  for (const char* text : {"queued", "QUEUED", "JOB_STATE_QUEUED", "Queued"}) {
    absl::StatusOr<v1::JobState> s = ParseState(text);
    ASSERT_TRUE(s.ok()) << text;
    EXPECT_EQ(*s, v1::JOB_STATE_QUEUED);
  }
  absl::StatusOr<v1::JobState> bad = ParseState("sleeping");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ExitCodeFor(bad.status()), kExitUsage);
  EXPECT_FALSE(ParseState("unspecified").ok());
}

TEST(FormatTest, EventLine) {
  v1::Event e;
  e.set_revision(17);
  *e.mutable_time() = At(absl::FromUnixSeconds(1795341600));
  e.set_type(v1::EVENT_TYPE_JOB_STATE_CHANGED);
  e.set_job_id("job-1");
  e.set_workspace("ws");
  e.set_previous_state(v1::JOB_STATE_RUNNING);
  e.set_state(v1::JOB_STATE_FAILED);
  e.set_failure_cause(v1::FAILURE_CAUSE_OOM_KILLED);
  e.set_exit_code(137);
  e.set_has_exit_code(true);
  EXPECT_EQ(EventLine(e), "17  10:00:00  JOB_STATE_CHANGED  job-1 (ws)  RUNNING -> FAILED OOM_KILLED exit=137");
  e.set_previous_state(v1::JOB_STATE_UNSPECIFIED);
  e.set_state(v1::JOB_STATE_QUEUED);
  e.set_has_exit_code(false);
  EXPECT_EQ(EventLine(e), "17  10:00:00  JOB_STATE_CHANGED  job-1 (ws)  new -> QUEUED");
  v1::Event g;
  g.set_revision(3);
  g.set_type(v1::EVENT_TYPE_SNAPSHOT_APPLIED);
  g.set_generation(42);
  EXPECT_EQ(EventLine(g), "3  -  SNAPSHOT_APPLIED  generation 42");
}

TEST(FormatTest, PlanTable) {
  const absl::Time now = absl::FromUnixSeconds(1795341600);
  v1::Plan p;
  p.set_revision(9);
  p.mutable_budgets()->set_memory_bytes(128 * kGiB);
  p.mutable_budgets()->set_cpu_millis(32000);
  p.mutable_budgets()->set_max_workers(24);
  p.mutable_used()->set_memory_bytes(122 * kGiB);
  p.mutable_planned()->set_memory_bytes(122 * kGiB);
  p.set_queued_count(3);
  v1::PlanDecision* d = p.add_decisions();
  d->set_job_id("big");
  d->set_verdict(v1::VERDICT_WAIT);
  d->set_reason(v1::WAITING_FOR_MEMORY);
  d->set_queue_position(1);
  d->set_reserved(true);
  *d->mutable_estimated_start() = At(now + absl::Minutes(12));
  d->set_summary("needs 16 GiB memory, 6 GiB free of 128 GiB");
  std::ostringstream out;
  PrintPlan(p, now, out);
  const std::string text = out.str();
  EXPECT_TRUE(absl::StrContains(text, "memory:          122 GiB used, 122 GiB after admissions, of 128 GiB"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "1*   big  WAIT     WAITING_FOR_MEMORY  in 12m (10:12:00 UTC)"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "(2 more queued jobs; raise --limit to see them)")) << text;
}

// The maintenance reason is shown in `berthctl plan` and in the control
// state `maintenance`/`pause` print; pools without one are listed bare.
TEST(FormatTest, MaintenanceReasons) {
  v1::Plan p;
  p.add_pools_in_maintenance("database");
  p.add_pools_in_maintenance("gpu");
  (*p.mutable_maintenance_reasons())["database"] = "db upgrade";
  std::ostringstream out;
  PrintPlan(p, absl::FromUnixSeconds(1795341600), out);
  EXPECT_TRUE(absl::StrContains(
      out.str(), "admission:       open; pools in maintenance: database (db upgrade), gpu"))
      << out.str();
  v1::ControlState s;
  s.add_pools_in_maintenance("database");
  (*s.mutable_maintenance_reasons())["database"] = "db upgrade";
  std::ostringstream state;
  PrintControlState(s, state);
  EXPECT_TRUE(absl::StrContains(state.str(), "maintenance:     database (db upgrade)"))
      << state.str();
}

TEST(ArgsTest, FlagsAnywhereValuesAndErrors) {
  const std::vector<FlagSpec> specs = {{"json", false}, {"state", true, true}, {"limit"}};
  absl::StatusOr<Args> a =
      ParseArgs({"list", "--state", "queued", "--json", "--state=failed", "x"}, specs, "list");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->positional, (std::vector<std::string>{"list", "x"}));
  EXPECT_EQ(a->GetAll("state"), (std::vector<std::string>{"queued", "failed"}));
  EXPECT_TRUE(a->Has("json"));
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{"--nope"}, {"--limit"}, {"--json=1"},
                                             {"--limit", "1", "--limit", "2"}}) {
    absl::StatusOr<Args> r = ParseArgs(bad, specs, "list");
    EXPECT_EQ(ExitCodeFor(r.status()), kExitUsage) << bad[0];
  }
  EXPECT_EQ(FirstPositional({"--limit", "3", "--json", "plan"}, specs), 3u);
  EXPECT_EQ(ExitCodeFor(absl::NotFoundError("x")), kExitServerError);
  EXPECT_EQ(ExitCodeFor(absl::UnavailableError("x")), kExitUnreachable);
  EXPECT_EQ(ExitCodeFor(UnreachableError(absl::StatusCode::kDeadlineExceeded, "x")),
            kExitUnreachable);
  EXPECT_EQ(ExitCodeFor(absl::DeadlineExceededError("x")), kExitServerError);
  EXPECT_EQ(ParseInt("--limit", "12", 0, 100).value(), 12);
  EXPECT_EQ(ExitCodeFor(ParseInt("--limit", "-1", 0, 100).status()), kExitUsage);
}

TEST(FormatTest, BudgetsShowSetBudgetsWarnings) {
  v1::Budgets b;
  b.set_memory_bytes(int64_t{256} << 30);
  std::ostringstream plain;
  PrintBudgets(b, plain);
  EXPECT_FALSE(absl::StrContains(plain.str(), "warning")) << plain.str();
  b.add_warnings("memory_bytes 256 GiB is more than the engine's 23 GiB");
  std::ostringstream warned;
  PrintBudgets(b, warned);
  EXPECT_TRUE(absl::StrContains(warned.str(),
                                "warning:         memory_bytes 256 GiB is more than the engine's"))
      << warned.str();
}

TEST(FormatTest, BudgetsAndPlanShowEachNode) {
  v1::Budgets b;
  b.set_memory_bytes(int64_t{384} << 20);
  v1::NodeUse* u = b.add_node_use();
  v1::Node* n = u->mutable_node();
  n->set_id("k3x9abcdef");
  n->set_hostname("w1");
  n->set_memory_bytes(int64_t{192} << 20);
  n->set_cpu_millis(1500);
  n->set_reserve_memory_bytes(int64_t{64} << 20);
  n->set_reserve_cpu_millis(500);
  u->set_reserved_memory_bytes(int64_t{128} << 20);
  u->set_reserved_cpu_millis(200);
  u->set_jobs(2);
  u->set_observed(true);
  u->set_observed_jobs(2);
  u->set_observed_memory_bytes(int64_t{128} << 20);
  v1::NodeUse* unseen = b.add_node_use();
  unseen->mutable_node()->set_id("m0");
  std::ostringstream out;
  PrintBudgets(b, out);
  const std::string text = out.str();
  EXPECT_TRUE(absl::StrContains(text, "NODE  MEMORY FOR JOBS  RESERVED")) << text;
  EXPECT_TRUE(absl::StrContains(
      text, "w1    192 MiB          128 MiB   1.5 cores     0.2 cores  2     2 tasks, 128 MiB  "
            "64 MiB, 0.5 cores"))
      << text;
  EXPECT_FALSE(absl::StrContains(text, "k3x9")) << text;  // the hostname names it
  EXPECT_TRUE(absl::StrContains(text, "\nm0 ")) << text;  // no hostname: the id
  // Nodes sharing a hostname are told apart by the start of their ids.
  v1::Budgets clones;
  for (const char* id : {"aaaaaaaaaaaaZZZ", "bbbbbbbbbbbbZZZ"}) {
    v1::Node* c = clones.add_node_use()->mutable_node();
    c->set_id(id);
    c->set_hostname("vm");
    c->set_memory_bytes(int64_t{1} << 30);
  }
  v1::Node* lone = clones.add_node_use()->mutable_node();
  lone->set_id("cccccccccccccZZZ");
  lone->set_hostname("w9");
  std::ostringstream cloned;
  PrintBudgets(clones, cloned);
  EXPECT_TRUE(absl::StrContains(cloned.str(), "\nvm (aaaaaaaaaaaa)  1 GiB")) << cloned.str();
  EXPECT_TRUE(absl::StrContains(cloned.str(), "\nvm (bbbbbbbbbbbb)  1 GiB")) << cloned.str();
  EXPECT_TRUE(absl::StrContains(cloned.str(), "\nw9 ")) << cloned.str();
  EXPECT_FALSE(absl::StrContains(cloned.str(), "ZZZ")) << cloned.str();
  EXPECT_FALSE(absl::StrContains(cloned.str(), "cccc")) << cloned.str();
  v1::Plan p;
  *p.mutable_node_use() = b.node_use();
  std::ostringstream plan;
  PrintPlan(p, absl::UnixEpoch(), plan);
  EXPECT_TRUE(absl::StrContains(plan.str(), "w1    192 MiB")) << plan.str();
  std::ostringstream one_host;
  PrintBudgets(v1::Budgets(), one_host);
  EXPECT_FALSE(absl::StrContains(one_host.str(), "NODE")) << one_host.str();
}

// The ETA range: a RANGE column in the plan, a "range" line in explain,
// and "none" for a waiting job without one.
TEST(FormatTest, EtaRangeInPlanAndExplain) {
  const absl::Time now = absl::FromUnixSeconds(1795341600);  // 10:00:00 UTC
  v1::EtaRange r;
  *r.mutable_earliest() = At(now + absl::Minutes(5));
  *r.mutable_likely() = At(now + absl::Minutes(12));
  *r.mutable_latest() = At(now + absl::Minutes(40));
  r.set_basis("action");
  r.set_runs(20);
  r.set_p10_ratio(0.53);
  r.set_p50_ratio(1.02);
  r.set_p90_ratio(1.91);
  v1::Plan p;
  p.set_queued_count(2);
  for (const char* id : {"ranged", "bare"}) {
    v1::PlanDecision* d = p.add_decisions();
    d->set_job_id(id);
    d->set_verdict(v1::VERDICT_WAIT);
    d->set_reason(v1::WAITING_FOR_MEMORY);
    d->set_eta_kind(v1::ETA_KIND_IF_ESTIMATES_HOLD);
    *d->mutable_estimated_start() = At(now + absl::Minutes(12));
    if (std::string(id) == "ranged") *d->mutable_eta_range() = r;
  }
  std::ostringstream plan;
  PrintPlan(p, now, plan);
  EXPECT_TRUE(absl::StrContains(plan.str(), "RANGE")) << plan.str();
  EXPECT_TRUE(absl::StrContains(plan.str(), "in 12m (10:12:00 UTC)  10:05:00-10:40:00 UTC"))
      << plan.str();
  EXPECT_EQ(FormatEtaRangeShort(p.decisions(1)), "-");

  v1::Explanation e;
  e.set_job_id("ranged");
  e.set_state(v1::JOB_STATE_QUEUED);
  e.set_verdict(v1::VERDICT_WAIT);
  *e.mutable_eta_range() = r;
  std::ostringstream text;
  PrintExplanation(e, now, text);
  EXPECT_TRUE(absl::StrContains(
      text.str(), "earliest 10:05:00 UTC, likely 10:12:00 UTC, latest 10:40:00 UTC "
                  "(P10/median/P90 of real/estimated time over 20 runs of its action: "
                  "0.53x, 1.02x, 1.91x)"))
      << text.str();
  e.clear_eta_range();
  std::ostringstream none;
  PrintExplanation(e, now, none);
  EXPECT_TRUE(absl::StrContains(none.str(), "none (the summary says why)")) << none.str();
}

}  // namespace
}  // namespace ctl
}  // namespace berth
