#include "tools/ctl/args.h"

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"

namespace berth {
namespace ctl {
namespace {

constexpr char kUsagePayload[] = "berthctl/usage";
constexpr char kUnreachablePayload[] = "berthctl/unreachable";

const FlagSpec* Find(const std::vector<FlagSpec>& specs, absl::string_view name) {
  for (const FlagSpec& s : specs) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace

absl::Status UsageError(absl::string_view message) {
  return AsUsageError(absl::InvalidArgumentError(message));
}

absl::Status AsUsageError(absl::Status status) {
  if (!status.ok()) status.SetPayload(kUsagePayload, absl::Cord("1"));
  return status;
}

absl::Status UnreachableError(absl::StatusCode code, absl::string_view message) {
  absl::Status status(code, message);
  status.SetPayload(kUnreachablePayload, absl::Cord("1"));
  return status;
}

absl::Status WithHint(absl::Status status, absl::string_view hint) {
  if (status.ok() || hint.empty()) return status;
  absl::Status out(status.code(), absl::StrCat(status.message(), "\n  hint: ", hint));
  status.ForEachPayload(
      [&](absl::string_view url, const absl::Cord& p) { out.SetPayload(url, p); });
  return out;
}

int ExitCodeFor(const absl::Status& status) {
  if (status.ok()) return kExitOk;
  if (status.GetPayload(kUsagePayload).has_value()) return kExitUsage;
  if (status.GetPayload(kUnreachablePayload).has_value() ||
      status.code() == absl::StatusCode::kUnavailable) {
    return kExitUnreachable;
  }
  return kExitServerError;
}

absl::StatusOr<Args> ParseArgs(const std::vector<std::string>& argv,
                               const std::vector<FlagSpec>& specs,
                               absl::string_view command) {
  Args args;
  bool flags_done = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (flags_done || !absl::StartsWith(a, "--") || a == "-") {
      args.positional.push_back(a);
      continue;
    }
    if (a == "--") {
      flags_done = true;
      continue;
    }
    std::string name = a.substr(2);
    std::string value;
    bool has_inline_value = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_inline_value = true;
    }
    const FlagSpec* spec = Find(specs, name);
    if (spec == nullptr) {
      return UsageError(absl::StrCat("berthctl ", command, ": unknown flag --", name,
                                     " (see berthctl help)"));
    }
    if (!spec->takes_value) {
      if (has_inline_value) {
        return UsageError(
            absl::StrCat("berthctl ", command, ": --", name, " takes no value"));
      }
    } else if (!has_inline_value) {
      if (i + 1 >= argv.size()) {
        return UsageError(absl::StrCat("berthctl ", command, ": --", name, " needs a value"));
      }
      value = argv[++i];
    }
    std::vector<std::string>& values = args.values[name];
    if (!values.empty() && !spec->repeatable) {
      return UsageError(
          absl::StrCat("berthctl ", command, ": --", name, " given more than once"));
    }
    values.push_back(value);
  }
  return args;
}

size_t FirstPositional(const std::vector<std::string>& argv,
                       const std::vector<FlagSpec>& all_specs) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--") return i + 1 < argv.size() ? i + 1 : argv.size();
    if (!absl::StartsWith(a, "--") || a == "-") return i;
    if (a.find('=') != std::string::npos) continue;
    const FlagSpec* spec = Find(all_specs, absl::string_view(a).substr(2));
    if (spec != nullptr && spec->takes_value) ++i;
  }
  return argv.size();
}

absl::StatusOr<int64_t> ParseInt(absl::string_view what, absl::string_view text, int64_t min,
                                 int64_t max) {
  int64_t v = 0;
  if (!absl::SimpleAtoi(text, &v) || v < min || v > max) {
    return UsageError(absl::StrCat(what, ": \"", text, "\": expected a whole number from ",
                                   min, " to ", max));
  }
  return v;
}

}  // namespace ctl
}  // namespace berth
