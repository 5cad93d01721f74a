#include "server/api/auth.h"

#include <sys/stat.h>

#include <cstdlib>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "berth/v1/executor.pb.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "planner/base/proto_json.h"

namespace berth {
namespace {

constexpr char kTokens[] =
    "# role name token\n"
    "pusher job-server pusher-token-0123456789\n"
    "\n"
    "operator ops operator-token-0123456789\n"
    "reader dashboard reader-token-0123456789\n";

std::string Method(absl::string_view name) {
  return absl::StrCat("/berth.v1.Executor/", name);
}

TEST(AuthTest, EveryExecutorMethodHasAPolicy) {
  // Every method of the generated service must have a policy: adding a
  // method without one makes this fail.
  const google::protobuf::ServiceDescriptor* sd =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
          "berth.v1.Executor");
  ASSERT_NE(sd, nullptr);
  for (int i = 0; i < sd->method_count(); ++i) {
    EXPECT_FALSE(Authenticator::AllowedRoles(Method(sd->method(i)->name())).empty())
        << sd->method(i)->name();
  }
}

TEST(AuthTest, EveryRoleOnEveryMethod) {
  absl::StatusOr<Authenticator> auth = Authenticator::FromString(kTokens, "t");
  ASSERT_TRUE(auth.ok()) << auth.status();
  EXPECT_EQ(auth->size(), 3u);
  struct RoleToken {
    Role role;
    const char* token;
  };
  const RoleToken roles[] = {{Role::kPusher, "pusher-token-0123456789"},
                             {Role::kOperator, "operator-token-0123456789"},
                             {Role::kReader, "reader-token-0123456789"}};
  const auto* sd = google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
      "berth.v1.Executor");
  ASSERT_NE(sd, nullptr);
  const std::set<std::string> reads = {"GetPlan", "ListJobs", "GetJob", "ExplainJob",
                                       "GetBudgets", "WatchEvents", "RightSize"};
  const std::set<std::string> pusher_only = {"SyncSnapshot", "DryRun"};
  for (int i = 0; i < sd->method_count(); ++i) {
    const std::string name = sd->method(i)->name();
    for (const RoleToken& rt : roles) {
      // Logs: operators by default (readers: AuthTest.ReadersReadLogsOnlyWhenAllowed).
      bool expected = name == "ReadJobLog" ? rt.role == Role::kOperator :
                      reads.count(name) > 0 ||
                      (rt.role == Role::kPusher && pusher_only.count(name) > 0) ||
                      (rt.role == Role::kOperator && reads.count(name) == 0 &&
                       pusher_only.count(name) == 0);
      absl::StatusOr<Principal> p =
          auth->Authorize(Method(name), absl::StrCat("Bearer ", rt.token));
      if (expected) {
        ASSERT_TRUE(p.ok()) << name << " as " << RoleName(rt.role) << ": " << p.status();
        EXPECT_EQ(p->role, rt.role);
      } else {
        EXPECT_EQ(p.status().code(), absl::StatusCode::kPermissionDenied)
            << name << " as " << RoleName(rt.role);
        EXPECT_TRUE(absl::StrContains(p.status().message(), RoleName(rt.role)));
      }
    }
    // No token, a malformed header and a wrong token are UNAUTHENTICATED.
    EXPECT_EQ(auth->Authorize(Method(name), "").status().code(),
              absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(auth->Authorize(Method(name), "reader-token-0123456789").status().code(),
              absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(auth->Authorize(Method(name), "Bearer wrong-token-0123456789")
                  .status().code(),
              absl::StatusCode::kUnauthenticated);
  }
}

TEST(AuthTest, ReadersReadLogsOnlyWhenAllowed) {
  absl::StatusOr<Authenticator> auth = Authenticator::FromString(kTokens, "t");
  ASSERT_TRUE(auth.ok());
  const std::string method = Method("ReadJobLog");
  absl::StatusOr<Principal> refused =
      auth->Authorize(method, "Bearer reader-token-0123456789");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "--readers_read_logs"))
      << refused.status();
  EXPECT_EQ(auth->Authorize(method, "Bearer pusher-token-0123456789").status().code(),
            absl::StatusCode::kPermissionDenied);
  auth->set_readers_read_logs(true);
  EXPECT_TRUE(auth->Authorize(method, "Bearer reader-token-0123456789").ok());
  EXPECT_TRUE(auth->Authorize(method, "Bearer operator-token-0123456789").ok());
  // The flag opens logs only, nothing else to readers.
  EXPECT_EQ(auth->Authorize(Method("Drain"), "Bearer reader-token-0123456789")
                .status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(auth->Authorize(method, "Bearer pusher-token-0123456789").status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(AuthTest, UnknownMethodFailsClosed) {
  absl::StatusOr<Authenticator> auth = Authenticator::FromString(kTokens, "t");
  ASSERT_TRUE(auth.ok());
  EXPECT_EQ(auth->Authorize("/berth.v1.Executor/Nope", "Bearer operator-token-0123456789")
                .status().code(),
            absl::StatusCode::kPermissionDenied);
}

struct BadFileCase {
  const char* name;
  const char* contents;
  const char* mentions;
};

class AuthBadFileTest : public ::testing::TestWithParam<BadFileCase> {};

TEST_P(AuthBadFileTest, RefusedNamingTheLine) {
  absl::StatusOr<Authenticator> auth =
      Authenticator::FromString(GetParam().contents, "tokens.txt");
  EXPECT_EQ(auth.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(auth.status().message(), GetParam().mentions))
      << auth.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AuthBadFileTest,
    ::testing::Values(
        BadFileCase{"empty", "# nothing\n", "no tokens"},
        BadFileCase{"two_fields", "pusher js\n", "tokens.txt:1: expected"},
        BadFileCase{"unknown_role", "admin root admin-token-0123456789\n",
                    "tokens.txt:1: unknown role 'admin'"},
        BadFileCase{"short_token", "reader r short\n", "shorter than 16"},
        BadFileCase{"repeated_token",
                    "reader a same-token-0123456789\nreader b same-token-0123456789\n",
                    "tokens.txt:2: token of 'b' repeats the token of 'a'"}),
    [](const ::testing::TestParamInfo<BadFileCase>& info) { return info.param.name; });

TEST(AuthTest, FileReadableByOthersIsRefused) {
  std::string path = absl::StrCat(std::getenv("TEST_TMPDIR"), "/tokens");
  ASSERT_TRUE(WriteFileAtomically(path, kTokens).ok());
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  EXPECT_EQ(Authenticator::FromFile(path).status().code(),
            absl::StatusCode::kPermissionDenied);
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  absl::StatusOr<Authenticator> auth = Authenticator::FromFile(path);
  ASSERT_TRUE(auth.ok()) << auth.status();
  EXPECT_EQ(auth->size(), 3u);
  EXPECT_EQ(Authenticator::FromFile(path + ".missing").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(AuthTest, ReloadReplacesTheTokensAndABadFileKeepsThem) {
  const std::string path = absl::StrCat(std::getenv("TEST_TMPDIR"), "/reload-tokens");
  ASSERT_TRUE(WriteFileAtomically(path, kTokens).ok());
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  absl::StatusOr<Authenticator> auth = Authenticator::FromFile(path);
  ASSERT_TRUE(auth.ok()) << auth.status();
  const std::string method = Method("GetPlan");
  ASSERT_TRUE(auth->Authorize(method, "Bearer reader-token-0123456789").ok());

  // Rotated: the reader's token is replaced.
  ASSERT_TRUE(WriteFileAtomically(path, "reader dashboard rotated-token-0123456789\n").ok());
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  ASSERT_TRUE(auth->ReloadFromFile(path).ok());
  EXPECT_EQ(auth->size(), 1u);
  EXPECT_EQ(auth->Authorize(method, "Bearer reader-token-0123456789").status().code(),
            absl::StatusCode::kUnauthenticated);
  absl::StatusOr<Principal> p = auth->Authorize(method, "Bearer rotated-token-0123456789");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name, "dashboard");

  // A malformed file and one others may read are refused; the tokens stay.
  ASSERT_TRUE(WriteFileAtomically(path, "reader broken\n").ok());
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  EXPECT_EQ(auth->ReloadFromFile(path).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(WriteFileAtomically(path, kTokens).ok());
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  EXPECT_EQ(auth->ReloadFromFile(path).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(auth->Authorize(method, "Bearer rotated-token-0123456789").ok());
  EXPECT_EQ(auth->size(), 1u);
}

}  // namespace
}  // namespace berth
