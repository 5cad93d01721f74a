// The running page (/ui/running) and the nodes page (/ui/nodes): what holds
// resources now, reserved against observed, and where.
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "planner/base/units.h"
#include "server/web/html.h"
#include "server/web/pages.h"

namespace berth::web {
namespace {

absl::Time FromTs(const google::protobuf::Timestamp& t) {
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}

std::string JobLink(const std::string& id) {
  return absl::StrCat("<a href=\"/ui/job?id=", HtmlEscape(QueryEscape(id)), "\">",
                      HtmlEscape(id), "</a>");
}

int64_t Memory(const v1::Job& j) {
  return j.raised_memory_bytes() > 0 ? j.raised_memory_bytes()
                                     : j.spec().resources().memory_bytes();
}

}  // namespace

std::string RunningBody(const RunningPageData& data) {
  std::string out = absl::StrCat("<p id=\"count\">", data.jobs.size(),
                                 data.more ? "+" : "", " jobs hold resources</p>");
  absl::StrAppend(&out,
                  "<table id=\"running\"><tr><th>job</th><th>state</th><th>workspace</th>"
                  "<th>pool</th><th>node</th><th>memory reserved / peak</th>"
                  "<th>CPU reserved / used</th><th>running / expected</th></tr>");
  for (const v1::Job& j : data.jobs) {
    const v1::JobSpec& s = j.spec();
    std::string peak = "-", cpu = "-", time = "-";
    if (j.has_observed() && j.observed().samples() > 0) {
      peak = FormatBytes(j.observed().peak_memory_bytes());
      if (j.observed().run_seconds() > 0) {
        cpu = FormatCpu(static_cast<int64_t>(1000 * j.observed().cpu_seconds() /
                                             j.observed().run_seconds()));
      }
    }
    if (j.has_started_at()) time = FormatHumanDuration(data.now - FromTs(j.started_at()));
    const std::string expected = s.has_expected_duration()
                                     ? FormatHumanDuration(absl::Seconds(
                                           s.expected_duration().seconds()))
                                     : "unknown";
    absl::StrAppend(&out, "<tr><td>", JobLink(s.id()), "</td><td>", StateText(j.state()),
                    "</td><td>", HtmlEscape(s.workspace()), "</td><td>",
                    HtmlEscape(s.pool().empty() ? "default" : s.pool()), "</td><td>",
                    HtmlEscape(j.node()), "</td><td>", FormatBytes(Memory(j)), " / ",
                    HtmlEscape(peak), "</td><td>", FormatCpu(s.resources().cpu_millis()), " / ",
                    HtmlEscape(cpu), "</td><td>", HtmlEscape(time), " / ",
                    HtmlEscape(expected), "</td></tr>\n");
  }
  absl::StrAppend(&out, "</table>");
  return out;
}

std::string NodesBody(const NodesPageData& data) {
  if (data.budgets.nodes().empty()) {
    return "<p id=\"nodes\">One Docker host: no nodes (berthd --runtime=swarm lists a "
           "swarm's nodes here). See the overview for its budgets.</p>";
  }
  std::map<std::string, std::vector<const v1::Job*>> by_node;
  for (const v1::Job& j : data.jobs) by_node[j.node()].push_back(&j);
  std::string out =
      "<table id=\"nodes\"><tr><th>node</th><th>memory free of</th><th>CPU free of</th>"
      "<th>workers</th><th>jobs</th></tr>";
  for (const v1::Node& n : data.budgets.nodes()) {
    int64_t mem = 0, cpu = 0;
    std::string jobs;
    for (const v1::Job* j : by_node[n.id()]) {
      mem += Memory(*j);
      cpu += j->spec().resources().cpu_millis();
      absl::StrAppend(&jobs, jobs.empty() ? "" : ", ", JobLink(j->spec().id()));
    }
    // The hostname where there is one, and always the id: nodes cloned from
    // one image share a hostname.
    const std::string name =
        n.hostname().empty() ? HtmlEscape(n.id())
                             : absl::StrCat(HtmlEscape(n.hostname()), " (", HtmlEscape(n.id()), ")");
    // No cap is 0 in the API; "1 of 0" would read as overcommitted.
    const std::string workers =
        n.max_workers() > 0 ? absl::StrCat(by_node[n.id()].size(), " of ", n.max_workers())
                            : absl::StrCat(by_node[n.id()].size(), " (no cap)");
    absl::StrAppend(&out, "<tr id=\"node-", HtmlEscape(n.id()), "\"><td>", name, "</td><td>",
                    FormatBytes(n.memory_bytes() - mem), " of ", FormatBytes(n.memory_bytes()),
                    "</td><td>", FormatCpu(n.cpu_millis() - cpu), " of ",
                    FormatCpu(n.cpu_millis()), "</td><td>", workers, "</td><td>", jobs,
                    "</td></tr>\n");
  }
  absl::StrAppend(&out, "</table>");
  if (data.more) out += "<p class=\"muted\">Only the first jobs are counted.</p>";
  return out;
}

}  // namespace berth::web
