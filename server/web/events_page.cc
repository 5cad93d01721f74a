// The events page (/ui/events): the most recent events, filtered, newest
// first; the table then grows by itself from /ui/events/live (live_js.h).
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/web/html.h"
#include "server/web/list_pages.h"
#include "server/web/pages.h"

namespace berth::web {
namespace {

std::string Lower(absl::string_view name, absl::string_view prefix) {
  if (absl::StartsWith(name, prefix)) name.remove_prefix(prefix.size());
  return absl::AsciiStrToLower(name);
}

std::string Input(absl::string_view name, absl::string_view label, absl::string_view value) {
  return absl::StrCat("<label>", label, " <input name=\"", name, "\" id=\"e-", name,
                      "\" size=\"16\" value=\"", HtmlEscape(value), "\"></label> ");
}

}  // namespace

absl::StatusOr<EventFilter> ParseEventFilter(
    const std::function<std::string(const char*)>& get) {
  EventFilter f;
  f.type = absl::AsciiStrToLower(get("type"));
  f.job_prefix = get("job");
  f.workspace = get("workspace");
  f.state = absl::AsciiStrToLower(get("state"));
  if (!f.type.empty()) {
    bool known = false;
    for (int t = 1; v1::EventType_IsValid(t); ++t) {
      known = known || Lower(v1::EventType_Name(static_cast<v1::EventType>(t)), "EVENT_TYPE_") ==
                           f.type;
    }
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat(
          "type: unknown event type '", f.type,
          "' (job_state_changed, job_spec_updated, snapshot_applied, budgets_changed, paused, "
          "resumed, pool_maintenance_changed or orphan_stopped)"));
    }
  }
  if (!f.state.empty()) {
    bool known = false;
    for (int s = 1; v1::JobState_IsValid(s); ++s) {
      known = known || StateText(static_cast<v1::JobState>(s)) == f.state;
    }
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat("state: unknown state '", f.state, "'"));
    }
  }
  return f;
}

bool EventMatches(const EventFilter& f, const v1::Event& e) {
  if (!f.type.empty() && Lower(v1::EventType_Name(e.type()), "EVENT_TYPE_") != f.type) {
    return false;
  }
  if (!f.job_prefix.empty() && !absl::StartsWith(e.job_id(), f.job_prefix)) return false;
  if (!f.workspace.empty() && e.workspace() != f.workspace) return false;
  if (!f.state.empty() && (e.type() != v1::EVENT_TYPE_JOB_STATE_CHANGED ||
                           StateText(e.state()) != f.state)) {
    return false;
  }
  return true;
}

std::string EventQuery(const EventFilter& f) {
  std::string out;
  auto add = [&out](absl::string_view name, absl::string_view value) {
    if (value.empty()) return;
    absl::StrAppend(&out, out.empty() ? "" : "&", name, "=", QueryEscape(value));
  };
  add("type", f.type);
  add("job", f.job_prefix);
  add("workspace", f.workspace);
  add("state", f.state);
  return out;
}

std::string EventsBody(const EventsPageData& data) {
  const EventFilter& f = data.filter;
  std::string out = "<form method=\"get\" action=\"/ui/events\" id=\"filter\">"
                    "<label>type <select name=\"type\" id=\"e-type\"><option value=\"\">any"
                    "</option>";
  for (int t = 1; v1::EventType_IsValid(t); ++t) {
    const std::string name = Lower(v1::EventType_Name(static_cast<v1::EventType>(t)),
                                   "EVENT_TYPE_");
    absl::StrAppend(&out, "<option value=\"", name, "\"", name == f.type ? " selected" : "",
                    ">", name, "</option>");
  }
  absl::StrAppend(&out, "</select></label> ", Input("job", "job id starts with", f.job_prefix),
                  Input("workspace", "workspace", f.workspace),
                  Input("state", "to state", f.state),
                  "<button id=\"filter-events\">Filter</button> <a href=\"/ui/events\">clear"
                  "</a></form>");
  absl::StrAppend(&out, "<p id=\"count\">", data.events.size(),
                  " matching among the ", data.searched,
                  " most recent events, newest first; new ones appear as they happen "
                  "(<span id=\"events-status\">connecting</span>)</p>");
  std::string live = EventQuery(f);
  absl::StrAppend(&live, live.empty() ? "" : "&", "after=", data.current_revision);
  absl::StrAppend(&out, "<table id=\"events\" data-link-col=\"3\" data-live=\"/ui/events/live?",
                  HtmlEscape(live), "\"><tr><th>revision</th><th>time</th><th>type</th><th>job</th>"
                  "<th>workspace</th><th>change</th><th>detail</th></tr>");
  for (const v1::Event& e : data.events) {
    const std::vector<std::string> c = EventCells(e);
    absl::StrAppend(&out, "<tr><td>", c[0], "</td><td>", HtmlEscape(c[1]), "</td><td>",
                    HtmlEscape(c[2]), "</td><td>");
    if (!e.job_id().empty()) {
      absl::StrAppend(&out, "<a href=\"/ui/job?id=", HtmlEscape(QueryEscape(e.job_id())), "\">",
                      HtmlEscape(e.job_id()), "</a>");
    }
    absl::StrAppend(&out, "</td><td>", HtmlEscape(c[4]), "</td><td>", HtmlEscape(c[5]),
                    "</td><td>", HtmlEscape(c[6]), "</td></tr>\n");
  }
  absl::StrAppend(&out, "</table>");
  return out;
}

}  // namespace berth::web
