// berthctl's command line: flags parsed by tools/base/cli_args.h (so every
// error is one clear line and the tool exits 2) and the exit codes scripts
// rely on. Thread-compatible (no shared state).
#ifndef BERTH_TOOLS_CTL_ARGS_H_
#define BERTH_TOOLS_CTL_ARGS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/base/cli_args.h"

namespace berth {
namespace ctl {

// Exit codes (docs/api-cookbook.md "Exit codes").
inline constexpr int kExitOk = 0;
inline constexpr int kExitServerError = 1;   // the server answered with an error
inline constexpr int kExitUsage = 2;         // bad flags, arguments or input files
inline constexpr int kExitUnreachable = 3;   // no connection to berthd

// An INVALID_ARGUMENT status marked as the caller's mistake (exit 2), as
// opposed to an error the server returned (exit 1).
absl::Status UsageError(absl::string_view message);
// Marks `status` as a usage error (keeps its code and message).
absl::Status AsUsageError(absl::Status status);
// A status marked as "could not reach the server" (exit 3).
absl::Status UnreachableError(absl::StatusCode code, absl::string_view message);

// Appends "\n  hint: <hint>" to a failed status's message, keeping its code
// and marks; `status` unchanged if OK or `hint` is empty.
absl::Status WithHint(absl::Status status, absl::string_view hint);

// The exit code for a failed command: 2 for usage errors, 3 for unreachable
// (marked, or UNAVAILABLE from the server), 1 otherwise; 0 for OK.
int ExitCodeFor(const absl::Status& status);

using FlagSpec = cli::FlagSpec;
using Args = cli::Args;
using cli::FirstPositional;

// cli::ParseFlags (tools/base/cli_args.h) with berthctl's context: its
// errors become usage errors (exit 2) naming the subcommand
// ("berthctl list: unknown flag --foo (see berthctl help)").
[[nodiscard]] absl::StatusOr<Args> ParseArgs(const std::vector<std::string>& argv,
                                             const std::vector<FlagSpec>& specs,
                                             absl::string_view command);

// Whole numbers for flags: usage errors naming `what` unless `text` is an
// integer in [min, max].
[[nodiscard]] absl::StatusOr<int64_t> ParseInt(absl::string_view what, absl::string_view text,
                                               int64_t min, int64_t max);

}  // namespace ctl
}  // namespace berth

#endif  // BERTH_TOOLS_CTL_ARGS_H_
