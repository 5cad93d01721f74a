// berth-plan's subcommands. Each takes the arguments after the subcommand
// name and returns what to print (held, or a function that writes it) and
// which files to write; main() prints and writes (atomically, only after the
// command succeeded), so a failing run leaves no partial output behind.
//
//   now       the plan for the file as-is (jobs arriving at time zero)
//   simulate  run the workload to completion under Berth's planner
//   compare   Berth beside the count-only baseline (MAX_WORKERS=N, FIFO)
//   sweep     one simulation per combination of budget lists
//   chart     simulate and write an SVG chart
//
// Errors: INVALID_ARGUMENT (bad flags, bad input: exit 2), NOT_FOUND /
// PERMISSION_DENIED (unreadable input: exit 2). Thread-compatible.
#ifndef BERTH_TOOLS_PLAN_COMMANDS_H_
#define BERTH_TOOLS_PLAN_COMMANDS_H_

#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace berth {
namespace plan {

struct CommandEnv {
  // Progress messages ("simulating 42%"); empty = none. main() shows them
  // on stderr only when stderr is a terminal.
  std::function<void(const std::string&)> progress;
};

struct CommandOutput {
  std::string text;  // for stdout
  // Or, for output too large to hold rendered (now's listing of a million
  // jobs): when set, main() calls it once, after writing `files`, to write
  // stdout instead of `text` (which is then empty). It cannot fail but for
  // the stream's own errors (main() checks the stream). It owns what it
  // renders.
  std::function<void(std::ostream*)> write;
  std::vector<std::pair<std::string, std::string>> files;  // path, contents
};

using Command = absl::StatusOr<CommandOutput> (*)(const std::vector<std::string>& args,
                                                  const CommandEnv& env);

absl::StatusOr<CommandOutput> RunNow(const std::vector<std::string>& args,
                                     const CommandEnv& env);
absl::StatusOr<CommandOutput> RunSimulate(const std::vector<std::string>& args,
                                          const CommandEnv& env);
absl::StatusOr<CommandOutput> RunCompare(const std::vector<std::string>& args,
                                         const CommandEnv& env);
absl::StatusOr<CommandOutput> RunSweep(const std::vector<std::string>& args,
                                       const CommandEnv& env);
absl::StatusOr<CommandOutput> RunChart(const std::vector<std::string>& args,
                                       const CommandEnv& env);
absl::StatusOr<CommandOutput> RunRightSize(const std::vector<std::string>& args,
                                           const CommandEnv& env);

// Usage text: all subcommands, or one.
std::string Usage(const std::string& command);

}  // namespace plan
}  // namespace berth

#endif  // BERTH_TOOLS_PLAN_COMMANDS_H_
