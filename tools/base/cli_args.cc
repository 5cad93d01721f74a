#include "tools/base/cli_args.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace berth::cli {
namespace {

const FlagSpec* Find(const std::vector<FlagSpec>& specs, absl::string_view name) {
  for (const FlagSpec& s : specs) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

bool IsSingleDashOption(const std::string& a) {
  return a.size() > 1 && a[0] == '-' && a[1] != '-';
}

}  // namespace

absl::StatusOr<Args> ParseFlags(const std::vector<std::string>& argv,
                               const std::vector<FlagSpec>& specs,
                               absl::string_view unknown_flag_hint) {
  Args args;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--") {
      args.positional.insert(args.positional.end(), argv.begin() + i + 1, argv.end());
      break;
    }
    if (IsSingleDashOption(a)) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown option ", a, " (flags start with --)"));
    }
    if (!absl::StartsWith(a, "--")) {
      args.positional.push_back(a);
      continue;
    }
    std::string name = a.substr(2);
    std::string value;
    bool inline_value = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    const FlagSpec* spec = Find(specs, name);
    if (spec == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag --", name, unknown_flag_hint));
    }
    if (!spec->takes_value) {
      if (inline_value) {
        return absl::InvalidArgumentError(absl::StrCat("--", name, " takes no value"));
      }
    } else if (!inline_value) {
      if (i + 1 >= argv.size()) {
        return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a value"));
      }
      value = argv[++i];
    }
    std::vector<std::string>& values = args.values[name];
    if (!values.empty() && !spec->repeatable) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, " given more than once"));
    }
    values.push_back(value);
  }
  return args;
}

size_t FirstPositional(const std::vector<std::string>& argv,
                       const std::vector<FlagSpec>& specs) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--") return i + 1 < argv.size() ? i + 1 : argv.size();
    if (!absl::StartsWith(a, "--")) return i;
    if (a.find('=') != std::string::npos) continue;
    const FlagSpec* spec = Find(specs, absl::string_view(a).substr(2));
    if (spec != nullptr && spec->takes_value) ++i;
  }
  return argv.size();
}

absl::StatusOr<std::vector<std::string>> SplitList(absl::string_view what,
                                                   absl::string_view text) {
  std::vector<std::string> out;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    absl::string_view t = absl::StripAsciiWhitespace(item);
    if (t.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": \"", text, "\": empty item in comma list"));
    }
    out.emplace_back(t);
  }
  return out;
}

}  // namespace berth::cli
