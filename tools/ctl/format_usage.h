// berthctl's text for what a job used (Job.observed, Event.observed).
#ifndef BERTH_TOOLS_CTL_FORMAT_USAGE_H_
#define BERTH_TOOLS_CTL_FORMAT_USAGE_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "berth/v1/executor.pb.h"
#include "berth/v1/job.pb.h"

namespace berth::ctl {

// "peak 96 MiB of 256 MiB asked (38%), cpu 1.2 s, ran 12s"; without samples
// "ran 12s (memory and CPU not observed)"; with a peak but no samples (an
// OOM-killed run ended before its first sample: its limit) "peak 32 MiB ...,
// cpu not observed, ran 1s". `asked_bytes` <= 0: no "of".
std::string FormatUsage(const v1::ResourceUsage& u, int64_t asked_bytes);

// The PEAK column of `berthctl list`: "96 MiB", or "-" when not observed.
std::string FormatPeak(const v1::Job& job);

// GiB-hours for people: one decimal from 10, three below ("0.012"), and
// a mantissa below 0.001 ("4.2e-05"), so a short run's waste is not "0.0".
std::string FormatGibHours(double gib_hours);

// `berthctl rightsize`: one row per action, most wasted GiB-hours first,
// then the total; "no usage history yet" when empty.
void PrintRightSize(const v1::RightSizeResponse& r, std::ostream& out);

}  // namespace berth::ctl

#endif  // BERTH_TOOLS_CTL_FORMAT_USAGE_H_
