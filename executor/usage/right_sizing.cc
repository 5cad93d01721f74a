#include "executor/usage/right_sizing.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "planner/base/units.h"

namespace berth {

v1::ActionUsage ToActionUsage(const UsageHistory& h, const UsageStats& s) {
  v1::ActionUsage u;
  u.set_workspace(h.workspace);
  u.set_action(h.action);
  u.set_runs(s.runs);
  u.set_succeeded(s.succeeded);
  u.set_oom_killed(s.oom_killed);
  u.set_p50_peak_memory_bytes(s.p50_peak_memory_bytes);
  u.set_p95_peak_memory_bytes(s.p95_peak_memory_bytes);
  u.set_max_peak_memory_bytes(s.max_peak_memory_bytes);
  u.set_p95_run_seconds(absl::ToDoubleSeconds(s.p95_run_time));
  u.set_asked_memory_bytes(s.last_asked_memory_bytes);
  u.set_suggested_memory_bytes(s.suggested_memory_bytes);
  u.set_reserved_gib_hours(s.reserved_gib_hours);
  u.set_used_gib_hours(s.used_gib_hours);
  u.set_wasted_gib_hours(s.wasted_gib_hours());
  return u;
}

std::optional<v1::RightSizing> AdviseRightSizing(const v1::JobSpec& spec,
                                                 const v1::Explanation& explanation,
                                                 const UsageHistory& history,
                                                 const RightSizingOptions& options) {
  const UsageStats stats = Summarise(history, options.stats);
  const int64_t asked = spec.resources().memory_bytes();
  const int64_t suggested = stats.suggested_memory_bytes;
  if (suggested <= 0 ||
      static_cast<double>(asked) < options.min_ratio * static_cast<double>(suggested)) {
    return std::nullopt;
  }
  v1::RightSizing r;
  const v1::Suggestion& change = explanation.smallest_change();
  r.set_would_start_now(explanation.has_smallest_change() &&
                        change.dimension() == v1::DIMENSION_MEMORY &&
                        change.fits_if_at_most() >= suggested);
  std::string text = absl::StrCat(
      "asks ", FormatBytes(asked), "; this action peaked at <= ",
      FormatBytes(stats.max_peak_memory_bytes), " in its last ", stats.runs,
      stats.runs == 1 ? " run" : " runs");
  if (stats.oom_killed > 0) absl::StrAppend(&text, " (", stats.oom_killed, " OOM-killed)");
  absl::StrAppend(&text, "; at ", FormatBytes(suggested),
                  r.would_start_now() ? " it would start now" : " it would reserve less");
  r.set_text(std::move(text));
  *r.mutable_usage() = ToActionUsage(history, stats);
  return r;
}

v1::RightSizeResponse RightSizeReport(const std::vector<UsageHistory>& histories,
                                      const std::string& workspace, int limit,
                                      const UsageStatsOptions& options) {
  std::vector<v1::ActionUsage> all;
  v1::RightSizeResponse out;
  for (const UsageHistory& h : histories) {
    if (!workspace.empty() && h.workspace != workspace) continue;
    all.push_back(ToActionUsage(h, Summarise(h, options)));
    out.set_total_wasted_gib_hours(out.total_wasted_gib_hours() +
                                   all.back().wasted_gib_hours());
  }
  std::sort(all.begin(), all.end(), [](const v1::ActionUsage& a, const v1::ActionUsage& b) {
    if (a.wasted_gib_hours() != b.wasted_gib_hours()) {
      return a.wasted_gib_hours() > b.wasted_gib_hours();
    }
    if (a.workspace() != b.workspace()) return a.workspace() < b.workspace();
    return a.action() < b.action();
  });
  const size_t n = std::min(all.size(), static_cast<size_t>(std::max(1, limit)));
  for (size_t i = 0; i < n; ++i) *out.add_actions() = std::move(all[i]);
  return out;
}

}  // namespace berth
