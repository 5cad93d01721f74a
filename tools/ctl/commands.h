// berthctl's subcommands: each parses its own flags and arguments, calls
// berthd through BerthClient and prints a human table or proto3 JSON.
//
// Thread-compatible: one command runs at a time.
#ifndef BERTH_TOOLS_CTL_COMMANDS_H_
#define BERTH_TOOLS_CTL_COMMANDS_H_

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tools/client/client.h"
#include "tools/ctl/args.h"

namespace berth {
namespace ctl {

struct CommandContext {
  // Connects on first use (so local input is checked before the network):
  // the client, or an unreachable/usage error. Later calls return the same
  // client. Set by main().
  std::function<absl::StatusOr<BerthClient*>()> connect;
  std::string token;              // for calls made on the stub directly
  Args args;                      // global and command flags; positional[0] is the command
  bool json = false;
  absl::Time now;
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;
};

struct Command {
  std::string name;          // "push", "budgets", ...
  std::string synopsis;      // for help
  std::vector<FlagSpec> flags;
  // Number of positional arguments after the command name.
  size_t min_args = 0;
  size_t max_args = 0;
  absl::Status (*run)(CommandContext& ctx) = nullptr;
};

// Every subcommand, in help order.
const std::vector<Command>& Commands();

}  // namespace ctl
}  // namespace berth

#endif  // BERTH_TOOLS_CTL_COMMANDS_H_
