#include "tools/ctl/format_usage.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "planner/base/units.h"
#include "tools/ctl/format.h"

namespace berth::ctl {

std::string FormatUsage(const v1::ResourceUsage& u, int64_t asked_bytes) {
  const std::string ran = absl::StrCat(
      "ran ", FormatHumanDuration(absl::Seconds(std::llround(u.run_seconds()))));
  if (u.samples() == 0 && u.peak_memory_bytes() == 0) {
    return absl::StrCat(ran, " (memory and CPU not observed)");
  }
  std::string out = absl::StrCat("peak ", u.peak_exact() ? "" : ">= ",
                                 FormatBytes(u.peak_memory_bytes()));
  if (asked_bytes > 0) {
    absl::StrAppend(&out, " of ", FormatBytes(asked_bytes), " asked (",
                    std::llround(100.0 * static_cast<double>(u.peak_memory_bytes()) /
                                 static_cast<double>(asked_bytes)),
                    "%)");
  }
  // An OOM-killed run ended before its first sample has its limit for a
  // peak but no CPU figure.
  absl::StrAppend(&out,
                  u.samples() == 0 ? std::string(", cpu not observed, ")
                                   : absl::StrFormat(", cpu %.1f s, ", u.cpu_seconds()),
                  ran);
  return out;
}

std::string FormatPeak(const v1::Job& job) {
  if (!job.has_observed() || job.observed().peak_memory_bytes() == 0) return "-";
  return FormatBytes(job.observed().peak_memory_bytes());
}

std::string FormatGibHours(double gib_hours) {
  const double a = std::fabs(gib_hours);
  if (a >= 10) return absl::StrFormat("%.1f", gib_hours);
  if (a >= 0.001 || a == 0) return absl::StrFormat("%.3f", gib_hours);
  return absl::StrFormat("%.1e", gib_hours);
}

void PrintRightSize(const v1::RightSizeResponse& r, std::ostream& out) {
  if (r.actions_size() == 0) {
    out << "no usage history yet\n";
    return;
  }
  Table t({"WORKSPACE", "ACTION", "RUNS", "OOM", "ASKS", "PEAK P50", "PEAK P95", "PEAK MAX",
           "SUGGEST", "WASTED GiB-h"});
  for (const v1::ActionUsage& a : r.actions()) {
    t.AddRow({a.workspace(), a.action(), absl::StrCat(a.runs()), absl::StrCat(a.oom_killed()),
              FormatBytes(a.asked_memory_bytes()), FormatBytes(a.p50_peak_memory_bytes()),
              FormatBytes(a.p95_peak_memory_bytes()), FormatBytes(a.max_peak_memory_bytes()),
              a.suggested_memory_bytes() > 0 ? FormatBytes(a.suggested_memory_bytes())
                                             : "(< 5 runs)",
              FormatGibHours(a.wasted_gib_hours())});
  }
  t.Print(out);
  out << "total wasted: " << FormatGibHours(r.total_wasted_gib_hours()) << " GiB-hours\n";
}

}  // namespace berth::ctl
