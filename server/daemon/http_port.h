// berthd's HTTP port (/metrics and the /ui dashboard): the server, bound.
//
// Plaintext, or — when the gRPC port has TLS (BerthdConfig::tls_cert_file)
// — TLS with the same certificate and key, and with tls_client_ca_file a
// client certificate required (mTLS), as gRPC does. Whether the dashboard
// is served on it is DashboardRefusesPlaintext's rule.
#ifndef BERTH_SERVER_DAEMON_HTTP_PORT_H_
#define BERTH_SERVER_DAEMON_HTTP_PORT_H_

#include <memory>

#include "absl/status/statusor.h"
#include "httplib.h"
#include "server/daemon/config.h"

namespace berth {

struct HttpPort {
  std::unique_ptr<httplib::Server> server;  // an httplib::SSLServer with TLS
  int port = 0;                             // the bound port
  bool tls = false;
};

// A server bound to c.metrics_listen (port 0: any free port), not yet
// listening. Errors: INVALID_ARGUMENT for a bad address or TLS files that
// do not load (naming them), UNAVAILABLE if the address cannot be bound.
// REQUIRES: !c.metrics_listen.empty().
[[nodiscard]] absl::StatusOr<HttpPort> BindHttpPort(const BerthdConfig& c);

// True if /ui must refuse to serve: plaintext on a non-loopback address
// without allow_plaintext_remote (gRPC's rule).
bool DashboardRefusesPlaintext(const BerthdConfig& c);

}  // namespace berth

#endif  // BERTH_SERVER_DAEMON_HTTP_PORT_H_
