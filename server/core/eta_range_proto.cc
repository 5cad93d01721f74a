// The API view of a plan's ETA ranges (eta_range_proto.h).
#include "server/core/eta_range_proto.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "planner/base/units.h"
#include "planner/convert/convert.h"

namespace berth {

std::optional<v1::EtaRange> ToProtoEtaRange(const PlanRanges& ranges,
                                            const planner::PlanResult& result, size_t k) {
  if (ranges.table == nullptr || k >= ranges.table->size()) return std::nullopt;
  const uint32_t job = result.decisions[k].job;
  if (job >= ranges.basis.size() || !ranges.basis[job].has_value()) return std::nullopt;
  const planner::EtaRange r = (*ranges.table)[k];
  if (!r.known) return std::nullopt;
  const RangeBasis& b = *ranges.basis[job];
  v1::EtaRange out;
  *out.mutable_earliest() = planner::ToProtoTimestamp(r.earliest);
  *out.mutable_likely() = planner::ToProtoTimestamp(r.likely);
  *out.mutable_latest() = planner::ToProtoTimestamp(r.latest);
  out.set_basis(b.basis);
  out.set_runs(b.ratios.samples);
  out.set_p10_ratio(b.ratios.p10);
  out.set_p50_ratio(b.ratios.p50);
  out.set_p90_ratio(b.ratios.p90);
  return out;
}

std::string EtaRangeSentence(const PlanRanges& ranges, const planner::PlanResult& result,
                             size_t k, const std::optional<v1::EtaRange>& range) {
  if (result.decisions[k].verdict != planner::Verdict::kWait) return "";
  if (range.has_value()) {
    return absl::StrFormat(
        " Range from %d runs of its %s (real/estimated time P10 %.2fx, median %.2fx, "
        "P90 %.2fx): earliest %s, likely %s, latest %s.",
        range->runs(), range->basis() == "action" ? "action" : "workspace", range->p10_ratio(),
        range->p50_ratio(), range->p90_ratio(),
        FormatTimeUtc(planner::FromProto(range->earliest())),
        FormatTimeUtc(planner::FromProto(range->likely())),
        FormatTimeUtc(planner::FromProto(range->latest())));
  }
  if (ranges.too_large) {
    return absl::StrCat(" No ETA range: the queue is longer than ", kMaxRangedQueue,
                        " jobs.");
  }
  const uint32_t job = result.decisions[k].job;
  if (job >= ranges.basis.size() || !ranges.basis[job].has_value()) {
    return absl::StrCat(" No ETA range: fewer than ", kMinRatioRuns,
                        " finished runs with a duration estimate of its action or workspace "
                        "to learn from.");
  }
  return " No ETA range: the forecast with durations scaled as observed gives no start for it.";
}

}  // namespace berth
