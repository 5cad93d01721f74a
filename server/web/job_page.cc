// A job's page (/ui/job?id=): its record, ExplainJob's answer with the
// counterfactual, its attempts and the log's tail; and the full log
// (/ui/log?id=) for callers ReadJobLog's policy allows.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "planner/base/units.h"
#include "server/web/html.h"
#include "server/web/pages.h"

namespace berth::web {
namespace {

std::string Time(const google::protobuf::Timestamp& t) {
  return FormatTimeUtc(absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos()));
}

void Row(std::string* out, absl::string_view name, absl::string_view text) {
  absl::StrAppend(out, "<tr><th>", name, "</th><td>", HtmlEscape(text), "</td></tr>");
}

}  // namespace

std::string JobBody(const JobPageData& data) {
  const v1::Job& job = data.job;
  const v1::JobSpec& s = job.spec();
  std::string out = "<table id=\"job\">";
  Row(&out, "id", s.id());
  Row(&out, "state", StateText(job.state()));
  Row(&out, "workspace", s.workspace());
  Row(&out, "action", s.action());
  Row(&out, "pool", s.pool().empty() ? "default" : s.pool());
  Row(&out, "priority", absl::StrCat(s.priority()));
  Row(&out, "image", s.image());
  Row(&out, "reserves",
      absl::StrCat(FormatBytes(s.resources().memory_bytes()), ", ",
                   FormatCpu(s.resources().cpu_millis())));
  if (job.raised_memory_bytes() > 0) {
    Row(&out, "memory raised to", FormatBytes(job.raised_memory_bytes()));
  }
  if (s.has_expected_duration()) {
    Row(&out, "expected duration",
        FormatHumanDuration(absl::Seconds(s.expected_duration().seconds())));
  }
  if (!s.depends_on().empty()) Row(&out, "depends on", absl::StrJoin(s.depends_on(), ", "));
  if (job.has_queued_at()) Row(&out, "queued at", Time(job.queued_at()));
  if (job.has_admitted_at()) Row(&out, "admitted at", Time(job.admitted_at()));
  if (job.has_started_at()) Row(&out, "started at", Time(job.started_at()));
  if (job.has_finished_at()) Row(&out, "finished at", Time(job.finished_at()));
  if (!job.node().empty()) Row(&out, "node", job.node());
  Row(&out, "attempt",
      absl::StrCat(job.requeue_count() + 1, " (requeued ", job.requeue_count(), " times)"));
  if (job.failure_cause() != v1::FAILURE_CAUSE_UNSPECIFIED) {
    Row(&out, "failure", v1::FailureCause_Name(job.failure_cause()));
  }
  if (job.reject_reason() != v1::REJECT_REASON_UNSPECIFIED) {
    Row(&out, "rejected", v1::RejectReason_Name(job.reject_reason()));
  }
  if (job.has_exit_code()) Row(&out, "exit code", absl::StrCat(job.exit_code()));
  if (!job.message().empty()) Row(&out, "message", job.message());
  if (job.has_observed()) {
    Row(&out, "observed",
        absl::StrCat("peak ", FormatBytes(job.observed().peak_memory_bytes()), ", ",
                     job.observed().cpu_seconds(), " CPU-seconds over ",
                     FormatHumanDuration(absl::Seconds(job.observed().run_seconds()))));
  }
  out += "</table>";
  out += JobSpecSection(data);

  if (data.explanation.has_value()) {
    const v1::Explanation& e = *data.explanation;
    absl::StrAppend(&out, "<h2>Why</h2><p id=\"explanation\">", HtmlEscape(e.summary()), "</p>");
    std::string t = "<table>";
    if (e.verdict() != v1::VERDICT_UNSPECIFIED) {
      Row(&t, "verdict", absl::StrCat(VerdictText(e.verdict()), " (", ReasonText(e.reason()), ")"));
    }
    if (e.queue_position() > 0) {
      Row(&t, "queue position",
          absl::StrCat(e.queue_position(), " (", e.jobs_ahead(), " jobs ahead)"));
    }
    if (!e.ahead_job_ids().empty()) Row(&t, "ahead", absl::StrJoin(e.ahead_job_ids(), ", "));
    if (!e.pending_dependencies().empty()) {
      Row(&t, "waiting for", absl::StrJoin(e.pending_dependencies(), ", "));
    }
    if (e.has_estimated_start()) {
      std::string eta = Time(e.estimated_start());
      if (e.eta_kind() != v1::ETA_KIND_UNSPECIFIED) {
        v1::PlanDecision d;
        d.set_eta_kind(e.eta_kind());
        absl::StrAppend(&eta, " (", EtaText(d), ")");
      }
      Row(&t, "expected start", eta);
    } else if (e.has_not_before()) {
      Row(&t, "expected start", absl::StrCat("not before ", Time(e.not_before()),
                                             " (beyond the forecast)"));
    }
    if (e.has_eta_range()) {
      const v1::EtaRange& r = e.eta_range();
      Row(&t, "start range",
          absl::StrCat("earliest ", Time(r.earliest()), ", likely ", Time(r.likely()),
                       ", latest ", Time(r.latest()), " (P10/median/P90 of real/estimated "
                       "run time over ", r.runs(), " runs of its ", r.basis(), ")"));
    } else if (e.verdict() == v1::VERDICT_WAIT) {
      Row(&t, "start range", "none: too little history, or beyond the forecast (see above)");
    }
    if (!e.node().empty()) Row(&t, "node", e.node());
    if (e.has_smallest_change() && !e.smallest_change().text().empty()) {
      Row(&t, "would start if", e.smallest_change().text());
    }
    if (e.has_right_sizing() && !e.right_sizing().text().empty()) {
      Row(&t, "right-sizing", e.right_sizing().text());
    }
    absl::StrAppend(&out, t, "</table>");
    if (data.plan_made.has_value()) {
      absl::StrAppend(&out, "<p class=\"muted\" id=\"planof\">plan revision ", e.revision(),
                      ", made ", HtmlEscape(FormatTimeUtc(*data.plan_made)), "</p>");
    }
  }

  out += AttemptsSection(data);
  absl::StrAppend(&out, "<h2>Log tail</h2><pre id=\"logtail\">",
                  HtmlEscape(job.logs_tail().empty() ? "(none yet)" : job.logs_tail()), "</pre>");
  if (data.full_log_allowed) {
    absl::StrAppend(&out, "<p><a id=\"fulllog\" href=\"/ui/log?id=",
                    HtmlEscape(QueryEscape(s.id())), "\">full log</a> (the latest attempt)</p>");
  } else {
    absl::StrAppend(&out,
                    "<p class=\"muted\">The full log is for operators (and readers when berthd "
                    "runs with --readers_read_logs).</p>");
  }
  out += JobHistorySection(data);
  return out;
}

std::string LogBody(const LogPageData& data) {
  const std::string q = HtmlEscape(QueryEscape(data.job_id));
  std::string out = absl::StrCat(
      "<p><a href=\"/ui/job?id=", q, "\">back to the job</a> · ",
      data.attempt > 0 ? absl::StrCat("attempt ", data.attempt) : "the latest attempt", " · ",
      "<a id=\"download\" href=\"/ui/log/download?id=", q, "&amp;attempt=", data.attempt,
      "\">download the whole kept log</a></p>");
  if (data.tail) {
    if (data.truncated) out += "<p class=\"muted\">The last part of each stream.</p>";
    absl::StrAppend(&out, "<h2>stdout</h2><pre id=\"log\">", HtmlEscape(data.text),
                    "</pre><h2>stderr</h2><pre id=\"logerr\">", HtmlEscape(data.err_text),
                    "</pre>");
    return out;
  }
  if (data.truncated) {
    out += "<p class=\"warn\">Only the first part is shown: download the whole log, or read "
           "it with berthctl logs.</p>";
  }
  absl::StrAppend(&out, "<pre id=\"log\">", HtmlEscape(data.text), "</pre>");
  return out;
}

}  // namespace berth::web
