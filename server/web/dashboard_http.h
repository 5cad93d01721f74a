// What the dashboard's handlers share (dashboard*.cc): the answers' headers
// and errors. Internal to the dashboard.
#ifndef BERTH_SERVER_WEB_DASHBOARD_HTTP_H_
#define BERTH_SERVER_WEB_DASHBOARD_HTTP_H_

#include <string>

#include "absl/status/status.h"
#include "httplib.h"

namespace berth::web {

// The headers every dashboard answer carries: its Content-Security-Policy
// (`live`: the page loads /ui/static/live.js and opens event streams to
// /ui; else no script at all), nosniff, no-store, no referrer.
void SetSafetyHeaders(httplib::Response& res, bool live);
// An HTML page with those headers.
void SendHtml(httplib::Response& res, int status, const std::string& html, bool live = false);
// `s` as an error page with its HTTP status (404, 400, 503 ...).
void SendError(httplib::Response& res, const absl::Status& s);
int HttpStatusOf(const absl::Status& s);
// A query parameter's value, "" if absent.
std::string Param(const httplib::Request& req, const char* name);

}  // namespace berth::web

#endif  // BERTH_SERVER_WEB_DASHBOARD_HTTP_H_
