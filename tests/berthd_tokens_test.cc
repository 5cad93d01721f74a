// Rotating tokens without a restart: SIGHUP makes a live
// berthd re-read its --token_file; a bad file keeps the old tokens and the
// log says why.
#include <signal.h>
#include <sys/stat.h>

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "planner/base/proto_json.h"
#include "tests/berthd_process.h"

namespace berth {
namespace {

constexpr char kRotated[] = "rotated-operator-token-0123456789";

// Polls `ok` until it holds or 20 s pass.
bool Eventually(const std::function<bool()>& ok) {
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (absl::Now() < deadline) {
    if (ok()) return true;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return ok();
}

absl::Status Rewrite(const std::string& path, const std::string& contents) {
  absl::Status s = WriteFileAtomically(path, contents);
  if (s.ok() && chmod(path.c_str(), 0600) != 0) s = absl::InternalError("chmod");
  return s;
}

TEST(BerthdTokensTest, SighupReloadsTheTokenFileAndABadFileKeepsTheOld) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> started = BerthdProcess::Start({});
  ASSERT_TRUE(started.ok()) << started.status();
  BerthdProcess& b = **started;
  ASSERT_TRUE(b.Client(Role::kOperator)->GetBudgets().ok());

  // Rotate the operator's token; the reader's stays.
  ASSERT_TRUE(Rewrite(b.token_file(),
                      absl::StrCat("operator ops ", kRotated, "\nreader r ",
                                   TokenFor(Role::kReader), "\n"))
                  .ok());
  ASSERT_EQ(kill(b.pid(), SIGHUP), 0);
  EXPECT_TRUE(Eventually([&] { return b.ClientWithToken(kRotated)->GetBudgets().ok(); }))
      << b.Log();
  EXPECT_EQ(b.Client(Role::kOperator)->GetBudgets().status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(b.Client(Role::kReader)->GetBudgets().ok());
  EXPECT_TRUE(absl::StrContains(b.Log(), "tokens reloaded")) << b.Log();

  // A malformed file: refused, logged, the rotated tokens still work.
  ASSERT_TRUE(Rewrite(b.token_file(), "operator only-two-fields\n").ok());
  ASSERT_EQ(kill(b.pid(), SIGHUP), 0);
  EXPECT_TRUE(Eventually([&] {
    return absl::StrContains(b.Log(), "token reload refused; the old tokens stay");
  })) << b.Log();
  EXPECT_TRUE(b.ClientWithToken(kRotated)->GetBudgets().ok());
  EXPECT_TRUE(b.Running());
}

// A dashboard session holds a random id, not the token, and ends when its
// token is removed from --token_file (SIGHUP), not only at logout.
TEST(BerthdTokensTest, ADashboardSessionEndsWithItsToken) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> started = BerthdProcess::Start({});
  ASSERT_TRUE(started.ok()) << started.status();
  BerthdProcess& b = **started;
  httplib::Client http("127.0.0.1", b.metrics_port());
  const std::string reader = TokenFor(Role::kReader);
  httplib::Result login =
      http.Post("/ui/login", absl::StrCat("token=", reader), "application/x-www-form-urlencoded");
  ASSERT_TRUE(login) << httplib::to_string(login.error());
  ASSERT_EQ(login->status, 303);
  const std::string set_cookie = login->get_header_value("Set-Cookie");
  EXPECT_FALSE(absl::StrContains(set_cookie, reader)) << set_cookie;
  ASSERT_TRUE(absl::StartsWith(set_cookie, "berth_session=")) << set_cookie;
  const std::string cookie = set_cookie.substr(0, set_cookie.find(';'));
  auto status = [&] {
    httplib::Result r = http.Get("/ui", {{"Cookie", cookie}});
    return r ? r->status : -1;
  };
  EXPECT_EQ(status(), 200);
  // The reader's token goes; the operator's stays.
  ASSERT_TRUE(Rewrite(b.token_file(),
                      absl::StrCat("operator ops ", TokenFor(Role::kOperator), "\n"))
                  .ok());
  ASSERT_EQ(kill(b.pid(), SIGHUP), 0);
  EXPECT_TRUE(Eventually([&] {
    return b.Client(Role::kReader)->GetBudgets().status().code() ==
           absl::StatusCode::kUnauthenticated;
  })) << b.Log();
  EXPECT_EQ(status(), 401);
  // Putting the token back does not revive the ended session.
  ASSERT_TRUE(Rewrite(b.token_file(), absl::StrCat("operator ops ", TokenFor(Role::kOperator),
                                                   "\nreader r ", reader, "\n"))
                  .ok());
  ASSERT_EQ(kill(b.pid(), SIGHUP), 0);
  EXPECT_TRUE(Eventually([&] { return b.Client(Role::kReader)->GetBudgets().ok(); }));
  EXPECT_EQ(status(), 401);
}

}  // namespace
}  // namespace berth
