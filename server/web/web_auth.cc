#include "server/web/web_auth.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/ascii.h"
#include "server/web/html.h"

namespace berth::web {

std::string AuthorizationOf(absl::string_view authorization_header,
                            absl::string_view cookie_header) {
  if (!authorization_header.empty()) return std::string(authorization_header);
  for (absl::string_view part : absl::StrSplit(cookie_header, ';')) {
    part = absl::StripAsciiWhitespace(part);
    if (absl::ConsumePrefix(&part, kCookieName) && absl::ConsumePrefix(&part, "=") &&
        !part.empty()) {
      return absl::StrCat("Bearer ", QueryUnescape(part));
    }
  }
  return "";
}

std::string SessionCookie(absl::string_view token, bool secure) {
  return absl::StrCat(kCookieName, "=", QueryEscape(token),
                      "; Path=/ui; HttpOnly; SameSite=Strict", secure ? "; Secure" : "");
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

}  // namespace berth::web
