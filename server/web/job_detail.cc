// The job page's sections beyond its record (job_page.cc): the spec, the
// attempts with their logs (and the live log of a running one), and the
// job's history (events and decisions).
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
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

std::string Lower(absl::string_view name, absl::string_view prefix) {
  if (absl::StartsWith(name, prefix)) name.remove_prefix(prefix.size());
  return absl::AsciiStrToLower(name);
}

void Row(std::string* out, absl::string_view name, absl::string_view text) {
  absl::StrAppend(out, "<tr><th>", name, "</th><td>", HtmlEscape(text), "</td></tr>");
}

// argv as a shell would take it back: words with anything but
// [A-Za-z0-9_./=:,@%+-] single-quoted.
std::string ShellWords(const google::protobuf::RepeatedPtrField<std::string>& argv) {
  std::vector<std::string> words;
  for (const std::string& a : argv) {
    bool plain = !a.empty();
    for (char c : a) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) &&
          std::string_view("_./=:,@%+-").find(c) == std::string_view::npos) {
        plain = false;
      }
    }
    if (plain) {
      words.push_back(a);
    } else {
      std::string q = "'";
      for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
      words.push_back(q + "'");
    }
  }
  return absl::StrJoin(words, " ");
}

std::string LogLinks(const std::string& id, int attempt) {
  const std::string q =
      absl::StrCat("id=", HtmlEscape(QueryEscape(id)), "&amp;attempt=", attempt);
  return absl::StrCat("<a id=\"head-", attempt, "\" href=\"/ui/log?", q, "\">head</a> · ",
                      "<a id=\"tail-", attempt, "\" href=\"/ui/log?", q,
                      "&amp;part=tail\">tail</a> · <a id=\"download-", attempt,
                      "\" href=\"/ui/log/download?", q, "\">download</a>");
}

}  // namespace

std::string JobSpecSection(const JobPageData& data) {
  const v1::JobSpec& s = data.job.spec();
  std::string out = "<h2>Spec</h2><table id=\"spec\">";
  Row(&out, "command", ShellWords(s.argv()));
  if (s.env_size() > 0) {
    std::vector<std::string> env;
    for (const auto& [name, value] : s.env()) {
      env.push_back(data.env_values_allowed ? absl::StrCat(name, "=", value) : name);
    }
    std::sort(env.begin(), env.end());
    Row(&out, data.env_values_allowed ? "environment" : "environment (names; values hidden)",
        absl::StrJoin(env, "\n"));
  }
  if (s.labels_size() > 0) {
    std::vector<std::string> labels;
    for (const auto& [k, v] : s.labels()) labels.push_back(absl::StrCat(k, "=", v));
    std::sort(labels.begin(), labels.end());
    Row(&out, "labels", absl::StrJoin(labels, "\n"));
  }
  Row(&out, "memory estimate", FormatBytes(s.resources().memory_bytes()));
  Row(&out, "CPU", FormatCpu(s.resources().cpu_millis()));
  Row(&out, "expected duration",
      s.has_expected_duration()
          ? FormatHumanDuration(absl::Seconds(s.expected_duration().seconds()))
          : "unknown");
  if (s.has_max_duration()) {
    Row(&out, "time limit", FormatHumanDuration(absl::Seconds(s.max_duration().seconds())));
  }
  if (s.has_created_at()) Row(&out, "created at", Time(s.created_at()));
  if (!data.job.workspace_path().empty()) Row(&out, "workspace path", data.job.workspace_path());
  absl::StrAppend(&out, "</table>");
  return out;
}

std::string AttemptsSection(const JobPageData& data) {
  const v1::Job& job = data.job;
  std::string out =
      "<h2>Attempts</h2><table id=\"attempts\"><tr><th>#</th><th>node</th><th>admitted</th>"
      "<th>started</th><th>ended</th><th>outcome</th><th>exit</th><th>peak memory</th>"
      "<th>log</th><th></th></tr>";
  for (const v1::Attempt& a : job.attempts()) {
    std::string outcome = Lower(v1::JobState_Name(a.outcome()), "JOB_STATE_");
    if (a.outcome() == v1::JOB_STATE_QUEUED) {
      outcome = absl::StrCat("requeued (",
                             Lower(v1::RequeueCause_Name(a.requeue_cause()), "REQUEUE_CAUSE_"),
                             ")");
    } else if (a.failure_cause() != v1::FAILURE_CAUSE_UNSPECIFIED) {
      absl::StrAppend(&outcome, " (",
                      Lower(v1::FailureCause_Name(a.failure_cause()), "FAILURE_CAUSE_"), ")");
    }
    std::string log = "not kept";
    if (a.log_kept()) {
      log = absl::StrCat("stdout ", FormatBytes(a.stdout_log_bytes()), ", stderr ",
                         FormatBytes(a.stderr_log_bytes()));
      // A cut stream keeps its head, a marker line and its tail: its size
      // is over the cap (log_archive.h).
      if (data.log_cap_bytes > 0 && (a.stdout_log_bytes() > data.log_cap_bytes ||
                                     a.stderr_log_bytes() > data.log_cap_bytes)) {
        absl::StrAppend(&log, " (cut: head and tail kept)");
      }
    }
    absl::StrAppend(
        &out, "<tr id=\"attempt-", a.number(), "\"><td>", a.number(), "</td><td>",
        HtmlEscape(a.node()), "</td><td>",
        a.has_admitted_at() ? HtmlEscape(Time(a.admitted_at())) : "", "</td><td>",
        a.has_started_at() ? HtmlEscape(Time(a.started_at())) : "never", "</td><td>",
        a.has_finished_at() ? HtmlEscape(Time(a.finished_at())) : "", "</td><td>",
        HtmlEscape(outcome), "<br><span class=\"muted\">", HtmlEscape(a.message()),
        "</span></td><td>", a.has_exit_code() ? absl::StrCat(a.exit_code()) : "", "</td><td>",
        a.has_observed() && a.observed().samples() > 0
            ? FormatBytes(a.observed().peak_memory_bytes())
            : "",
        "</td><td>", HtmlEscape(log), "</td><td>",
        data.full_log_allowed && a.log_kept() ? LogLinks(job.spec().id(), a.number()) : "",
        "</td></tr>\n");
  }
  const bool active =
      job.state() == v1::JOB_STATE_RUNNING || job.state() == v1::JOB_STATE_ADMITTED;
  if (active) {
    absl::StrAppend(&out, "<tr id=\"attempt-", job.attempt(), "\"><td>", job.attempt(),
                    "</td><td>", HtmlEscape(job.node()), "</td><td>",
                    job.has_admitted_at() ? HtmlEscape(Time(job.admitted_at())) : "",
                    "</td><td>", job.has_started_at() ? HtmlEscape(Time(job.started_at())) : "",
                    "</td><td></td><td>", Lower(v1::JobState_Name(job.state()), "JOB_STATE_"),
                    "</td><td></td><td>",
                    job.has_observed() && job.observed().samples() > 0
                        ? FormatBytes(job.observed().peak_memory_bytes())
                        : "",
                    "</td><td>live</td><td>", data.full_log_allowed ? LogLinks(job.spec().id(),
                                                                                job.attempt())
                                                                       : "",
                    "</td></tr>\n");
  }
  absl::StrAppend(&out, "</table>");
  if (job.attempts().empty() && !active) {
    absl::StrAppend(&out, "<p class=\"muted\">It has not run.</p>");
  }
  if (active && data.full_log_allowed) {
    absl::StrAppend(&out, "<h2>Live log <small id=\"livelog-status\" class=\"muted\">"
                          "connecting</small></h2><pre id=\"livelog\" data-live=\"/ui/log/live?id=",
                    HtmlEscape(QueryEscape(job.spec().id())), "\"></pre>");
  }
  return out;
}

std::vector<std::string> EventCells(const v1::Event& e) {
  std::string change;
  if (e.type() == v1::EVENT_TYPE_JOB_STATE_CHANGED) {
    change = absl::StrCat(Lower(v1::JobState_Name(e.previous_state()), "JOB_STATE_"), " -> ",
                          Lower(v1::JobState_Name(e.state()), "JOB_STATE_"));
  }
  std::string detail = e.message();
  if (e.has_exit_code()) absl::StrAppend(&detail, detail.empty() ? "" : "; ", "exit ", e.exit_code());
  if (e.type() == v1::EVENT_TYPE_SNAPSHOT_APPLIED) {
    absl::StrAppend(&detail, detail.empty() ? "" : "; ", "generation ", e.generation());
  }
  if (!e.pool().empty()) absl::StrAppend(&detail, detail.empty() ? "" : "; ", "pool ", e.pool());
  return {absl::StrCat(e.revision()),
          Time(e.time()),
          Lower(v1::EventType_Name(e.type()), "EVENT_TYPE_"),
          e.job_id(),
          e.workspace(),
          change,
          detail};
}

std::string JobHistorySection(const JobPageData& data) {
  std::string out = "<h2>Events</h2>";
  if (data.events_cut) {
    absl::StrAppend(&out, "<p class=\"muted\">Among the most recent events only; older ones "
                          "are on the events page.</p>");
  }
  absl::StrAppend(&out, "<table id=\"jobevents\"><tr><th>revision</th><th>time</th><th>type"
                        "</th><th>change</th><th>detail</th></tr>");
  for (const v1::Event& e : data.events) {
    const std::vector<std::string> c = EventCells(e);
    absl::StrAppend(&out, "<tr><td>", c[0], "</td><td>", HtmlEscape(c[1]), "</td><td>", c[2],
                    "</td><td>", HtmlEscape(c[5]), "</td><td>", HtmlEscape(c[6]), "</td></tr>\n");
  }
  absl::StrAppend(&out, "</table>");
  if (!data.decisions.empty()) {
    absl::StrAppend(&out, "<h2>Decisions</h2><table id=\"decisions\"><tr><th>time</th><th>"
                          "decision</th><th>reason</th></tr>");
    for (const JobPageData::Decision& d : data.decisions) {
      absl::StrAppend(&out, "<tr><td>", HtmlEscape(FormatTimeUtc(d.time)), "</td><td>",
                      HtmlEscape(d.kind), "</td><td>", HtmlEscape(d.reason), "</td></tr>\n");
    }
    absl::StrAppend(&out, "</table>");
  }
  return out;
}

}  // namespace berth::web
