#include "server/web/dashboard_http.h"

#include "absl/strings/str_cat.h"
#include "server/web/html.h"

namespace berth::web {
namespace {

// Nothing is fetched from elsewhere, no other site may frame the pages, and
// no inline script runs: defence in depth behind the escaping. Pages
// without live parts run no script at all; live ones only berthd's own
// /ui/static/live.js (a same-origin file: a job's strings are never served
// as script, every other answer being HTML or text with nosniff), which
// opens event streams to berthd only.
constexpr char kCsp[] =
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'";
constexpr char kLiveCsp[] =
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; script-src 'self'; connect-src 'self'";

}  // namespace

void SetSafetyHeaders(httplib::Response& res, bool live) {
  res.set_header("Content-Security-Policy", live ? kLiveCsp : kCsp);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Cache-Control", "no-store");
  res.set_header("Referrer-Policy", "no-referrer");
}

void SendHtml(httplib::Response& res, int status, const std::string& html, bool live) {
  res.status = status;
  SetSafetyHeaders(res, live);
  res.set_content(html, "text/html; charset=utf-8");
}

int HttpStatusOf(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kInvalidArgument: return 400;
    case absl::StatusCode::kOutOfRange: return 400;
    case absl::StatusCode::kUnavailable: return 503;
    case absl::StatusCode::kResourceExhausted: return 503;
    case absl::StatusCode::kPermissionDenied: return 403;
    case absl::StatusCode::kUnauthenticated: return 401;
    default: return 500;
  }
}

void SendError(httplib::Response& res, const absl::Status& s) {
  PageOptions po;
  po.title = "Error";
  // Unavailable for now (a plan being prepared): the page tries again.
  if (s.code() == absl::StatusCode::kUnavailable) po.refresh_seconds = 2;
  SendHtml(res, HttpStatusOf(s),
           RenderPage(po, absl::StrCat("<p class=\"warn\" id=\"error\">",
                                       HtmlEscape(s.ToString()), "</p>")));
}

std::string Param(const httplib::Request& req, const char* name) {
  return req.has_param(name) ? req.get_param_value(name) : std::string();
}

}  // namespace berth::web
