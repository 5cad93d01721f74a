// The jobs page (/ui/jobs): every job Berth keeps, in any state, as a
// filter form (each filter a query parameter, so a search is a link), a
// table whose column heads sort it, and page links.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "planner/base/units.h"
#include "server/web/html.h"
#include "server/web/list_pages.h"
#include "server/web/pages.h"

namespace berth::web {
namespace {

std::string Input(absl::string_view name, absl::string_view label, absl::string_view value,
                  int size) {
  return absl::StrCat("<label>", label, " <input name=\"", name, "\" id=\"f-", name,
                      "\" size=\"", size, "\" value=\"", HtmlEscape(value), "\"></label> ");
}

std::string Link(JobListFilter f, absl::string_view label, absl::string_view id) {
  return absl::StrCat("<a id=\"", id, "\" href=\"/ui/jobs?", HtmlEscape(JobListQuery(f, true)),
                      "\">", label, "</a>");
}

// A column head that sorts by `sort` (bold when it is the order shown).
std::string Head(const JobListFilter& f, absl::string_view label, std::optional<JobSort> sort) {
  if (!sort.has_value()) return absl::StrCat("<th>", label, "</th>");
  JobListFilter g = f;
  g.sort = *sort;
  g.page = 1;
  return absl::StrCat("<th>", *sort == f.sort ? "<b>" : "",
                      Link(g, label, absl::StrCat("sort-", JobSortName(*sort))),
                      *sort == f.sort ? "</b>" : "", "</th>");
}

}  // namespace

std::string JobsBody(const JobListData& data) {
  const JobListFilter& f = data.filter;
  std::string out = "<form method=\"get\" action=\"/ui/jobs\" id=\"filter\">";
  absl::StrAppend(&out, "<label>state <select name=\"state\" id=\"f-state\">");
  const std::string state = f.state.has_value() ? StateText(*f.state) : "";
  for (const char* s : {"", "queued", "admitted", "running", "succeeded", "failed", "cancelled",
                        "rejected"}) {
    absl::StrAppend(&out, "<option value=\"", s, "\"", state == s ? " selected" : "", ">",
                    *s == '\0' ? "any" : s, "</option>");
  }
  absl::StrAppend(&out, "</select></label> ", Input("id", "id starts with", f.id_prefix, 24),
                  Input("workspace", "workspace", f.workspace, 12),
                  Input("pool", "pool", f.pool, 10), Input("action", "action", f.action, 12),
                  Input("priority", "priority", f.priority ? absl::StrCat(*f.priority) : "", 4),
                  "<input type=\"hidden\" name=\"sort\" value=\"", JobSortName(f.sort),
                  "\"><button id=\"search\">Search</button> <a href=\"/ui/jobs\">clear</a>"
                  "</form>");
  const int64_t pages =
      data.matching == 0 ? 1 : (data.matching + data.page_size - 1) / data.page_size;
  absl::StrAppend(&out, "<p id=\"count\">", data.matching, " of ", data.kept,
                  " kept jobs match; page ", f.page, " of ", pages, ", sorted by ",
                  JobSortName(f.sort), " (<a id=\"csv\" href=\"/ui/jobs.csv?",
                  HtmlEscape(JobListQuery(f, false)), "\">every match as CSV</a>)</p>");
  absl::StrAppend(&out, "<table id=\"jobs\"><tr>", Head(f, "job", JobSort::kId),
                  Head(f, "state", JobSort::kState), Head(f, "workspace", std::nullopt),
                  Head(f, "pool", std::nullopt), Head(f, "action", std::nullopt),
                  Head(f, "priority", JobSort::kPriority), Head(f, "reserves", std::nullopt),
                  Head(f, "created", JobSort::kNewest), Head(f, "finished", JobSort::kFinished),
                  Head(f, "exit", std::nullopt), "</tr>");
  for (const JobListRow& r : data.rows) {
    absl::StrAppend(
        &out, "<tr><td><a href=\"/ui/job?id=", HtmlEscape(QueryEscape(r.id)), "\">",
        HtmlEscape(r.id), "</a></td><td>", StateText(r.state), "</td><td>",
        HtmlEscape(r.workspace), "</td><td>", HtmlEscape(r.pool.empty() ? "default" : r.pool),
        "</td><td>", HtmlEscape(r.action), "</td><td>", r.priority, "</td><td>",
        FormatBytes(r.memory_bytes), ", ", FormatCpu(r.cpu_millis), "</td><td>",
        HtmlEscape(FormatTimeUtc(r.created_at)), "</td><td>",
        r.finished_at ? HtmlEscape(FormatTimeUtc(*r.finished_at)) : "", "</td><td>",
        r.has_exit_code ? absl::StrCat(r.exit_code) : "", "</td></tr>\n");
  }
  absl::StrAppend(&out, "</table><p>");
  if (f.page > 1) {
    JobListFilter g = f;
    g.page = f.page - 1;
    absl::StrAppend(&out, Link(g, "&larr; previous", "prev"), " ");
  }
  if (f.page < pages) {
    JobListFilter g = f;
    g.page = f.page + 1;
    absl::StrAppend(&out, Link(g, "next &rarr;", "next"));
  }
  absl::StrAppend(&out, "</p>");
  return out;
}

std::string CsvCell(absl::string_view text) {
  std::string cell;
  if (!text.empty() && absl::string_view("=+-@\t\r").find(text[0]) != absl::string_view::npos) {
    cell = "'";
  }
  cell.append(text.data(), text.size());
  if (cell.find_first_of("\",\r\n") == std::string::npos) return cell;
  std::string quoted = "\"";
  for (char c : cell) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

std::string JobsCsvHeader() {
  return "id,state,workspace,pool,action,priority,memory_bytes,cpu_millis,created,finished,"
         "exit_code\r\n";
}

std::string JobsCsvLine(const JobListRow& r) {
  return absl::StrCat(CsvCell(r.id), ",", StateText(r.state), ",", CsvCell(r.workspace), ",",
                      CsvCell(r.pool.empty() ? "default" : r.pool), ",", CsvCell(r.action), ",",
                      r.priority, ",", r.memory_bytes, ",", r.cpu_millis, ",",
                      FormatTimeUtc(r.created_at), ",",
                      r.finished_at ? FormatTimeUtc(*r.finished_at) : "", ",",
                      r.has_exit_code ? absl::StrCat(r.exit_code) : "", "\r\n");
}

std::string JobsCsvLines(const std::vector<JobRecord>& records, size_t* next,
                         size_t max_rows) {
  std::string out;
  const size_t end = *next + std::min(max_rows, records.size() - std::min(*next, records.size()));
  for (; *next < end; ++*next) out += JobsCsvLine(JobListRowOf(*records[*next]));
  return out;
}

std::string JobsCsv(const JobListData& data) {
  std::string out = JobsCsvHeader();
  for (const JobListRow& r : data.rows) out += JobsCsvLine(r);
  return out;
}

}  // namespace berth::web
