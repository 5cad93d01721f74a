// The overview page (/ui): budgets as bars, paused/maintenance state, the
// queue and when it is expected to drain.
#include <string>

#include "absl/strings/str_cat.h"
#include "planner/base/units.h"
#include "planner/convert/convert.h"
#include "server/web/html.h"
#include "server/web/pages.h"

namespace berth::web {

std::string OverviewBody(const OverviewData& data) {
  const v1::Plan& plan = data.plan;
  const v1::Budgets& b = plan.budgets();
  std::string out;
  if (plan.paused()) {
    absl::StrAppend(&out, "<p class=\"warn\" id=\"paused\">Paused: ",
                    HtmlEscape(plan.pause_reason().empty() ? "(no reason given)"
                                                           : plan.pause_reason()),
                    "</p>");
  }
  for (const std::string& pool : plan.pools_in_maintenance()) {
    auto it = plan.maintenance_reasons().find(pool);
    absl::StrAppend(&out, "<p class=\"warn\">Pool ", HtmlEscape(pool), " in maintenance: ",
                    HtmlEscape(it == plan.maintenance_reasons().end() ? "(no reason given)"
                                                                      : it->second),
                    "</p>");
  }
  absl::StrAppend(&out, "<h2>Budgets</h2><p class=\"muted\">dark: in use now; light: with what "
                        "this plan admits</p><div id=\"budgets\">");
  const v1::Usage& used = plan.used();
  const v1::Usage& planned = plan.planned();
  out += RenderBar("memory", static_cast<double>(used.memory_bytes()),
                   static_cast<double>(planned.memory_bytes()),
                   static_cast<double>(b.memory_bytes()),
                   absl::StrCat(FormatBytes(used.memory_bytes()), " used, ",
                                FormatBytes(planned.memory_bytes()), " planned of ",
                                FormatBytes(b.memory_bytes())));
  out += RenderBar("CPU", static_cast<double>(used.cpu_millis()),
                   static_cast<double>(planned.cpu_millis()), static_cast<double>(b.cpu_millis()),
                   absl::StrCat(FormatCpu(used.cpu_millis()), " used, ",
                                FormatCpu(planned.cpu_millis()), " planned of ",
                                FormatCpu(b.cpu_millis())));
  out += RenderBar("workers", used.workers(), planned.workers(), b.max_workers(),
                   absl::StrCat(used.workers(), " used, ", planned.workers(), " planned of ",
                                b.max_workers()));
  for (const auto& [pool, budget] : b.pools()) {
    auto u = used.pool_workers().find(pool);
    auto p = planned.pool_workers().find(pool);
    const int32_t nu = u == used.pool_workers().end() ? 0 : u->second;
    const int32_t np = p == planned.pool_workers().end() ? 0 : p->second;
    out += RenderBar(absl::StrCat("pool ", pool), nu, np, budget.max_workers(),
                     absl::StrCat(nu, " used, ", np, " planned of ", budget.max_workers()));
  }
  absl::StrAppend(&out, "</div><h2>Queue</h2><table id=\"queue\">",
                  "<tr><th>queued</th><td>", plan.queued_count(), "</td></tr>",
                  "<tr><th>admitted by this plan</th><td>", plan.admitted_count(), "</td></tr>",
                  "<tr><th>last queued job expected to start</th><td id=\"drain\">");
  if (data.last_start.has_value() && data.beyond_forecast > 0) {
    absl::StrAppend(&out, "after ", HtmlEscape(FormatTimeUtc(*data.last_start)), " (",
                    data.beyond_forecast, " queued jobs are beyond the forecast)");
  } else if (data.last_start.has_value()) {
    absl::StrAppend(&out, HtmlEscape(FormatTimeUtc(*data.last_start)),
                    " (if estimates hold)");
  } else {
    absl::StrAppend(&out, plan.queued_count() == 0 ? "queue empty" : "unknown");
  }
  absl::StrAppend(&out, "</td></tr>");
  if (data.without_estimate > 0) {
    absl::StrAppend(&out, "<tr><th>without an estimate</th><td>", data.without_estimate,
                    " (paused, in maintenance, waiting for dependencies or never fitting)"
                    "</td></tr>");
  }
  absl::StrAppend(&out, "</table><p class=\"muted\">plan revision ", plan.revision(), ", made ",
                  HtmlEscape(FormatTimeUtc(planner::FromProto(plan.computed_at()))),
                  "</p>");
  return out;
}

}  // namespace berth::web
