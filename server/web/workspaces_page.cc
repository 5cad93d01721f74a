// The workspaces page (/ui/workspaces): each workspace's jobs by state, its
// waits, and what it holds against its fair share (the planner ranks
// workspaces by dominant resource share, DRF: planner/ranking/ranking.h).
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "planner/base/units.h"
#include "server/web/html.h"
#include "server/web/list_pages.h"

namespace berth::web {
namespace {

std::string Wait(const std::optional<absl::Duration>& d) {
  return d.has_value() ? FormatHumanDuration(*d) : "-";
}

std::string Percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * v);
  return buf;
}

}  // namespace

std::string WorkspacesBody(const WorkspacesPageData& data) {
  // Workspaces with work (queued or holding) share the budgets equally.
  int64_t active = 0;
  for (const WorkspaceStats& w : data.rows) active += (w.queued > 0 || w.running > 0) ? 1 : 0;
  const double fair = active > 0 ? 1.0 / static_cast<double>(active) : 0;
  std::string out = absl::StrCat(
      "<p id=\"count\">", data.rows.size(), " workspaces with kept jobs; ", active,
      " with work, so a fair share of ", active > 0 ? Percent(fair) : std::string("-"),
      " each. Share: the larger of its reserved memory and CPU as a part of the "
      "budget (the planner ranks workspaces by it).</p>");
  absl::StrAppend(&out,
                  "<table id=\"workspaces\"><tr><th>workspace</th><th>queued</th>"
                  "<th>running</th><th>succeeded</th><th>failed</th><th>cancelled or "
                  "rejected</th><th>median wait (admitted)</th><th>median wait so far "
                  "(queued)</th><th>reserves</th><th>share / fair share</th></tr>");
  const int64_t mem = data.budgets.memory_bytes(), cpu = data.budgets.cpu_millis();
  for (const WorkspaceStats& w : data.rows) {
    double share = 0;
    if (mem > 0) share = std::max(share, static_cast<double>(w.memory_bytes) / mem);
    if (cpu > 0) share = std::max(share, static_cast<double>(w.cpu_millis) / cpu);
    const bool over = (w.queued > 0 || w.running > 0) && share > fair * 1.0001;
    absl::StrAppend(
        &out, "<tr><td><a href=\"/ui/jobs?workspace=", HtmlEscape(QueryEscape(w.workspace)),
        "\">", HtmlEscape(w.workspace), "</a></td><td>", w.queued, "</td><td>", w.running,
        "</td><td>", w.succeeded, "</td><td>", w.failed, "</td><td>", w.other_ended,
        "</td><td>", HtmlEscape(Wait(w.median_wait)), "</td><td>",
        HtmlEscape(Wait(w.median_queued_for)), "</td><td>", FormatBytes(w.memory_bytes), ", ",
        FormatCpu(w.cpu_millis), "</td><td", over ? " class=\"warn\"" : "", ">",
        Percent(share), " / ", w.queued > 0 || w.running > 0 ? Percent(fair) : "-",
        "</td></tr>\n");
  }
  absl::StrAppend(&out, "</table>");
  return out;
}

}  // namespace berth::web
