// "host:port" addresses: berthd's gRPC and metrics listen addresses and the
// tools' targets. The one parser of the form; thread-safe pure functions.
#ifndef BERTH_PLANNER_BASE_HOST_PORT_H_
#define BERTH_PLANNER_BASE_HOST_PORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace berth {

struct HostPort {
  // As written, an IPv6 host keeping its brackets ("[::1]").
  std::string host;
  // 0-65535; 0 asks for any free port.
  int port = 0;
};

// Splits `address` at its last colon. INVALID_ARGUMENT saying why if there
// is no colon, the host is empty, or the port is not a number in 0-65535.
[[nodiscard]] absl::StatusOr<HostPort> ParseHostPort(absl::string_view address);

// True if `host` (as in HostPort::host) names the loopback interface:
// localhost, ::1 (bracketed or not) or 127.0.0.0/8.
bool IsLoopbackHost(absl::string_view host);

}  // namespace berth

#endif  // BERTH_PLANNER_BASE_HOST_PORT_H_
