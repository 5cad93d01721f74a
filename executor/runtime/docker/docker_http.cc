#include "executor/runtime/docker/docker_http.h"

#include <curl/curl.h>

#include <memory>
#include <utility>

#include "absl/base/call_once.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace berth {
namespace {

absl::once_flag g_curl_init;

void InitCurlOnce() {
  absl::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_ALL); });
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

// State shared with curl's callbacks during one transfer.
struct Transfer {
  CURL* curl = nullptr;
  const std::function<bool(absl::string_view)>* sink = nullptr;
  const std::function<bool()>* should_stop = nullptr;
  std::string collected;  // body when there is no sink, or an error body
  bool stopped = false;   // sink or should_stop asked to end the transfer
};

size_t OnWrite(char* data, size_t size, size_t nmemb, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * nmemb;
  long status = 0;
  curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
  const bool ok_status = status >= 200 && status < 300;
  if (t->sink == nullptr || !ok_status) {
    // Error bodies are small; cap them anyway.
    if (t->collected.size() < (1 << 20)) t->collected.append(data, n);
    return n;
  }
  if (!(*t->sink)(absl::string_view(data, n))) {
    t->stopped = true;
    return 0;  // aborts with CURLE_WRITE_ERROR
  }
  return n;
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  if (t->should_stop != nullptr && *t->should_stop && (*t->should_stop)()) {
    t->stopped = true;
    return 1;  // aborts with CURLE_ABORTED_BY_CALLBACK
  }
  return 0;
}

}  // namespace

absl::Status DockerErrorToStatus(int curl_code, absl::string_view curl_error,
                                 long http_status, absl::string_view body,
                                 absl::string_view context) {
  if (curl_code != CURLE_OK) {
    const std::string msg =
        absl::StrCat(context, ": docker API transport error: ",
                     curl_error.empty() ? curl_easy_strerror(
                                              static_cast<CURLcode>(curl_code))
                                        : curl_error);
    switch (static_cast<CURLcode>(curl_code)) {
      case CURLE_OPERATION_TIMEDOUT:
        return absl::DeadlineExceededError(msg);
      case CURLE_COULDNT_CONNECT:
      case CURLE_COULDNT_RESOLVE_HOST:
      case CURLE_COULDNT_RESOLVE_PROXY:
      case CURLE_GOT_NOTHING:
      case CURLE_SEND_ERROR:
      case CURLE_RECV_ERROR:
      case CURLE_PARTIAL_FILE:
      case CURLE_SSL_CONNECT_ERROR:
        return absl::UnavailableError(msg);
      case CURLE_SSL_CERTPROBLEM:
      case CURLE_SSL_CACERT_BADFILE:
      case CURLE_PEER_FAILED_VERIFICATION:
      case CURLE_SSL_CIPHER:
        return absl::FailedPreconditionError(msg);
      default:
        return absl::InternalError(msg);
    }
  }
  if (http_status >= 200 && http_status < 400) return absl::OkStatus();

  std::string detail;
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) {
    detail = j["message"].get<std::string>();
  } else {
    detail = std::string(body.substr(0, 512));
  }
  const std::string msg =
      absl::StrCat(context, ": docker API HTTP ", http_status, ": ", detail);
  switch (http_status) {
    case 400: return absl::InvalidArgumentError(msg);
    case 401: return absl::UnauthenticatedError(msg);
    case 403: return absl::PermissionDeniedError(msg);
    case 404: return absl::NotFoundError(msg);
    case 409: return absl::AlreadyExistsError(msg);
    case 500: return absl::InternalError(msg);
    case 501: return absl::UnimplementedError(msg);
    default: break;
  }
  if (http_status >= 500) return absl::UnavailableError(msg);
  if (http_status >= 400) return absl::FailedPreconditionError(msg);
  return absl::InternalError(msg);  // 1xx or nonsense
}

bool IsRetryableDockerError(const absl::Status& s) {
  return s.code() == absl::StatusCode::kUnavailable ||
         s.code() == absl::StatusCode::kDeadlineExceeded ||
         s.code() == absl::StatusCode::kInternal;
}

absl::StatusOr<std::unique_ptr<DockerHttp>> DockerHttp::Create(
    DockerEndpoint endpoint) {
  const std::string& url = endpoint.url;
  if (!absl::StartsWith(url, "unix://") && !absl::StartsWith(url, "http://") &&
      !absl::StartsWith(url, "https://")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "docker endpoint '", url, "' is not unix://, http:// or https://"));
  }
  return std::unique_ptr<DockerHttp>(new DockerHttp(std::move(endpoint)));
}

DockerHttp::DockerHttp(DockerEndpoint endpoint)
    : endpoint_(std::move(endpoint)) {
  InitCurlOnce();
  absl::string_view url = endpoint_.url;
  if (absl::ConsumePrefix(&url, "unix://")) {
    unix_socket_ = std::string(url);
    base_url_ = "http://localhost";
  } else {
    while (absl::ConsumeSuffix(&url, "/")) {
    }
    base_url_ = std::string(url);
  }
}

absl::StatusOr<HttpResponse> DockerHttp::Do(const HttpRequest& req) const {
  std::string body;
  std::string error_body;
  const std::function<bool(absl::string_view)> sink =
      [&body](absl::string_view chunk) {
        body.append(chunk.data(), chunk.size());
        return true;
      };
  absl::StatusOr<long> status = Stream(req, sink, nullptr, &error_body);
  if (!status.ok()) return status.status();
  HttpResponse resp;
  resp.status = *status;
  resp.body = (*status >= 200 && *status < 300) ? std::move(body)
                                                 : std::move(error_body);
  return resp;
}

absl::StatusOr<long> DockerHttp::Stream(
    const HttpRequest& req, const std::function<bool(absl::string_view)>& sink,
    const std::function<bool()>& should_stop, std::string* error_body) const {
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) return absl::InternalError("curl_easy_init failed");
  CURL* c = curl.get();
  const std::string url =
      absl::StrCat(base_url_, "/", endpoint_.api_version, req.path);
  char errbuf[CURL_ERROR_SIZE] = {0};

  Transfer t;
  t.curl = c;
  t.sink = &sink;
  t.should_stop = &should_stop;

  std::unique_ptr<curl_slist, SlistDeleter> headers;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &OnWrite);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, &OnProgress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
  if (!unix_socket_.empty()) {
    curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, unix_socket_.c_str());
  }
  if (!endpoint_.tls_cert_file.empty()) {
    curl_easy_setopt(c, CURLOPT_SSLCERT, endpoint_.tls_cert_file.c_str());
  }
  if (!endpoint_.tls_key_file.empty()) {
    curl_easy_setopt(c, CURLOPT_SSLKEY, endpoint_.tls_key_file.c_str());
  }
  if (!endpoint_.tls_ca_file.empty()) {
    curl_easy_setopt(c, CURLOPT_CAINFO, endpoint_.tls_ca_file.c_str());
  }
  if (req.timeout > absl::ZeroDuration()) {
    const long ms = static_cast<long>(absl::ToInt64Milliseconds(req.timeout));
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ms < 1 ? 1L : ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, ms < 1 ? 1L : ms);
  } else {
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  }
  if (req.stall_timeout > absl::ZeroDuration()) {
    // Less than 1 byte/s over the whole window: the engine sends nothing.
    const int64_t s = absl::ToInt64Seconds(absl::Ceil(req.stall_timeout, absl::Seconds(1)));
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, static_cast<long>(s < 1 ? 1 : s));
  }
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  if (req.method == "POST" || !req.body.empty()) {
    // POSTFIELDS switches curl to POST; CUSTOMREQUEST above keeps the verb.
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, req.body.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(req.body.size()));
  }
  curl_slist* h = nullptr;
  h = curl_slist_append(h, "Content-Type: application/json");
  h = curl_slist_append(h, "Expect:");
  headers.reset(h);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);

  const CURLcode rc = curl_easy_perform(c);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  if (error_body != nullptr) *error_body = t.collected;
  if (t.stopped) return status;  // the caller ended the transfer on purpose
  if (rc != CURLE_OK) {
    return DockerErrorToStatus(rc, errbuf, 0, "",
                               absl::StrCat(req.method, " ", req.path));
  }
  return status;
}

}  // namespace berth
