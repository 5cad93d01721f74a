// A small hand-written command-line parser shared by berthctl and
// berth-plan, so that every error is one clear line (the tools exit 2).
//
// Flags: "--name value" or "--name=value"; boolean flags take no value;
// flags may appear anywhere among the positional arguments; "--" ends the
// flags. A single-dash argument other than "-" is refused (flags start with
// "--"); pass such a value after "--". Thread-compatible (no shared state).
#ifndef BERTH_TOOLS_BASE_CLI_ARGS_H_
#define BERTH_TOOLS_BASE_CLI_ARGS_H_

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace berth::cli {

struct FlagSpec {
  std::string name;  // without "--"
  bool takes_value = true;
  bool repeatable = false;
};

struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>> values;  // booleans: {""}
  bool Has(const std::string& name) const { return values.count(name) > 0; }
  // The value given (the last one for repeatable flags). REQUIRES: Has(name).
  const std::string& Get(const std::string& name) const { return values.at(name).back(); }
  // Every value given, in order; empty if none.
  std::vector<std::string> GetAll(const std::string& name) const {
    auto it = values.find(name);
    return it == values.end() ? std::vector<std::string>{} : it->second;
  }
};

// Parses `argv` (without the program name) against `specs`. INVALID_ARGUMENT,
// with one of these messages, for the caller to put in context:
//   "unknown flag --NAME<unknown_flag_hint>"
//   "unknown option -X (flags start with --)"
//   "--NAME needs a value" / "--NAME takes no value"
//   "--NAME given more than once"
[[nodiscard]] absl::StatusOr<Args> ParseFlags(const std::vector<std::string>& argv,
                                             const std::vector<FlagSpec>& specs,
                                             absl::string_view unknown_flag_hint = "");

// Index of the first positional argument of `argv` (flags in `specs` that
// take a value skip it); argv.size() if there is none.
size_t FirstPositional(const std::vector<std::string>& argv,
                       const std::vector<FlagSpec>& specs);

// Splits a comma list ("8,16,24") into non-empty items, blanks trimmed;
// INVALID_ARGUMENT naming `what` and the text if an item is empty, e.g.
//   --max-workers: "8,,16": empty item in comma list
[[nodiscard]] absl::StatusOr<std::vector<std::string>> SplitList(absl::string_view what,
                                                                 absl::string_view text);

}  // namespace berth::cli

#endif  // BERTH_TOOLS_BASE_CLI_ARGS_H_
