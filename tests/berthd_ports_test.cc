// A second berthd on a port another berthd already serves is refused at
// once, before it touches its store: gRPC and httplib both set SO_REUSEPORT
// by default, with which the second bound the same port and RPCs or scrapes
// landed on either daemon.
#include <sys/stat.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/berthd_process.h"

namespace berth {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// Starts a second berthd with `flag` pointing at `first`'s port; expects it
// to exit naming the setting, its data dir never created.
void ExpectRefused(const std::string& name, const std::string& flag, const std::string& want) {
  BerthdProcessOptions o;
  o.data_dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
  o.extra_flags = {flag};
  absl::StatusOr<std::unique_ptr<BerthdProcess>> second = BerthdProcess::Start(o);
  ASSERT_FALSE(second.ok()) << "a second berthd started with " << flag;
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition) << second.status();
  EXPECT_NE(second.status().message().find(want), std::string::npos) << second.status();
  EXPECT_FALSE(Exists(o.data_dir)) << "the refused berthd created " << o.data_dir;
}

TEST(BerthdPorts, ASecondBerthdOnAPortInUseIsRefusedBeforeItTouchesAnything) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> first = BerthdProcess::Start({});
  ASSERT_TRUE(first.ok()) << first.status();
  const BerthdProcess& b = **first;
  ExpectRefused("grpc", absl::StrCat("--listen=127.0.0.1:", b.port()),
                absl::StrCat("listen: cannot bind 127.0.0.1:", b.port()));
  ExpectRefused("metrics", absl::StrCat("--metrics_listen=127.0.0.1:", b.metrics_port()),
                absl::StrCat("metrics_listen: cannot bind 127.0.0.1:", b.metrics_port()));
  // The first one still answers on both.
  EXPECT_TRUE(b.Metrics().ok());
  EXPECT_TRUE(b.Client(Role::kReader)->GetBudgets().ok());
}

}  // namespace
}  // namespace berth
