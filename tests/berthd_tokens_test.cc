// Rotating tokens without a restart (issue 32 #4): SIGHUP makes a live
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

}  // namespace
}  // namespace berth
