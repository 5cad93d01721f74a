#include "server/web/web_auth.h"

#include <sys/random.h>

#include <cstdint>
#include <cstdlib>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "server/web/html.h"

namespace berth::web {
namespace {

// 32 bytes from the kernel's CSPRNG, as 64 hex digits. getrandom blocks
// only until the pool is first initialised; a failure here would make
// guessable ids, so it is fatal.
std::string NewSessionId() {
  unsigned char bytes[32];
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n <= 0) std::abort();
    got += static_cast<size_t>(n);
  }
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes));
}

}  // namespace

std::string SessionIdOf(absl::string_view cookie_header) {
  for (absl::string_view part : absl::StrSplit(cookie_header, ';')) {
    part = absl::StripAsciiWhitespace(part);
    if (absl::ConsumePrefix(&part, kCookieName) && absl::ConsumePrefix(&part, "=") &&
        !part.empty()) {
      return std::string(part);
    }
  }
  return "";
}

std::string SessionCookie(absl::string_view id, absl::Duration lifetime, bool secure) {
  return absl::StrCat(kCookieName, "=", id, "; Path=/ui; Max-Age=",
                      absl::ToInt64Seconds(lifetime), "; HttpOnly; SameSite=Strict",
                      secure ? "; Secure" : "");
}

std::string ExpiredSessionCookie(bool secure) {
  return absl::StrCat(kCookieName, "=; Path=/ui; Max-Age=0; HttpOnly; SameSite=Strict",
                      secure ? "; Secure" : "");
}

std::string LoginBody(absl::string_view error) {
  std::string out;
  if (!error.empty()) absl::StrAppend(&out, "<p class=\"warn\">", HtmlEscape(error), "</p>");
  absl::StrAppend(&out,
                  "<p>Log in with a Berth API token (any role: reader, pusher or operator).</p>"
                  "<form method=\"post\" action=\"/ui/login\">"
                  "<label>Token <input type=\"password\" name=\"token\" id=\"token\" "
                  "autocomplete=\"current-password\" size=\"48\"></label> "
                  "<button type=\"submit\" id=\"login\">Log in</button></form>");
  return out;
}

WebSessions::WebSessions(Clock& clock, Options options)
    : clock_(clock), options_(options) {}

std::string WebSessions::Create(std::string token) {
  std::string id = NewSessionId();
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  if (sessions_.size() >= options_.max_sessions) {
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      auto next = std::next(it);
      if (it->second.ends <= now) sessions_.erase(it);
      it = next;
    }
  }
  while (!sessions_.empty() && sessions_.size() >= options_.max_sessions) {
    auto soonest = sessions_.begin();
    for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
      if (it->second.ends < soonest->second.ends) soonest = it;
    }
    sessions_.erase(soonest);
  }
  sessions_[id] = Session{std::move(token), now + options_.lifetime};
  return id;
}

std::optional<std::string> WebSessions::TokenOf(absl::string_view id) {
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return std::nullopt;
  if (it->second.ends <= now) {
    sessions_.erase(it);
    return std::nullopt;
  }
  return it->second.token;
}

void WebSessions::End(absl::string_view id) {
  absl::MutexLock lock(&mu_);
  sessions_.erase(id);
}

size_t WebSessions::size() const {
  absl::MutexLock lock(&mu_);
  return sessions_.size();
}

}  // namespace berth::web
