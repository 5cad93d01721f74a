// The dashboard's authentication: the gRPC API's tokens and roles
// (server/api/auth.h), carried by a request either as
// "Authorization: Bearer <token>" (scripts, curl) or, for browsers, as a
// session: the login form trades a valid token for a random session id
// (256 bits from the kernel's CSPRNG) kept server-side with the token, and
// sets the cookie berth_session=<id>: HttpOnly (no script reads it),
// SameSite=Strict (no other site's page sends it), Path=/ui, Max-Age = the
// session's lifetime, and Secure when the dashboard is served over TLS. The
// token itself never reaches the browser's cookie store, so a leaked cookie
// (a browser profile, a proxy log) is worth one session, not the token.
//
// A session ends at logout, when its lifetime (from login) is over, or when
// its token stops being valid (removed from --token_file and reloaded):
// every request re-checks the token with the Authenticator. Sessions live
// in memory: a berthd restart logs every browser out.
//
// Every page needs a token that may read the plan (every role: the
// GetPlan policy); a job's full log needs one that may call ReadJobLog
// (operators, and readers with --readers_read_logs); a job's environment
// values one that may Pause (operators: readers see the names only).
#ifndef BERTH_SERVER_WEB_WEB_AUTH_H_
#define BERTH_SERVER_WEB_WEB_AUTH_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "planner/base/clock.h"

namespace berth::web {

inline constexpr char kCookieName[] = "berth_session";
// The gRPC methods whose policy decides what the dashboard shows.
inline constexpr char kPageMethod[] = "/berth.v1.Executor/GetPlan";
inline constexpr char kFullLogMethod[] = "/berth.v1.Executor/ReadJobLog";
// Operators only: environment values on a job's page.
inline constexpr char kOperatorMethod[] = "/berth.v1.Executor/Pause";

// The session id the Cookie header carries, or "" if none.
std::string SessionIdOf(absl::string_view cookie_header);

// The Set-Cookie value that logs a browser in with session `id` for
// `lifetime`.
std::string SessionCookie(absl::string_view id, absl::Duration lifetime, bool secure);
// The Set-Cookie value that logs it out (expires the cookie).
std::string ExpiredSessionCookie(bool secure);

// The login form's HTML body; `error` (plain text, may be empty) is shown
// above it.
std::string LoginBody(absl::string_view error);

// The live sessions. Thread-safe. `clock` must outlive it.
class WebSessions {
 public:
  struct Options {
    // From login; the browser is then asked to log in again.
    absl::Duration lifetime = absl::Hours(12);
    // Beyond this many live sessions a login ends the one closest to its
    // end (logins need a valid token, so this only bounds memory).
    size_t max_sessions = 10'000;
  };
  WebSessions(Clock& clock, Options options);

  // A new session for `token` (already checked by the caller); its id.
  std::string Create(std::string token);
  // The token of live session `id`; nullopt if unknown or over (then
  // forgotten).
  std::optional<std::string> TokenOf(absl::string_view id);
  // Ends session `id` (no-op if unknown).
  void End(absl::string_view id);
  size_t size() const;
  absl::Duration lifetime() const { return options_.lifetime; }

 private:
  struct Session {
    std::string token;
    absl::Time ends;
  };
  Clock& clock_;
  const Options options_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Session> sessions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace berth::web

#endif  // BERTH_SERVER_WEB_WEB_AUTH_H_
