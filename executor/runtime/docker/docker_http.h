// DockerHttp: a minimal HTTP/1.1 client for the Docker Engine API (libcurl).
//
// Reaches the engine over its unix socket ("unix:///var/run/docker.sock") or
// over TCP ("http://host:2375", "https://host:2376" with TLS client
// certificates). Every request gets its own connection (a fresh curl easy
// handle), so requests never share state and a broken connection affects one
// request only.
//
// DockerErrorToStatus is the one place where curl errors, HTTP statuses and
// Docker's error bodies become absl::Status.
//
// Thread-safe: a DockerHttp may be used from any number of threads at once.
#ifndef BERTH_EXECUTOR_RUNTIME_DOCKER_DOCKER_HTTP_H_
#define BERTH_EXECUTOR_RUNTIME_DOCKER_DOCKER_HTTP_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace berth {

struct DockerEndpoint {
  // "unix://<socket path>", "http://host:port" or "https://host:port".
  std::string url = "unix:///var/run/docker.sock";
  // For https: PEM client certificate and key (mutual TLS), and the CA that
  // signed the engine's certificate. Empty: not set (system CAs for ca).
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_ca_file;
  // Prefix of every path; pins the API version (the engine here speaks 1.41).
  std::string api_version = "v1.41";
};

struct HttpRequest {
  std::string method = "GET";
  // Path and query after the version prefix, e.g. "/containers/json?all=1".
  std::string path;
  // JSON body; empty: none.
  std::string body;
  // Whole-request limit (connect included). Zero: no limit (streams).
  absl::Duration timeout = absl::Seconds(10);
  // When set: the transfer fails (DEADLINE_EXCEEDED) once no byte has come
  // for this long (counted in whole seconds, at least 1). For a long read
  // whose length is unknown: a slow but steady answer is not cut off.
  absl::Duration stall_timeout = absl::ZeroDuration();
};

struct HttpResponse {
  long status = 0;
  std::string body;
};

class DockerHttp {
 public:
  // Fails (INVALID_ARGUMENT) on a URL that is neither unix://, http:// nor
  // https://.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<DockerHttp>> Create(
      DockerEndpoint endpoint);

  // Sends one request and returns whatever HTTP status the engine answered
  // (callers convert non-2xx with DockerErrorToStatus). Transport failures
  // are returned as status: UNAVAILABLE (cannot connect, connection dropped,
  // empty reply), DEADLINE_EXCEEDED (timeout), FAILED_PRECONDITION (TLS
  // certificate problems), INTERNAL.
  [[nodiscard]] absl::StatusOr<HttpResponse> Do(const HttpRequest& req) const;

  // Like Do, but hands the body to `sink` chunk by chunk as it arrives
  // instead of collecting it. Stops early, returning the HTTP status, when
  // `sink` returns false or `should_stop` (polled about once a second, may
  // be null) returns true. For non-2xx answers the body is collected into
  // *error_body (when non-null) instead of going to the sink.
  [[nodiscard]] absl::StatusOr<long> Stream(
      const HttpRequest& req, const std::function<bool(absl::string_view)>& sink,
      const std::function<bool()>& should_stop, std::string* error_body) const;

  const DockerEndpoint& endpoint() const { return endpoint_; }

 private:
  explicit DockerHttp(DockerEndpoint endpoint);

  // Constant after construction.
  const DockerEndpoint endpoint_;
  std::string unix_socket_;  // set for unix:// endpoints
  std::string base_url_;     // "http://localhost" or the TCP URL, no slash
};

// Converts a failed exchange to a status. Exactly one of these applies:
// curl_code != 0 (a transport error, curl_error is curl's message), or an
// HTTP status outside 200-399 with Docker's JSON error body
// ({"message": "..."}; other bodies are quoted as they are).
// HTTP: 400 INVALID_ARGUMENT, 401 UNAUTHENTICATED, 403 PERMISSION_DENIED,
// 404 NOT_FOUND, 409 ALREADY_EXISTS, other 4xx FAILED_PRECONDITION,
// 500 INTERNAL, 501 UNIMPLEMENTED, other 5xx UNAVAILABLE.
// curl: timeouts DEADLINE_EXCEEDED; connect/send/receive/empty reply
// UNAVAILABLE; certificate problems FAILED_PRECONDITION; else INTERNAL.
// The message starts with `context` (e.g. "create container berth-x").
// Returns OK for curl_code == 0 with a 2xx/3xx status.
absl::Status DockerErrorToStatus(int curl_code, absl::string_view curl_error,
                                 long http_status, absl::string_view body,
                                 absl::string_view context);

// True for errors worth retrying on an idempotent call: UNAVAILABLE,
// DEADLINE_EXCEEDED and INTERNAL (HTTP 500, which the engine also returns
// when it is overloaded or restarting).
bool IsRetryableDockerError(const absl::Status& s);

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_DOCKER_DOCKER_HTTP_H_
