#include "server/daemon/http_port.h"

#include <sys/socket.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "planner/base/host_port.h"
#include "planner/base/status_macros.h"

namespace berth {

absl::StatusOr<HttpPort> BindHttpPort(const BerthdConfig& c) {
  ASSIGN_OR_RETURN(const HostPort address, ParseHostPort(c.metrics_listen));
  HttpPort out;
  out.tls = !c.tls_cert_file.empty();
  if (!out.tls) {
    out.server = std::make_unique<httplib::Server>();
  } else {
    auto https = std::make_unique<httplib::SSLServer>(
        c.tls_cert_file.c_str(), c.tls_key_file.c_str(),
        c.tls_client_ca_file.empty() ? nullptr : c.tls_client_ca_file.c_str());
    if (!https->is_valid()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "metrics_listen: cannot serve TLS with tls_cert '", c.tls_cert_file, "' and tls_key '",
          c.tls_key_file, "'",
          c.tls_client_ca_file.empty()
              ? ""
              : absl::StrCat(" (client CA '", c.tls_client_ca_file, "')"),
          ": unreadable, not PEM, or the key does not match the certificate"));
    }
    out.server = std::move(https);
  }
  // httplib's default sets SO_REUSEPORT, with which a second berthd binds
  // the same port and scrapes land on either; SO_REUSEADDR alone still
  // allows a restart while old connections linger.
  out.server->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  out.port = address.port == 0
                 ? out.server->bind_to_any_port(address.host)
                 : (out.server->bind_to_port(address.host, address.port) ? address.port : -1);
  if (out.port <= 0) {
    return absl::UnavailableError(absl::StrCat("metrics_listen: cannot bind ", c.metrics_listen));
  }
  return out;
}

bool DashboardRefusesPlaintext(const BerthdConfig& c) {
  absl::StatusOr<HostPort> address = ParseHostPort(c.metrics_listen);
  return c.tls_cert_file.empty() && !c.allow_plaintext_remote &&
         !(address.ok() && IsLoopbackHost(address->host));
}

}  // namespace berth
