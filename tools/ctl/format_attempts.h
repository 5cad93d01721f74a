// berthctl's text for a job's attempts (Job.attempt, Job.attempts).
#ifndef BERTH_TOOLS_CTL_FORMAT_ATTEMPTS_H_
#define BERTH_TOOLS_CTL_FORMAT_ATTEMPTS_H_

#include <string>

#include "berth/v1/job.pb.h"

namespace berth::ctl {

// The name of a requeue cause: "drain", "pool maintenance", "node drained",
// "node lost", "OOM retry", "engine stopped"; "unknown" for UNSPECIFIED.
std::string RequeueCauseName(v1::RequeueCause cause);

// One ended attempt on one line: "requeued (drain), exit 143, started
// 2026-11-27 02:00:00 UTC, ran 12s, node n1, log 1.2 KiB stdout / 0 B stderr:
// requeued: drain: kernel upgrade". Parts that are unknown are left out.
// A kept log of more than the cap adds "stdout cut: 40 MiB dropped of
// 104 MiB, first 32 MiB and last 32 MiB kept" per cut stream.
std::string FormatAttempt(const v1::Attempt& a);

// What a kept stream lost: "40 MiB dropped of 104 MiB, first 32 MiB and last
// 32 MiB kept"; "" when nothing was dropped (or it is unknown).
std::string FormatLogCut(const v1::LogCut& cut);

}  // namespace berth::ctl

#endif  // BERTH_TOOLS_CTL_FORMAT_ATTEMPTS_H_
