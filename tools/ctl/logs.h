// berthctl logs JOB: a job's complete logs (ReadJobLog): stdout to stdout,
// stderr to stderr, the latest attempt or --attempt N; --follow streams a
// running job's output live and goes on with the next attempt when the job
// is requeued, until the job has finished (or SIGINT/SIGTERM).
//
// Thread-compatible. REQUIRES for --follow to stop cleanly on a signal:
// SIGINT and SIGTERM blocked in every thread before gRPC starts (main()).
#ifndef BERTH_TOOLS_CTL_LOGS_H_
#define BERTH_TOOLS_CTL_LOGS_H_

#include "absl/status/status.h"
#include "tools/ctl/commands.h"

namespace berth {
namespace ctl {

// Flags: --follow, --attempt N, --stdout-only, --stderr-only.
absl::Status RunLogs(CommandContext& ctx);

}  // namespace ctl
}  // namespace berth

#endif  // BERTH_TOOLS_CTL_LOGS_H_
