// berthctl's view of an ETA range (format_eta_range.h).
#include "tools/ctl/format_eta_range.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "planner/convert/convert.h"

namespace berth::ctl {
namespace {

std::string At(const google::protobuf::Timestamp& t) {
  return absl::FormatTime("%H:%M:%S", planner::FromProto(t), absl::UTCTimeZone());
}

}  // namespace

std::string FormatEtaRangeShort(const v1::PlanDecision& d) {
  if (!d.has_eta_range()) return "-";
  const v1::EtaRange& r = d.eta_range();
  return absl::StrCat(At(r.earliest()), "-", At(r.latest()), " UTC");
}

std::string FormatEtaRangeLong(const v1::Explanation& e) {
  if (!e.has_eta_range()) return "none (the summary says why)";
  const v1::EtaRange& r = e.eta_range();
  return absl::StrFormat(
      "earliest %s UTC, likely %s UTC, latest %s UTC (P10/median/P90 of real/estimated time "
      "over %d runs of its %s: %.2fx, %.2fx, %.2fx)",
      At(r.earliest()), At(r.likely()), At(r.latest()), r.runs(), r.basis(), r.p10_ratio(),
      r.p50_ratio(), r.p90_ratio());
}

}  // namespace berth::ctl
