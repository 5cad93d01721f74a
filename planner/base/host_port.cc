#include "planner/base/host_port.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace berth {

absl::StatusOr<HostPort> ParseHostPort(absl::string_view address) {
  const size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("'", address, "' is not host:port (no port)"));
  }
  if (colon == 0) {
    return absl::InvalidArgumentError(absl::StrCat("'", address, "' is not host:port (no host)"));
  }
  HostPort out;
  out.host = std::string(address.substr(0, colon));
  if (!absl::SimpleAtoi(address.substr(colon + 1), &out.port) || out.port < 0 ||
      out.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", address, "' is not host:port (the port is not a number in 0-65535)"));
  }
  return out;
}

bool IsLoopbackHost(absl::string_view host) {
  if (absl::StartsWith(host, "[") && absl::EndsWith(host, "]")) {
    host = host.substr(1, host.size() - 2);
  }
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}

}  // namespace berth
