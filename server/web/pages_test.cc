// Every job-provided string on every page is shown as text: hostile ids,
// workspaces, pools, messages, reasons and log lines never become markup.
#include "server/web/pages.h"

#include <string>

#include "gtest/gtest.h"
#include "planner/base/units.h"

namespace berth::web {
namespace {

constexpr char kHostile[] = "x<script>document.title='pwned'</script>\"'><img src=x onerror=1>";
constexpr char kEscaped[] =
    "x&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;&quot;&#39;&gt;&lt;img src=x "
    "onerror=1&gt;";

void ExpectNoMarkupFrom(const std::string& html) {
  EXPECT_EQ(html.find("<script"), std::string::npos) << html;
  EXPECT_EQ(html.find("<img"), std::string::npos) << html;
  EXPECT_NE(html.find(kEscaped), std::string::npos) << html;
}

TEST(OverviewBody, ShowsBudgetsQueueAndEscapesReasons) {
  OverviewData d;
  d.plan.mutable_budgets()->set_memory_bytes(int64_t{16} << 30);
  d.plan.mutable_budgets()->set_cpu_millis(4000);
  d.plan.mutable_budgets()->set_max_workers(8);
  (*d.plan.mutable_budgets()->mutable_pools())[kHostile].set_max_workers(2);
  d.plan.mutable_used()->set_memory_bytes(int64_t{6} << 30);
  d.plan.mutable_used()->set_cpu_millis(1500);
  d.plan.set_paused(true);
  d.plan.set_pause_reason(kHostile);
  d.plan.add_pools_in_maintenance(kHostile);
  (*d.plan.mutable_maintenance_reasons())[kHostile] = kHostile;
  d.plan.set_queued_count(12);
  d.last_start = absl::FromUnixSeconds(1795000000);
  d.without_estimate = 3;
  const std::string html = OverviewBody(d);
  ExpectNoMarkupFrom(html);
  EXPECT_NE(html.find("6 GiB used"), std::string::npos);
  EXPECT_NE(html.find("of 16 GiB"), std::string::npos);
  EXPECT_NE(html.find("1.5 cores used"), std::string::npos);
  EXPECT_NE(html.find("Paused: "), std::string::npos);
  EXPECT_NE(html.find("<td>12</td>"), std::string::npos);
  EXPECT_NE(html.find("2026-"), std::string::npos);
  EXPECT_NE(html.find("(if estimates hold)"), std::string::npos);
  // Beyond the forecast: only a lower bound, and said so.
  d.beyond_forecast = 5;
  const std::string bounded = OverviewBody(d);
  EXPECT_NE(bounded.find("after 2026-"), std::string::npos);
  EXPECT_NE(bounded.find("5 queued jobs are beyond the forecast"), std::string::npos);
  EXPECT_EQ(bounded.find("(if estimates hold)"), std::string::npos);
  EXPECT_NE(html.find("<td>3 (paused"), std::string::npos);
}

TEST(OverviewBody, EmptyQueueSaysSo) {
  OverviewData d;
  EXPECT_NE(OverviewBody(d).find("queue empty"), std::string::npos);
}

TEST(PlanBody, EscapesRowsFilterAndLinks) {
  PlanPageData d;
  d.filter.workspace = kHostile;
  d.filter.pool = "gpu\"";
  d.filter.page = 2;
  d.page_size = 1;
  d.matching = 3;
  d.queued = 5;
  PlanRow r;
  r.decision.set_job_id(kHostile);
  r.decision.set_queue_position(2);
  r.decision.set_verdict(v1::VERDICT_WAIT);
  r.decision.set_reason(v1::WAITING_FOR_MEMORY);
  r.decision.set_summary(kHostile);
  r.decision.set_eta_kind(v1::ETA_KIND_UNKNOWN);
  r.workspace = kHostile;
  r.pool = kHostile;
  d.rows.push_back(r);
  const std::string html = PlanBody(d);
  ExpectNoMarkupFrom(html);
  EXPECT_NE(html.find("waiting_for_memory"), std::string::npos);
  EXPECT_NE(html.find("<td>wait</td>"), std::string::npos);
  EXPECT_NE(html.find("3 of 5 queued jobs match; page 2 of 3"), std::string::npos);
  // The link to the job carries the id percent-encoded: no quote breaks out.
  EXPECT_NE(html.find("href=\"/ui/job?id=x%3Cscript%3Edocument.title%3D%27pwned%27"),
            std::string::npos);
  EXPECT_NE(html.find("previous"), std::string::npos);
  EXPECT_NE(html.find("next"), std::string::npos);
  EXPECT_NE(html.find("value=\"gpu&quot;\""), std::string::npos);
}

TEST(JobBody, EscapesEverythingAndGatesTheFullLog) {
  JobPageData d;
  d.job.mutable_spec()->set_id(kHostile);
  d.job.mutable_spec()->set_workspace(kHostile);
  d.job.mutable_spec()->set_action(kHostile);
  d.job.mutable_spec()->set_image(kHostile);
  d.job.mutable_spec()->add_depends_on(kHostile);
  d.job.mutable_spec()->mutable_resources()->set_memory_bytes(int64_t{2} << 30);
  d.job.mutable_spec()->mutable_resources()->set_cpu_millis(500);
  d.job.set_state(v1::JOB_STATE_QUEUED);
  d.job.set_message(kHostile);
  d.job.set_logs_tail(std::string(kHostile) + "\n\x1b[2J");
  v1::Explanation e;
  e.set_summary(kHostile);
  e.set_verdict(v1::VERDICT_WAIT);
  e.set_reason(v1::WAITING_FOR_MEMORY);
  e.set_queue_position(4);
  e.add_ahead_job_ids(kHostile);
  e.mutable_smallest_change()->set_text(kHostile);
  d.explanation = e;
  std::string html = JobBody(d);
  ExpectNoMarkupFrom(html);
  EXPECT_NE(html.find("2 GiB, 0.5 cores"), std::string::npos);
  EXPECT_NE(html.find("<td>queued</td>"), std::string::npos);
  EXPECT_NE(html.find("id=\"explanation\""), std::string::npos);
  EXPECT_NE(html.find("would start if"), std::string::npos);
  EXPECT_EQ(html.find("\x1b"), std::string::npos);
  EXPECT_EQ(html.find("id=\"fulllog\""), std::string::npos);
  d.full_log_allowed = true;
  html = JobBody(d);
  EXPECT_NE(html.find("id=\"fulllog\" href=\"/ui/log?id=x%3Cscript"), std::string::npos);
}

// The spec, the attempts (with their log links) and the history: every
// string escaped, env values only for operators, the live log only for a
// running job and a caller who may read logs.
TEST(JobBody, SpecAttemptsHistoryAndLiveLog) {
  JobPageData d;
  v1::JobSpec* s = d.job.mutable_spec();
  s->set_id(kHostile);
  s->add_argv("sh");
  s->add_argv("-c");
  s->add_argv(kHostile);
  (*s->mutable_env())[kHostile] = "secret-value-1234";
  (*s->mutable_env())["PLAIN"] = "other-secret-5678";
  (*s->mutable_labels())[kHostile] = kHostile;
  s->mutable_expected_duration()->set_seconds(5400);
  d.job.set_state(v1::JOB_STATE_RUNNING);
  d.job.set_attempt(2);
  d.job.set_node(kHostile);
  v1::Attempt* a = d.job.add_attempts();
  a->set_number(1);
  a->set_outcome(v1::JOB_STATE_QUEUED);
  a->set_requeue_cause(v1::REQUEUE_CAUSE_DRAIN);
  a->set_message(kHostile);
  a->set_node(kHostile);
  a->set_has_exit_code(true);
  a->set_exit_code(137);
  a->set_log_kept(true);
  a->set_stdout_log_bytes(3000);
  a->set_stderr_log_bytes(10);
  a->mutable_observed()->set_samples(2);
  a->mutable_observed()->set_peak_memory_bytes(int64_t{3} << 30);
  v1::Event e;
  e.set_revision(77);
  e.set_type(v1::EVENT_TYPE_JOB_STATE_CHANGED);
  e.set_previous_state(v1::JOB_STATE_QUEUED);
  e.set_state(v1::JOB_STATE_ADMITTED);
  e.set_message(kHostile);
  d.events.push_back(e);
  d.decisions.push_back({absl::FromUnixSeconds(1'800'000'000), "admit", kHostile});
  std::string html = JobBody(d);
  ExpectNoMarkupFrom(html);
  EXPECT_NE(html.find("sh -c &#39;x&lt;script&gt;"), std::string::npos) << html;
  EXPECT_EQ(html.find("secret-value-1234"), std::string::npos);
  EXPECT_EQ(html.find("other-secret-5678"), std::string::npos);
  EXPECT_NE(html.find("values hidden"), std::string::npos);
  EXPECT_NE(html.find("PLAIN"), std::string::npos);
  EXPECT_NE(html.find("1h30m"), std::string::npos) << html;
  EXPECT_NE(html.find("requeued (drain)"), std::string::npos);
  EXPECT_NE(html.find("<td>137</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>3 GiB</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>77</td>"), std::string::npos);
  EXPECT_NE(html.find("queued -&gt; admitted"), std::string::npos) << html;
  EXPECT_NE(html.find("id=\"decisions\""), std::string::npos);
  // A reader: no log links, no live log.
  EXPECT_EQ(html.find("/ui/log"), std::string::npos);
  EXPECT_EQ(html.find("data-live"), std::string::npos);
  // Not cut (no cap known), then cut (the kept stdout is over the cap).
  EXPECT_EQ(html.find("(cut"), std::string::npos);
  d.log_cap_bytes = 2000;
  d.full_log_allowed = true;
  d.env_values_allowed = true;
  html = JobBody(d);
  ExpectNoMarkupFrom(html);
  EXPECT_NE(html.find("(cut: head and tail kept)"), std::string::npos);
  EXPECT_NE(html.find("PLAIN=other-secret-5678"), std::string::npos);
  EXPECT_NE(html.find("id=\"tail-1\" href=\"/ui/log?id=x%3Cscript"), std::string::npos);
  EXPECT_NE(html.find("id=\"download-1\""), std::string::npos);
  EXPECT_NE(html.find("<pre id=\"livelog\" data-live=\"/ui/log/live?id=x%3Cscript"),
            std::string::npos)
      << html;
  // Finished: no live log.
  d.job.set_state(v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(JobBody(d).find("data-live"), std::string::npos);
}

// A queued job's explanation names the plan it comes from (as the overview
// and plan pages do); a finished job's is the store's, with no plan line.
TEST(JobBody, NamesThePlanOfTheExplanation) {
  JobPageData d;
  d.job.mutable_spec()->set_id("j");
  d.job.set_state(v1::JOB_STATE_QUEUED);
  v1::Explanation e;
  e.set_summary("Waits for memory.");
  e.set_revision(42);
  d.explanation = e;
  EXPECT_EQ(JobBody(d).find("id=\"planof\""), std::string::npos);
  d.plan_made = absl::FromUnixSeconds(1'800'000'000);
  const std::string html = JobBody(d);
  EXPECT_NE(html.find("<p class=\"muted\" id=\"planof\">plan revision 42, made " +
                      FormatTimeUtc(*d.plan_made) + "</p>"),
            std::string::npos)
      << html;
}

// A waiting job's ETA range from its history, or "none" without one.
TEST(JobBody, ShowsTheStartRange) {
  JobPageData d;
  d.job.mutable_spec()->set_id("j");
  d.job.set_state(v1::JOB_STATE_QUEUED);
  v1::Explanation e;
  e.set_verdict(v1::VERDICT_WAIT);
  d.explanation = e;
  EXPECT_NE(JobBody(d).find("<th>start range</th><td>none: too little history"),
            std::string::npos)
      << JobBody(d);
  const absl::Time t = absl::FromUnixSeconds(1'800'000'000);
  v1::EtaRange* r = d.explanation->mutable_eta_range();
  r->mutable_earliest()->set_seconds(absl::ToUnixSeconds(t));
  r->mutable_likely()->set_seconds(absl::ToUnixSeconds(t + absl::Minutes(10)));
  r->mutable_latest()->set_seconds(absl::ToUnixSeconds(t + absl::Minutes(30)));
  r->set_runs(12);
  r->set_basis("action");
  const std::string html = JobBody(d);
  EXPECT_NE(html.find("<th>start range</th><td>earliest " + FormatTimeUtc(t) + ", likely " +
                      FormatTimeUtc(t + absl::Minutes(10)) + ", latest " +
                      FormatTimeUtc(t + absl::Minutes(30)) +
                      " (P10/median/P90 of real/estimated run time over 12 runs of its "
                      "action)"),
            std::string::npos)
      << html;
}

TEST(LogBody, EscapesLogLines) {
  LogPageData d;
  d.job_id = kHostile;
  d.text = std::string("line 1\n") + kHostile + "\n";
  d.truncated = true;
  const std::string html = LogBody(d);
  ExpectNoMarkupFrom(html);
  EXPECT_NE(html.find("line 1\n"), std::string::npos);
  EXPECT_NE(html.find("Only the first part"), std::string::npos);
  EXPECT_NE(html.find("id=\"download\" href=\"/ui/log/download?id=x%3Cscript"),
            std::string::npos);
  d.tail = true;
  d.err_text = kHostile;
  const std::string tail = LogBody(d);
  ExpectNoMarkupFrom(tail);
  EXPECT_NE(tail.find("<pre id=\"logerr\">x&lt;script"), std::string::npos);
}

TEST(RunningBody, ReservedAgainstObservedAndEscaped) {
  RunningPageData d;
  d.now = absl::FromUnixSeconds(1000);
  v1::Job j;
  j.mutable_spec()->set_id(kHostile);
  j.mutable_spec()->set_workspace(kHostile);
  j.mutable_spec()->set_pool(kHostile);
  j.mutable_spec()->mutable_resources()->set_memory_bytes(int64_t{4} << 30);
  j.mutable_spec()->mutable_resources()->set_cpu_millis(2000);
  j.mutable_spec()->mutable_expected_duration()->set_seconds(3600);
  j.set_node(kHostile);
  j.set_state(v1::JOB_STATE_RUNNING);
  j.mutable_started_at()->set_seconds(1000 - 90);
  j.mutable_observed()->set_peak_memory_bytes(int64_t{1} << 30);
  j.mutable_observed()->set_cpu_seconds(45);
  j.mutable_observed()->set_run_seconds(90);
  j.mutable_observed()->set_samples(3);
  d.jobs.push_back(j);
  const std::string html = RunningBody(d);
  ExpectNoMarkupFrom(html);
  EXPECT_NE(html.find("4 GiB / 1 GiB"), std::string::npos) << html;
  EXPECT_NE(html.find("2 cores / 0.5 cores"), std::string::npos) << html;
  EXPECT_NE(html.find("1m30s / 1h"), std::string::npos) << html;
}

TEST(NodesBody, FreePerNodeAndItsJobs) {
  NodesPageData d;
  EXPECT_NE(NodesBody(d).find("One Docker host"), std::string::npos);
  v1::Node* n = d.budgets.add_nodes();
  n->set_id(kHostile);
  n->set_memory_bytes(int64_t{8} << 30);
  n->set_cpu_millis(4000);
  n->set_max_workers(4);
  v1::Job j;
  j.mutable_spec()->set_id(kHostile);
  j.mutable_spec()->mutable_resources()->set_memory_bytes(int64_t{3} << 30);
  j.mutable_spec()->mutable_resources()->set_cpu_millis(1000);
  j.set_node(kHostile);
  d.jobs.push_back(j);
  const std::string html = NodesBody(d);
  ExpectNoMarkupFrom(html);
  EXPECT_NE(html.find("5 GiB of 8 GiB"), std::string::npos) << html;
  EXPECT_NE(html.find("3 cores of 4 cores"), std::string::npos) << html;
  EXPECT_NE(html.find("1 of 4"), std::string::npos) << html;
  // Two nodes with one hostname: each shown with its id.
  for (const char* id : {"id-one", "id-two"}) {
    v1::Node* vm = d.budgets.add_nodes();
    vm->set_id(id);
    vm->set_hostname("vm");
  }
  const std::string clones = NodesBody(d);
  EXPECT_NE(clones.find("<td>vm (id-one)</td>"), std::string::npos) << clones;
  EXPECT_NE(clones.find("<td>vm (id-two)</td>"), std::string::npos) << clones;
}

}  // namespace
}  // namespace berth::web
