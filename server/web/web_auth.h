// The dashboard's authentication: the gRPC API's tokens and roles
// (server/api/auth.h), carried by a request either as
// "Authorization: Bearer <token>" (scripts, curl) or as the session cookie
// the login form sets (browsers): berth_token=<token, percent-encoded>,
// HttpOnly (no script reads it), SameSite=Strict (no other site's page sends
// it), Path=/ui, and Secure when the dashboard is served over TLS.
//
// Every page needs a token that may read the plan (every role: the
// GetPlan policy); a job's full log needs one that may call ReadJobLog
// (operators, and readers with --readers_read_logs).
//
// Thread-safe: pure functions.
#ifndef BERTH_SERVER_WEB_WEB_AUTH_H_
#define BERTH_SERVER_WEB_WEB_AUTH_H_

#include <string>

#include "absl/strings/string_view.h"

namespace berth::web {

inline constexpr char kCookieName[] = "berth_token";
// The gRPC methods whose policy decides what the dashboard shows.
inline constexpr char kPageMethod[] = "/berth.v1.Executor/GetPlan";
inline constexpr char kFullLogMethod[] = "/berth.v1.Executor/ReadJobLog";

// The "authorization" value to check (Authenticator::Authorize): the
// Authorization header if the request has one, else "Bearer <token>" from
// the session cookie, else "" (refused as UNAUTHENTICATED).
std::string AuthorizationOf(absl::string_view authorization_header,
                            absl::string_view cookie_header);

// The Set-Cookie value that logs a browser in with `token`.
std::string SessionCookie(absl::string_view token, bool secure);
// The Set-Cookie value that logs it out (expires the cookie).
std::string ExpiredSessionCookie(bool secure);

// The login form's HTML body; `error` (plain text, may be empty) is shown
// above it.
std::string LoginBody(absl::string_view error);

}  // namespace berth::web

#endif  // BERTH_SERVER_WEB_WEB_AUTH_H_
