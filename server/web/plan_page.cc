// The plan page (/ui/plan): one page of the ranking, filtered.
#include <string>

#include "absl/strings/str_cat.h"
#include "planner/base/units.h"
#include "server/web/html.h"
#include "server/web/pages.h"

namespace berth::web {
namespace {

std::string PageLink(const PlanFilter& f, int page, absl::string_view label) {
  return absl::StrCat("<a href=\"/ui/plan?workspace=", HtmlEscape(QueryEscape(f.workspace)),
                      "&amp;pool=", HtmlEscape(QueryEscape(f.pool)),
                      "&amp;verdict=", HtmlEscape(QueryEscape(f.verdict)), "&amp;page=", page,
                      "\">", label, "</a>");
}

std::string Option(absl::string_view value, absl::string_view selected) {
  return absl::StrCat("<option value=\"", value, "\"", value == selected ? " selected" : "", ">",
                      value.empty() ? "any" : value, "</option>");
}

}  // namespace

std::string PlanBody(const PlanPageData& data) {
  const PlanFilter& f = data.filter;
  std::string out = absl::StrCat(
      "<form method=\"get\" action=\"/ui/plan\" id=\"filter\">"
      "<label>workspace <input name=\"workspace\" value=\"",
      HtmlEscape(f.workspace), "\"></label> <label>pool <input name=\"pool\" value=\"",
      HtmlEscape(f.pool), "\"></label> <label>verdict <select name=\"verdict\">",
      Option("", f.verdict), Option("admit", f.verdict), Option("wait", f.verdict),
      Option("reject", f.verdict), "</select></label> <button>Filter</button></form>");
  const int64_t pages =
      data.matching == 0 ? 1 : (data.matching + data.page_size - 1) / data.page_size;
  absl::StrAppend(&out, "<p id=\"count\">", data.matching, " of ", data.queued,
                  " queued jobs match; page ", f.page, " of ", pages, " (plan revision ",
                  data.revision, ", made ", HtmlEscape(FormatTimeUtc(data.computed_at)),
                  ")</p>");
  absl::StrAppend(&out,
                  "<table id=\"plan\"><tr><th>#</th><th>job</th><th>workspace</th><th>pool</th>"
                  "<th>priority</th><th>verdict</th><th>reason</th><th>why</th><th>ETA</th></tr>");
  for (const PlanRow& r : data.rows) {
    const v1::PlanDecision& d = r.decision;
    absl::StrAppend(&out, "<tr><td>", d.queue_position(), "</td><td><a href=\"/ui/job?id=",
                    HtmlEscape(QueryEscape(d.job_id())), "\">", HtmlEscape(d.job_id()),
                    "</a></td><td>", HtmlEscape(r.workspace), "</td><td>", HtmlEscape(r.pool),
                    "</td><td>", r.priority, "</td><td>", VerdictText(d.verdict()), "</td><td>",
                    ReasonText(d.reason()), "</td><td>", HtmlEscape(d.summary()), "</td><td>",
                    HtmlEscape(EtaText(d)), "</td></tr>\n");
  }
  absl::StrAppend(&out, "</table><p>");
  if (f.page > 1) absl::StrAppend(&out, PageLink(f, f.page - 1, "&larr; previous"), " ");
  if (f.page < pages) absl::StrAppend(&out, PageLink(f, f.page + 1, "next &rarr;"));
  absl::StrAppend(&out, "</p>");
  return out;
}

}  // namespace berth::web
