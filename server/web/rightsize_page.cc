// The right-sizing page (/ui/rightsize): RightSize's answer, the actions
// whose memory estimates waste the most reserved GiB-hours.
#include <string>

#include "absl/strings/str_cat.h"
#include "planner/base/units.h"
#include "server/web/html.h"
#include "server/web/list_pages.h"

namespace berth::web {
namespace {

std::string Fixed(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

}  // namespace

std::string RightSizeBody(const RightSizePageData& data) {
  std::string out = absl::StrCat(
      "<form method=\"get\" action=\"/ui/rightsize\" id=\"filter\"><label>workspace "
      "<input name=\"workspace\" id=\"r-workspace\" value=\"",
      HtmlEscape(data.workspace),
      "\"></label> <button>Show</button></form><p id=\"count\">",
      Fixed(data.answer.total_wasted_gib_hours()),
      " GiB-hours reserved and not used over the runs in the usage history; the actions "
      "wasting most first. A suggestion needs 5 succeeded runs.</p>");
  absl::StrAppend(&out,
                  "<table id=\"rightsize\"><tr><th>workspace</th><th>action</th><th>runs "
                  "(succeeded, OOM-killed)</th><th>asks</th><th>peak p50 / p95 / max</th>"
                  "<th>p95 run time</th><th>suggested</th><th>GiB-hours reserved / used / "
                  "wasted</th></tr>");
  for (const v1::ActionUsage& a : data.answer.actions()) {
    absl::StrAppend(
        &out, "<tr><td>", HtmlEscape(a.workspace()), "</td><td><a href=\"/ui/jobs?workspace=",
        HtmlEscape(QueryEscape(a.workspace())), "&amp;action=", HtmlEscape(QueryEscape(a.action())),
        "\">", HtmlEscape(a.action()), "</a></td><td>", a.runs(), " (", a.succeeded(), ", ",
        a.oom_killed(), ")</td><td>", FormatBytes(a.asked_memory_bytes()), "</td><td>",
        FormatBytes(a.p50_peak_memory_bytes()), " / ", FormatBytes(a.p95_peak_memory_bytes()),
        " / ", FormatBytes(a.max_peak_memory_bytes()), "</td><td>",
        HtmlEscape(FormatHumanDuration(absl::Seconds(a.p95_run_seconds()))), "</td><td>",
        a.suggested_memory_bytes() > 0 ? FormatBytes(a.suggested_memory_bytes()) : "-",
        "</td><td>", Fixed(a.reserved_gib_hours()), " / ", Fixed(a.used_gib_hours()), " / ",
        Fixed(a.wasted_gib_hours()), "</td></tr>\n");
  }
  absl::StrAppend(&out, "</table>");
  return out;
}

}  // namespace berth::web
