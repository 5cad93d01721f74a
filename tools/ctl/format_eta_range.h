// berthctl's view of an ETA range (berth.v1.EtaRange): the plan's RANGE
// column and explain's "range" line.
#ifndef BERTH_TOOLS_CTL_FORMAT_ETA_RANGE_H_
#define BERTH_TOOLS_CTL_FORMAT_ETA_RANGE_H_

#include <string>

#include "berth/v1/plan.pb.h"

namespace berth::ctl {

// "14:05:00-15:40:00 UTC" (earliest to latest), or "-" without a range.
std::string FormatEtaRangeShort(const v1::PlanDecision& d);

// "earliest 14:05:00 UTC, likely 14:20:00 UTC, latest 15:40:00 UTC
// (P10/median/P90 of real/estimated time over 10 runs of its action: 0.53x,
// 1.02x, 1.91x)", or "none (the summary says why)".
std::string FormatEtaRangeLong(const v1::Explanation& e);

}  // namespace berth::ctl

#endif  // BERTH_TOOLS_CTL_FORMAT_ETA_RANGE_H_
