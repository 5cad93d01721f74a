#include "server/daemon/config.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

BerthdConfig Good() {
  BerthdConfig c;
  c.token_file = "/etc/berth/tokens";
  return c;
}

TEST(ConfigTest, DefaultsWithATokenFileAreValid) {
  EXPECT_TRUE(ValidateConfig(Good()).ok()) << ValidateConfig(Good());
}

TEST(ConfigTest, FillMemoryPoolsMustBePoolNames) {
  BerthdConfig c = Good();
  c.fill_memory_pools = {"default", "database"};
  EXPECT_TRUE(ValidateConfig(c).ok()) << ValidateConfig(c);
  c.fill_memory_pools = {"default", "../x"};
  absl::Status s = ValidateConfig(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "fill_memory_from_history")) << s;
}

TEST(ConfigTest, RequeueOomPoolsMustBePoolNames) {
  BerthdConfig c = Good();
  c.requeue_oom_pools = {"default", "database"};
  EXPECT_TRUE(ValidateConfig(c).ok()) << ValidateConfig(c);
  c.requeue_oom_pools = {"a b"};
  absl::Status s = ValidateConfig(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "requeue_oom")) << s;
}

TEST(ConfigTest, WorkspaceGroupAndMetadataNeedAWorkspacesRoot) {
  BerthdConfig c = Good();
  c.workspace_gid = 4242;
  absl::Status s = ValidateConfig(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "workspace_group")) << s;
  c.workspaces_root = "/tmp";
  EXPECT_TRUE(ValidateConfig(c).ok()) << ValidateConfig(c);
  c.workspace_gid = 0;
  s = ValidateConfig(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "root")) << s;

  c = Good();
  c.write_run_metadata = true;
  s = ValidateConfig(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "write_run_metadata")) << s;
  c.workspaces_root = "/tmp";
  EXPECT_TRUE(ValidateConfig(c).ok()) << ValidateConfig(c);
}

TEST(ConfigTest, ParseWorkspaceGroupTakesNamesAndNumbers) {
  EXPECT_EQ(ParseWorkspaceGroup("4242").value_or(-9), 4242);
  // Debian's base group database: nogroup is 65534, root is 0.
  EXPECT_EQ(ParseWorkspaceGroup("nogroup").value_or(-9), 65534);
  for (const char* bad : {"0", "root", "", "no-such-group-here", "12x", "4294967295"}) {
    absl::StatusOr<int64_t> g = ParseWorkspaceGroup(bad);
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_TRUE(absl::StrContains(g.status().message(), "--workspace_group")) << g.status();
  }
}

TEST(ConfigTest, PlaintextRemoteIsRefusedUnlessAllowedOrTls) {
  BerthdConfig c = Good();
  c.listen = "0.0.0.0:7070";
  absl::Status s = ValidateConfig(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(s.message(), "plaintext")) << s;
  c.allow_plaintext_remote = true;
  EXPECT_TRUE(ValidateConfig(c).ok());
  c.allow_plaintext_remote = false;
  c.tls_cert_file = "cert.pem";
  c.tls_key_file = "key.pem";
  EXPECT_TRUE(ValidateConfig(c).ok());
  c.tls_key_file.clear();
  EXPECT_EQ(ValidateConfig(c).code(), absl::StatusCode::kFailedPrecondition);
}

struct BadCase {
  const char* name;
  void (*mutate)(BerthdConfig*);
  const char* setting;
};

class ConfigBadTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(ConfigBadTest, NamesTheSetting) {
  BerthdConfig c = Good();
  GetParam().mutate(&c);
  absl::Status s = ValidateConfig(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StartsWith(s.message(), GetParam().setting)) << s;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ConfigBadTest,
    ::testing::Values(
        BadCase{"listen", [](BerthdConfig* c) { c->listen = "nope"; }, "listen"},
        BadCase{"port", [](BerthdConfig* c) { c->listen = "127.0.0.1:99999"; }, "listen"},
        BadCase{"metrics", [](BerthdConfig* c) { c->metrics_listen = "nonsense"; },
                "metrics_listen"},
        BadCase{"metrics_port",
                [](BerthdConfig* c) { c->metrics_listen = "127.0.0.1:99999999999"; },
                "metrics_listen"},
        BadCase{"token", [](BerthdConfig* c) { c->token_file.clear(); }, "token_file"},
        BadCase{"instance", [](BerthdConfig* c) { c->instance = "a b"; }, "instance"},
        BadCase{"workers", [](BerthdConfig* c) { c->max_workers = 0; }, "max_workers"},
        BadCase{"pool", [](BerthdConfig* c) { c->pool_max_workers["db"] = -1; }, "pool_max"},
        BadCase{"tick", [](BerthdConfig* c) { c->tick = absl::ZeroDuration(); }, "tick"},
        BadCase{"fraction", [](BerthdConfig* c) { c->max_cancel_fraction = 2; },
                "max_cancel_fraction"},
        BadCase{"root", [](BerthdConfig* c) { c->container_user = "0:0"; }, "container_user"},
        BadCase{"parallel", [](BerthdConfig* c) { c->start_parallelism = 0; },
                "start_parallelism"},
        BadCase{"aging", [](BerthdConfig* c) { c->aging_interval = absl::Minutes(-1); },
                "aging_interval"},
        BadCase{"few_jobs", [](BerthdConfig* c) { c->retain_terminal_jobs = 999; },
                "retain_terminal_jobs"},
        BadCase{"few_events", [](BerthdConfig* c) { c->retain_events = 0; }, "retain_events"},
        BadCase{"short_jobs", [](BerthdConfig* c) { c->retain_terminal_for = absl::Minutes(5); },
                "retain_terminal_for"},
        BadCase{"short_events", [](BerthdConfig* c) { c->retain_events_for = absl::ZeroDuration(); },
                "retain_events_for"},
        BadCase{"aging_memory", [](BerthdConfig* c) { c->aging_top_memory = absl::Minutes(-1); },
                "aging_top_memory"},
        BadCase{"snapshot_jobs", [](BerthdConfig* c) { c->max_snapshot_jobs = 0; },
                "max_snapshot_jobs"},
        BadCase{"snapshot_jobs_huge",
                [](BerthdConfig* c) { c->max_snapshot_jobs = uint64_t{1} << 33; },
                "max_snapshot_jobs"},
        BadCase{"message_small", [](BerthdConfig* c) { c->max_snapshot_message_bytes = 100; },
                "max_snapshot_message_bytes"},
        BadCase{"message_large",
                [](BerthdConfig* c) { c->max_snapshot_message_bytes = int64_t{1} << 30; },
                "max_snapshot_message_bytes"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

TEST(ConfigTest, DefaultSnapshotLimitsAdmitAMillionJobs) {
  BerthdConfig c;
  EXPECT_GE(c.max_snapshot_jobs, 1'000'000u);
  // A batch of 1,000 jobs as job-server sends them is ~75 KiB.
  EXPECT_GE(c.max_snapshot_message_bytes, int64_t{1} << 20);
}

TEST(ConfigTest, AutoBudgetsSubtractTheReserve) {
  BerthdConfig c = Good();
  c.pool_max_workers["database"] = 4;
  absl::StatusOr<v1::Budgets> b = DefaultBudgets(c, 2, int64_t{24} << 30);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->memory_bytes(), int64_t{22} << 30);
  EXPECT_EQ(b->cpu_millis(), 1500);
  EXPECT_EQ(b->max_workers(), 32);
  EXPECT_EQ(b->pools().at("database").max_workers(), 4);
  c.memory_bytes = int64_t{8} << 30;
  EXPECT_EQ(DefaultBudgets(c, 2, int64_t{24} << 30)->memory_bytes(), int64_t{8} << 30);
  c.memory_bytes = 0;
  c.reserve_memory_bytes = int64_t{30} << 30;
  EXPECT_EQ(DefaultBudgets(c, 2, int64_t{24} << 30, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ConfigTest, AutoBudgetsSubtractTheReservePerNode) {
  BerthdConfig c = Good();
  c.reserve_memory_bytes = int64_t{1} << 30;
  c.reserve_cpu_millis = 500;
  // Three nodes of 8 GiB and 2 CPUs: each keeps its own reserve.
  absl::StatusOr<v1::Budgets> b = DefaultBudgets(c, 6, int64_t{24} << 30, 3);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->memory_bytes(), int64_t{21} << 30);
  EXPECT_EQ(b->cpu_millis(), 4500);
  c.reserve_memory_bytes = int64_t{8} << 30;
  absl::StatusOr<v1::Budgets> none = DefaultBudgets(c, 6, int64_t{24} << 30, 3);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(none.status().message().find("on each of 3 nodes"), std::string::npos)
      << none.status();
}

TEST(ConfigTest, BudgetsNoJobCouldRunInAreRefused) {
  BerthdConfig c = Good();
  c.memory_bytes = 1;  // --memory=1
  absl::Status s = ValidateConfig(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), "memory: 1 B is below")) << s;
  c = Good();
  c.cpu_millis = 1;  // --cpus=0.001
  s = ValidateConfig(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), "cpus: 0.001 cores is below")) << s;
  // An auto budget that leaves less than a job.
  c = Good();
  c.reserve_memory_bytes = (int64_t{24} << 30) - 1024;
  EXPECT_EQ(DefaultBudgets(c, 2, int64_t{24} << 30, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ConfigTest, EngineLogRetentionHoldsFourCapsOfEntries) {
  struct Case {
    int64_t cap;
    const char* size;
  } kCases[] = {
      {int64_t{64} << 20, "64m"},  // the default cap
      {int64_t{1} << 30, "1024m"},
      {int64_t{256} << 10, "1m"},  // rounded up to whole MiB
      {2, "1m"},
      {(int64_t{10} << 20) + 1, "11m"},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.cap);
    EngineLogRetention r = EngineLogRetentionForCap(c.cap);
    EXPECT_EQ(r.max_size, c.size);
    EXPECT_EQ(r.max_files, 5);
  }
  BerthdConfig bad = Good();
  bad.docker_log_max_files = -1;
  absl::Status s = ValidateConfig(bad);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), "docker_log_max_files: must be >= 0")) << s;
}

}  // namespace
}  // namespace berth
