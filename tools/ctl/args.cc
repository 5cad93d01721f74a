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
  absl::StatusOr<Args> args = cli::ParseFlags(argv, specs, " (see berthctl help)");
  if (!args.ok()) {
    return UsageError(absl::StrCat("berthctl ", command, ": ", args.status().message()));
  }
  return args;
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
