// berthctl watch: prints WatchEvents one line per event (or one JSON object
// per line), from a revision given or stored in a file, up to the current
// revision or (--follow) until SIGINT/SIGTERM or --limit events, and reports
// the last revision on stderr so that scripts can resume. --follow survives
// berthd restarts: on UNAVAILABLE (berthd shutting down, or unreachable; or a CANCELLED
// the client did not cause) it
// reconnects from the last revision printed, with a backoff of 100 ms
// doubling to 5 s, and says so on stderr. --from ahead of the current
// revision is INVALID_ARGUMENT with or without --follow.
//
// Thread-compatible. REQUIRES for --follow to stop cleanly on a signal:
// SIGINT and SIGTERM blocked in every thread before gRPC starts (main()).
#ifndef BERTH_TOOLS_CTL_WATCH_H_
#define BERTH_TOOLS_CTL_WATCH_H_

#include "absl/status/status.h"
#include "tools/ctl/commands.h"

namespace berth {
namespace ctl {

// Flags: --from REV, --save-revision FILE, --follow, --limit N, --json.
absl::Status RunWatch(CommandContext& ctx);

}  // namespace ctl
}  // namespace berth

#endif  // BERTH_TOOLS_CTL_WATCH_H_
