#include "tools/ctl/format_usage.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "planner/base/units.h"

namespace berth::ctl {

std::string FormatUsage(const v1::ResourceUsage& u, int64_t asked_bytes) {
  const std::string ran = absl::StrCat(
      "ran ", FormatHumanDuration(absl::Seconds(std::llround(u.run_seconds()))));
  if (u.samples() == 0) return absl::StrCat(ran, " (memory and CPU not observed)");
  std::string out = absl::StrCat("peak ", u.peak_exact() ? "" : ">= ",
                                 FormatBytes(u.peak_memory_bytes()));
  if (asked_bytes > 0) {
    absl::StrAppend(&out, " of ", FormatBytes(asked_bytes), " asked (",
                    std::llround(100.0 * static_cast<double>(u.peak_memory_bytes()) /
                                 static_cast<double>(asked_bytes)),
                    "%)");
  }
  absl::StrAppend(&out, absl::StrFormat(", cpu %.1f s, ", u.cpu_seconds()), ran);
  return out;
}

std::string FormatPeak(const v1::Job& job) {
  if (!job.has_observed() || job.observed().samples() == 0) return "-";
  return FormatBytes(job.observed().peak_memory_bytes());
}

}  // namespace berth::ctl
