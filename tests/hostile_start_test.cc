// Hostile configurations and token files: berthd refuses to start
// with each, names the setting or the file's line, and leaves the store it
// was pointed at untouched. docs/VALIDATION.md lists the cases.
#include <sys/stat.h>
#include <unistd.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "executor/store/rocks_store.h"
#include "gtest/gtest.h"
#include "server/daemon/berthd.h"
#include "tests/hostile_input_util.h"

namespace berth {
namespace {

using testing::BaseConfig;
using testing::GoodJob;
using testing::WriteFile;

struct StartCase {
  const char* name;
  std::function<void(BerthdConfig*)> mutate;
  absl::StatusCode code;
  const char* names;
};

TEST(HostileStartTest, BadConfigurationsAndTokenFilesAreRefusedAtStartUp) {
  // A store with one applied snapshot: no refused start may touch it.
  BerthdConfig base = BaseConfig("start");
  {
    absl::StatusOr<std::unique_ptr<RocksStore>> s = RocksStore::Open(base.data_dir);
    ASSERT_TRUE(s.ok()) << s.status();
    SnapshotRequest r;
    r.generation = 3;
    r.jobs = {GoodJob("kept")};
    ASSERT_TRUE((*s)->ApplySnapshot(r, absl::Now()).ok());
  }
  auto user = [](const char* u) { return [=](BerthdConfig* c) { c->container_user = u; }; };
  auto tokens = [](std::string text, mode_t mode) {
    return [=](BerthdConfig* c) {
      c->token_file = c->token_file + ".case";
      WriteFile(c->token_file, text, mode);
    };
  };
  const absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;
  const absl::StatusCode kDenied = absl::StatusCode::kPermissionDenied;
  const std::string good = "pusher js 0123456789abcdef0123\n";
  const std::vector<StartCase> cases = {
      {"user_00_0", user("00:0"), kInvalid, "container_user"},
      {"user_plus0", user("+0:0"), kInvalid, "container_user"},
      {"user_0_0", user("0:0"), kInvalid, "container_user"},
      {"user_root", user("root"), kInvalid, "container_user"},
      {"user_gid_0", user("65534:0"), kInvalid, "container_user"},
      {"user_minus1", user("-1:-1"), kInvalid, "container_user"},
      {"user_2e32", user("4294967296:1"), kInvalid, "container_user"},
      {"user_no_gid", user("65534"), kInvalid, "container_user"},
      {"user_names", user("nobody:nogroup"), kInvalid, "container_user"},
      {"user_empty", user(""), kInvalid, "container_user"},
      {"instance_dotdot", [](BerthdConfig* c) { c->instance = ".."; }, kInvalid, "instance"},
      {"instance_slash", [](BerthdConfig* c) { c->instance = "a/b"; }, kInvalid, "instance"},
      {"workspaces_root_missing", [](BerthdConfig* c) { c->workspaces_root = "/nonexistent-17"; },
       kInvalid, "workspaces_root"},
      {"workspaces_root_relative", [](BerthdConfig* c) { c->workspaces_root = "ws"; }, kInvalid,
       "workspaces_root"},
      {"pids_limit_1", [](BerthdConfig* c) { c->pids_limit = 1; }, kInvalid, "pids_limit"},
      {"token_mode_640", tokens(good, 0640), kDenied, "mode 0640"},
      {"token_mode_620", tokens(good, 0620), kDenied, "mode 0620"},
      {"token_mode_602", tokens(good, 0602), kDenied, "mode 0602"},
      {"token_mode_644", tokens(good, 0644), kDenied, "mode 0644"},
      {"token_control_byte", tokens("pusher js 0123456789abcdef\x01" "0123\n", 0600), kInvalid,
       ".case:1"},
      {"token_non_ascii", tokens("pusher js 0123456789abcdef\xc3\xa9\n", 0600), kInvalid,
       ".case:1"},
      {"token_short", tokens("pusher js short\n", 0600), kInvalid, ".case:1"},
      {"token_unknown_role", tokens("admin js 0123456789abcdef0123\n", 0600), kInvalid,
       ".case:1"},
      {"token_repeated", tokens(good + "reader r 0123456789abcdef0123\n", 0600), kInvalid,
       ".case:2"},
      {"token_empty_file", tokens("# nothing\n", 0600), kInvalid, "no tokens"},
      {"token_missing", [](BerthdConfig* c) { c->token_file = "/nonexistent-17/tokens"; },
       absl::StatusCode::kNotFound, "token file"},
      {"token_symlink",
       [](BerthdConfig* c) {
         const std::string link = c->token_file + ".link";
         unlink(link.c_str());
         symlink(c->token_file.c_str(), link.c_str());
         c->token_file = link;
       },
       kDenied, "symbolic link"},
      {"token_other_owner",
       [&](BerthdConfig* c) {
         tokens(good, 0600)(c);
         // Only root may give a file away (the test runs as root, unsandboxed).
         EXPECT_EQ(chown(c->token_file.c_str(), 65534, 65534), 0);
       },
       kDenied, "owned by uid 65534"},
  };
  for (const StartCase& c : cases) {
    SCOPED_TRACE(c.name);
    BerthdConfig config = base;
    c.mutate(&config);
    absl::StatusOr<std::unique_ptr<Berthd>> b = Berthd::Start(config);
    EXPECT_EQ(b.status().code(), c.code) << b.status();
    EXPECT_TRUE(absl::StrContains(b.status().message(), c.names)) << b.status();
  }
  absl::StatusOr<std::unique_ptr<RocksStore>> s = RocksStore::Open(base.data_dir);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->LastAppliedGeneration(), 3u);
  EXPECT_EQ((*s)->CurrentRevision(), 2u);  // QUEUED + SNAPSHOT_APPLIED
  EXPECT_TRUE((*s)->HasJob("kept"));
}

}  // namespace
}  // namespace berth
