// A second berthd on a port another berthd already serves is refused at
// once, before it touches its store: gRPC and httplib both set SO_REUSEPORT
// by default, with which the second bound the same port and RPCs or scrapes
// landed on either daemon.
#include <sys/stat.h>

#include <vector>

#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "planner/base/proto_json.h"
#include "tests/berthd_process.h"
#include "tools/base/subprocess.h"

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

// berthd run directly: a refused token file exits 2 like every refused
// setting, a port in use exits 1, and both say why in one JSON log line
// (a refused token file used to exit 1 and "cannot bind" was plain text).
TEST(BerthdPorts, StartRefusalsExitAsDocumentedWithAJsonLogLine) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> first = BerthdProcess::Start({});
  ASSERT_TRUE(first.ok()) << first.status();
  const std::string dir = std::getenv("TEST_TMPDIR");
  const std::string loose = dir + "/loose.tokens";
  ASSERT_TRUE(WriteFileAtomically(loose, "pusher js 0123456789abcdef0123\n").ok());
  ASSERT_EQ(chmod(loose.c_str(), 0644), 0);
  const std::string good = dir + "/good.tokens";
  ASSERT_TRUE(WriteFileAtomically(good, "pusher js 0123456789abcdef0123\n").ok());
  ASSERT_EQ(chmod(good.c_str(), 0600), 0);
  struct Case {
    std::string name;
    std::vector<std::string> flags;
    int exit_code;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"token_missing", {"--token_file=" + dir + "/no-such.tokens"}, 2, "token file"},
      {"token_mode_644", {"--token_file=" + loose}, 2, "0644"},
      // absl's own refusals of a flag value, an unknown flag and a missing
      // flag file exited 1 with plain text.
      {"max_workers_2e31", {"--token_file=" + good, "--max_workers=2147483648"}, 2,
       "max_workers"},
      {"max_workers_word", {"--token_file=" + good, "--max_workers=many"}, 2, "max_workers"},
      {"unknown_flag", {"--token_file=" + good, "--no_such_flag=1"}, 2, "no_such_flag"},
      {"flagfile_missing", {"--token_file=" + good, "--flagfile=" + dir + "/no-such.flags"}, 2,
       "no-such.flags"},
      {"port_in_use",
       {"--token_file=" + good, absl::StrCat("--listen=127.0.0.1:", (*first)->port())},
       1,
       absl::StrCat("listen: cannot bind 127.0.0.1:", (*first)->port())},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> argv = {"server/berthd", "--allowed_images=berth-test/*",
                                     "--data_dir=" + dir + "/data-" + c.name,
                                     absl::StrCat("--metrics_listen=127.0.0.1:", PickFreePort())};
    if (c.name != "port_in_use") argv.push_back(absl::StrCat("--listen=127.0.0.1:", PickFreePort()));
    argv.insert(argv.end(), c.flags.begin(), c.flags.end());
    ProcessResult r = RunProcess(argv, {}, absl::Seconds(30));
    EXPECT_EQ(r.exit_code, c.exit_code) << r.err;
    std::vector<std::string> lines = absl::StrSplit(r.err, '\n', absl::SkipEmpty());
    ASSERT_FALSE(lines.empty());
    const std::string& last = lines.back();
    EXPECT_TRUE(absl::StartsWith(last, "{\"ts\":")) << last;
    EXPECT_TRUE(absl::StrContains(last, "\"msg\":\"berthd did not start\"")) << last;
    EXPECT_TRUE(absl::StrContains(last, c.want)) << last;
    EXPECT_TRUE(absl::StrContains(last, absl::StrCat("\"exit_status\":", c.exit_code))) << last;
    if (c.name == "port_in_use") continue;  // gRPC logs its own bind error first
    for (const std::string& line : lines) {  // every line is JSON, none absl's plain text
      EXPECT_TRUE(absl::StartsWith(line, "{\"ts\":")) << line;
    }
  }
  // --help still prints the flags (and exits as absl does), refusing nothing;
  // --version is berthd_version_test's.
  ProcessResult help = RunProcess({"server/berthd", "--help"}, {}, absl::Seconds(30));
  EXPECT_TRUE(absl::StrContains(help.out, "max_workers")) << help.out;
  EXPECT_FALSE(absl::StrContains(help.err, "did not start")) << help.err;
}

// An empty --allowed_images starts (the store can still be read) but says
// at once that every job will be rejected.
TEST(BerthdPorts, AnEmptyAllowListIsWarnedAbout) {
  BerthdProcessOptions o;
  o.extra_flags = {"--allowed_images="};
  absl::StatusOr<std::unique_ptr<BerthdProcess>> b = BerthdProcess::Start(o);
  ASSERT_TRUE(b.ok()) << b.status();
  const std::string log = (*b)->Log();
  EXPECT_TRUE(absl::StrContains(
      log, "\"msg\":\"no image is allowed: every job will be rejected IMAGE_NOT_ALLOWED\""))
      << log;
  BerthdProcessOptions with_images;
  absl::StatusOr<std::unique_ptr<BerthdProcess>> c = BerthdProcess::Start(with_images);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(absl::StrContains((*c)->Log(), "no image is allowed")) << (*c)->Log();
}

}  // namespace
}  // namespace berth
