// berthctl watch: prints WatchEvents one line per event (or one JSON object
// per line), from a revision given or stored in a file, up to the current
// revision or (--follow) until SIGINT/SIGTERM or --limit events, and reports
// the last revision on stderr so that scripts can resume.
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
