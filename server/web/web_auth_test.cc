#include "server/web/web_auth.h"

#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "gtest/gtest.h"
#include "planner/base/simulated_clock.h"

namespace berth::web {
namespace {

TEST(WebAuth, SessionIdFromTheCookieHeader) {
  EXPECT_EQ(SessionIdOf("other=1; berth_session=abc"), "abc");
  EXPECT_EQ(SessionIdOf("berth_session_x=1; other=2"), "");
  EXPECT_EQ(SessionIdOf("berth_session="), "");
  EXPECT_EQ(SessionIdOf(""), "");
}

TEST(WebAuth, CookieIsHttpOnlyStrictAndExpires) {
  EXPECT_EQ(SessionCookie("0a1b", absl::Hours(12), false),
            "berth_session=0a1b; Path=/ui; Max-Age=43200; HttpOnly; SameSite=Strict");
  EXPECT_EQ(SessionIdOf(SessionCookie("0a1b", absl::Hours(1), false)), "0a1b");
  EXPECT_NE(SessionCookie("t", absl::Hours(1), true).find("; Secure"), std::string::npos);
  EXPECT_NE(ExpiredSessionCookie(false).find("Max-Age=0"), std::string::npos);
}

// The cookie carries a random id, never the token; the id maps to the token
// until logout or the end of its lifetime.
TEST(WebSessions, IdsAreRandomAndMapToTheTokenUntilTheyEnd) {
  SimulatedClock clock;
  WebSessions sessions(clock, {absl::Hours(12), 100});
  const std::string token = "reader-token-0123456789abcdef";
  std::set<std::string> ids;
  for (int i = 0; i < 50; ++i) {
    const std::string id = sessions.Create(token);
    EXPECT_EQ(id.size(), 64u);
    for (char c : id) EXPECT_TRUE(absl::ascii_isxdigit(static_cast<unsigned char>(c))) << id;
    EXPECT_EQ(id.find(token), std::string::npos);
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 50u);  // no repeats
  const std::string id = *ids.begin();
  ASSERT_EQ(sessions.TokenOf(id), token);
  EXPECT_EQ(sessions.TokenOf("not-a-session"), std::nullopt);
  sessions.End(id);
  EXPECT_EQ(sessions.TokenOf(id), std::nullopt);
  // The others expire with their lifetime (and are forgotten when asked).
  const std::string other = *ids.rbegin();
  clock.Advance(absl::Hours(12) - absl::Seconds(1));
  EXPECT_EQ(sessions.TokenOf(other), token);
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(sessions.TokenOf(other), std::nullopt);
  EXPECT_EQ(sessions.size(), 48u);
}

TEST(WebSessions, ALoginBeyondTheLimitEndsTheOldest) {
  SimulatedClock clock;
  WebSessions sessions(clock, {absl::Hours(1), 3});
  const std::string first = sessions.Create("t1");
  clock.Advance(absl::Seconds(1));
  const std::string second = sessions.Create("t2");
  const std::string third = sessions.Create("t3");
  const std::string fourth = sessions.Create("t4");
  EXPECT_EQ(sessions.size(), 3u);
  EXPECT_EQ(sessions.TokenOf(first), std::nullopt);
  EXPECT_EQ(sessions.TokenOf(second), "t2");
  EXPECT_EQ(sessions.TokenOf(fourth), "t4");
}

}  // namespace
}  // namespace berth::web
