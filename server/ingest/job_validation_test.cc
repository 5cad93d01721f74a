#include "server/ingest/job_validation.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "planner/base/human_text_testing.h"

namespace berth {
namespace {

ValidationConfig Config() {
  ValidationConfig c;
  c.image_allowed = [](absl::string_view image) {
    return absl::StartsWith(image, "berth-test/");
  };
  c.known_pools = {"database"};
  c.memory_bytes = int64_t{64} << 30;
  c.cpu_millis = 16000;
  return c;
}

v1::JobSpec Good(const std::string& id) {
  v1::JobSpec j;
  j.set_id(id);
  j.set_workspace("ws1");
  j.set_image("berth-test/busybox:1");
  j.add_argv("true");
  j.mutable_resources()->set_cpu_millis(500);
  j.mutable_resources()->set_memory_bytes(1 << 30);
  return j;
}

TEST(JobValidationTest, IdRules) {
  EXPECT_TRUE(IsValidId("a"));
  EXPECT_TRUE(IsValidId("ws-1.job_2"));
  EXPECT_TRUE(IsValidId(std::string(128, 'x')));
  EXPECT_FALSE(IsValidId(""));
  EXPECT_FALSE(IsValidId(std::string(129, 'x')));
  EXPECT_FALSE(IsValidId("a/b"));
  EXPECT_FALSE(IsValidId("../etc"));
  EXPECT_FALSE(IsValidId("a b"));
  EXPECT_FALSE(IsValidId(std::string("a\0b", 3)));
}

TEST(JobValidationTest, MissingWorkspaceDirectory) {
  ValidationConfig c = Config();
  int asked = 0;
  c.workspace_exists = [&asked](absl::string_view ws) {
    ++asked;
    return ws == "ws1";
  };
  std::vector<v1::JobSpec> jobs = {Good("a"), Good("b"), Good("c")};
  jobs[1].set_workspace("gone");
  jobs[2].set_workspace("gone");
  ValidatedJobs v = ValidateJobs(jobs, c, nullptr);
  ASSERT_EQ(v.rejections.size(), 2u);
  EXPECT_EQ(v.rejections[0].reason(), v1::REJECT_REASON_WORKSPACE_NOT_FOUND);
  EXPECT_EQ(v.rejections[0].field(), "workspace");
  EXPECT_EQ(asked, 2);  // once per workspace
}

TEST(JobValidationTest, AnImageTheEngineLacksIsRejectedNamingIt) {
  ValidationConfig c = Config();
  int asked = 0;
  // What ImageCatalog answers: missing only when a list says so; "unknown"
  // (an engine outage) reads as not missing.
  c.image_missing = [&asked](absl::string_view image) {
    ++asked;
    return image == "berth-test/busybox:2";
  };
  std::vector<v1::JobSpec> jobs = {Good("a"), Good("b"), Good("c")};
  jobs[1].set_image("berth-test/busybox:2");
  jobs[2].set_image("berth-test/busybox:2");
  ValidatedJobs v = ValidateJobs(jobs, c, nullptr);
  ASSERT_EQ(v.accepted.size(), 1u);
  EXPECT_EQ(v.accepted[0].id(), "a");
  ASSERT_EQ(v.rejections.size(), 2u);
  for (const v1::JobRejection& r : v.rejections) {
    EXPECT_EQ(r.reason(), v1::REJECT_REASON_IMAGE_NOT_FOUND);
    EXPECT_EQ(r.field(), "image");
    EXPECT_TRUE(absl::StrContains(r.message(), "'berth-test/busybox:2'")) << r.message();
    EXPECT_TRUE(absl::StrContains(r.message(), "never pulls")) << r.message();
    EXPECT_EQ(HumanTextProblem(r.message(), r.job_id()), "");
  }
  EXPECT_EQ(v.rejections[0].job_id(), "b");
  EXPECT_EQ(asked, 2);  // once per distinct image

  // The allow-list comes first: a refused image is not looked up.
  v1::JobSpec evil = Good("evil");
  evil.set_image("evil:1");
  std::optional<v1::JobRejection> r = ValidateJob(evil, c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->reason(), v1::REJECT_REASON_IMAGE_NOT_ALLOWED);
  EXPECT_EQ(asked, 2);
  // Unset: not checked.
  c.image_missing = nullptr;
  v1::JobSpec two = Good("two");
  two.set_image("berth-test/busybox:2");
  EXPECT_FALSE(ValidateJob(two, c).has_value());
}

TEST(JobValidationTest, GoodJobPasses) {
  EXPECT_FALSE(ValidateJob(Good("j"), Config()).has_value());
  v1::JobSpec db = Good("db");
  db.set_pool("database");
  EXPECT_FALSE(ValidateJob(db, Config()).has_value());
}

struct JobCase {
  const char* name;
  void (*mutate)(v1::JobSpec*);
  v1::RejectReason reason;
  const char* field;
};

class JobValidationCaseTest : public ::testing::TestWithParam<JobCase> {};

TEST_P(JobValidationCaseTest, RejectsWithReasonAndField) {
  const JobCase& c = GetParam();
  v1::JobSpec job = Good("job-1");
  c.mutate(&job);
  std::optional<v1::JobRejection> r = ValidateJob(job, Config());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->reason(), c.reason) << r->message();
  EXPECT_EQ(r->field(), c.field) << r->message();
  EXPECT_EQ(r->job_id(), job.id());
  // The id is in job_id; the message does not repeat it, and its units are
  // units.h's.
  EXPECT_EQ(HumanTextProblem(r->message(), IsValidId(job.id()) ? job.id() : ""), "");
  EXPECT_FALSE(r->message().empty());
}

// The sizes in "never fits" rejections read as the plan writes them.
TEST(JobValidationTest, NeverFitsMessagesUseTheFormatter) {
  v1::JobSpec big = Good("big");
  big.mutable_resources()->set_memory_bytes(int64_t{4} << 30);
  ValidationConfig config = Config();
  config.memory_bytes = int64_t{1} << 30;
  config.cpu_millis = 0;
  std::optional<v1::JobRejection> r = ValidateJob(big, config);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->message(), "needs 4 GiB memory but the whole budget is 1 GiB");
  v1::JobSpec cpu = Good("cpu");
  cpu.mutable_resources()->set_cpu_millis(3500);
  config = Config();
  config.memory_bytes = 0;
  config.cpu_millis = 500;
  r = ValidateJob(cpu, config);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->message(), "needs 3.5 cores but the whole budget is 0.5 cores");
  // A CPU budget above the host's cores (allowed: jobs share the CPUs) does
  // not let one job ask more cores than the host has: Docker would refuse
  // its container ("Range of CPUs is from 0.01 to 2.00").
  v1::JobSpec wide = Good("wide");
  wide.mutable_resources()->set_cpu_millis(2001);
  config = Config();
  config.cpu_millis = 32000;
  config.host_cpu_millis = 2000;
  r = ValidateJob(wide, config);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->reason(), v1::REJECT_REASON_NEVER_FITS);
  EXPECT_EQ(r->field(), "resources.cpu_millis");
  EXPECT_EQ(r->message(),
            "needs 2.001 cores but the Docker host has 2 cores (docker info NCPU): a container "
            "cannot be given more CPUs than its host has, whatever the CPU budget");
  wide.mutable_resources()->set_cpu_millis(2000);
  EXPECT_FALSE(ValidateJob(wide, config).has_value());
  // Just over the budget reads as more than it, not as the budget itself.
  v1::JobSpec over = Good("over");
  over.mutable_resources()->set_memory_bytes((int64_t{1} << 30) + 1);
  config = Config();
  config.memory_bytes = int64_t{1} << 30;
  r = ValidateJob(over, config);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->message(), "needs 1073741825 B memory but the whole budget is 1 GiB");
  // Just under Docker's minimum reads as less than it.
  v1::JobSpec tiny = Good("tiny");
  tiny.mutable_resources()->set_memory_bytes((6 << 20) - 1);
  r = ValidateJob(tiny, Config());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->message(),
            "resources.memory_bytes is 6291455 B; Docker's minimum memory limit is 6 MiB");
  v1::JobSpec slow = Good("slow");
  slow.mutable_max_duration()->set_seconds(int64_t{400} * 86400);
  r = ValidateJob(slow, Config());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(HumanTextProblem(r->message(), "slow"), "");
  EXPECT_EQ(r->message(), "max_duration is 400d; the maximum is 366d");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, JobValidationCaseTest,
    ::testing::Values(
        JobCase{"empty_id", [](v1::JobSpec* j) { j->set_id(""); },
                v1::REJECT_REASON_INVALID_ID, "id"},
        JobCase{"slash_in_id", [](v1::JobSpec* j) { j->set_id("a/b"); },
                v1::REJECT_REASON_INVALID_ID, "id"},
        JobCase{"bad_workspace", [](v1::JobSpec* j) { j->set_workspace("../../etc"); },
                v1::REJECT_REASON_INVALID_FIELD, "workspace"},
        JobCase{"missing_workspace", [](v1::JobSpec* j) { j->clear_workspace(); },
                v1::REJECT_REASON_INVALID_FIELD, "workspace"},
        JobCase{"long_action", [](v1::JobSpec* j) { j->set_action(std::string(200, 'a')); },
                v1::REJECT_REASON_INVALID_FIELD, "action"},
        JobCase{"no_image", [](v1::JobSpec* j) { j->clear_image(); },
                v1::REJECT_REASON_INVALID_FIELD, "image"},
        JobCase{"image_not_allowed", [](v1::JobSpec* j) { j->set_image("evil:latest"); },
                v1::REJECT_REASON_IMAGE_NOT_ALLOWED, "image"},
        JobCase{"nul_in_argv",
                [](v1::JobSpec* j) { j->add_argv(std::string("a\0b", 3)); },
                v1::REJECT_REASON_INVALID_FIELD, "argv[1]"},
        // Accepted, it failed START_FAILED "No command specified".
        JobCase{"empty_argv", [](v1::JobSpec* j) { j->clear_argv(); },
                v1::REJECT_REASON_INVALID_FIELD, "argv"},
        // Accepted, it exited 127 (the engine runs "" as a program).
        JobCase{"empty_program", [](v1::JobSpec* j) { j->set_argv(0, ""); },
                v1::REJECT_REASON_INVALID_FIELD, "argv[0]"},
        JobCase{"bad_env_key", [](v1::JobSpec* j) { (*j->mutable_env())["1X"] = "v"; },
                v1::REJECT_REASON_INVALID_FIELD, "env['1X']"},
        JobCase{"zero_cpu", [](v1::JobSpec* j) { j->mutable_resources()->set_cpu_millis(0); },
                v1::REJECT_REASON_INVALID_RESOURCES, "resources.cpu_millis"},
        JobCase{"negative_memory",
                [](v1::JobSpec* j) { j->mutable_resources()->set_memory_bytes(-5); },
                v1::REJECT_REASON_INVALID_RESOURCES, "resources.memory_bytes"},
        JobCase{"no_resources", [](v1::JobSpec* j) { j->clear_resources(); },
                v1::REJECT_REASON_INVALID_RESOURCES, "resources"},
        JobCase{"cpu_below_quota_granularity",
                [](v1::JobSpec* j) { j->mutable_resources()->set_cpu_millis(9); },
                v1::REJECT_REASON_INVALID_RESOURCES, "resources.cpu_millis"},
        JobCase{"memory_below_docker_minimum",
                [](v1::JobSpec* j) { j->mutable_resources()->set_memory_bytes((6 << 20) - 1); },
                v1::REJECT_REASON_INVALID_RESOURCES, "resources.memory_bytes"},
        JobCase{"dot_id", [](v1::JobSpec* j) { j->set_id("."); },
                v1::REJECT_REASON_INVALID_ID, "id"},
        JobCase{"dotdot_workspace", [](v1::JobSpec* j) { j->set_workspace(".."); },
                v1::REJECT_REASON_INVALID_FIELD, "workspace"},
        JobCase{"image_dotdot", [](v1::JobSpec* j) { j->set_image("berth-test/../evil:1"); },
                v1::REJECT_REASON_INVALID_FIELD, "image"},
        JobCase{"image_newline", [](v1::JobSpec* j) { j->set_image("berth-test/busybox:1\n"); },
                v1::REJECT_REASON_INVALID_FIELD, "image"},
        JobCase{"image_trailing_slash", [](v1::JobSpec* j) { j->set_image("berth-test/"); },
                v1::REJECT_REASON_INVALID_FIELD, "image"},
        JobCase{"env_value_1mib",
                [](v1::JobSpec* j) { (*j->mutable_env())["BIG"] = std::string(1 << 20, 'v'); },
                v1::REJECT_REASON_INVALID_FIELD, "env['BIG']"},
        JobCase{"expected_duration_2e62",
                [](v1::JobSpec* j) { j->mutable_expected_duration()->set_seconds(int64_t{1} << 62); },
                v1::REJECT_REASON_INVALID_FIELD, "expected_duration"},
        JobCase{"unknown_pool", [](v1::JobSpec* j) { j->set_pool("gpu"); },
                v1::REJECT_REASON_UNKNOWN_POOL, "pool"},
        JobCase{"zero_expected_duration",
                [](v1::JobSpec* j) { j->mutable_expected_duration()->set_seconds(0); },
                v1::REJECT_REASON_INVALID_FIELD, "expected_duration"},
        JobCase{"negative_max_duration",
                [](v1::JobSpec* j) { j->mutable_max_duration()->set_seconds(-1); },
                v1::REJECT_REASON_INVALID_FIELD, "max_duration"},
        JobCase{"long_label", [](v1::JobSpec* j) { (*j->mutable_labels())["k"] = std::string(300, 'v'); },
                v1::REJECT_REASON_INVALID_FIELD, "labels['k']"},
        JobCase{"memory_over_budget",
                [](v1::JobSpec* j) { j->mutable_resources()->set_memory_bytes(int64_t{65} << 30); },
                v1::REJECT_REASON_NEVER_FITS, "resources.memory_bytes"},
        JobCase{"cpu_over_budget",
                [](v1::JobSpec* j) { j->mutable_resources()->set_cpu_millis(16001); },
                v1::REJECT_REASON_NEVER_FITS, "resources.cpu_millis"},
        JobCase{"bad_dependency_id", [](v1::JobSpec* j) { j->add_depends_on("no good"); },
                v1::REJECT_REASON_INVALID_FIELD, "depends_on[0]"},
        JobCase{"self_dependency", [](v1::JobSpec* j) { j->add_depends_on("x"); j->add_depends_on(j->id()); },
                v1::REJECT_REASON_DEPENDENCY_CYCLE, "depends_on[1]"}),
    [](const ::testing::TestParamInfo<JobCase>& info) { return info.param.name; });

// With the caller's id index (as berthd passes the assembler's) and without.
class CrossJobTest : public ::testing::TestWithParam<bool> {};

TEST_P(CrossJobTest, CrossJobDependencies) {
  std::vector<v1::JobSpec> jobs;
  jobs.push_back(Good("root"));
  jobs.push_back(Good("child"));
  jobs.back().add_depends_on("root");
  jobs.push_back(Good("on-known"));
  jobs.back().add_depends_on("finished-earlier");
  jobs.push_back(Good("on-unknown"));
  jobs.back().add_depends_on("nowhere");
  jobs.push_back(Good("cyc-a"));
  jobs.back().add_depends_on("cyc-b");
  jobs.push_back(Good("cyc-b"));
  jobs.back().add_depends_on("cyc-a");
  jobs.push_back(Good("into-cycle"));
  jobs.back().add_depends_on("cyc-a");
  jobs.push_back(Good("bad-image"));
  jobs.back().set_image("evil");
  jobs.push_back(Good("grandchild-of-bad"));
  jobs.back().add_depends_on("child-of-bad");
  jobs.push_back(Good("child-of-bad"));
  jobs.back().add_depends_on("bad-image");

  JobIdIndex index;
  for (size_t i = 0; i < jobs.size(); ++i) index.emplace(jobs[i].id(), static_cast<uint32_t>(i));
  ValidatedJobs v = ValidateJobs(
      std::move(jobs), Config(),
      [](const std::string& id) { return id == "finished-earlier"; },
      GetParam() ? &index : nullptr);
  std::vector<std::string> accepted;
  for (const auto& j : v.accepted) accepted.push_back(j.id());
  EXPECT_EQ(accepted, (std::vector<std::string>{"root", "child", "on-known"}));
  EXPECT_EQ(v.accepted_from, (std::vector<size_t>{0, 1, 2}));  // input indices

  ASSERT_EQ(v.rejected.size(), v.rejections.size());
  std::map<std::string, v1::RejectReason> reasons;
  for (const auto& r : v.rejections) reasons[r.job_id()] = r.reason();
  EXPECT_EQ(reasons["on-unknown"], v1::REJECT_REASON_UNKNOWN_DEPENDENCY);
  EXPECT_EQ(reasons["cyc-a"], v1::REJECT_REASON_DEPENDENCY_CYCLE);
  EXPECT_EQ(reasons["cyc-b"], v1::REJECT_REASON_DEPENDENCY_CYCLE);
  EXPECT_EQ(reasons["into-cycle"], v1::REJECT_REASON_DEPENDENCY_REJECTED);
  EXPECT_EQ(reasons["bad-image"], v1::REJECT_REASON_IMAGE_NOT_ALLOWED);
  EXPECT_EQ(reasons["child-of-bad"], v1::REJECT_REASON_DEPENDENCY_REJECTED);
  EXPECT_EQ(reasons["grandchild-of-bad"], v1::REJECT_REASON_DEPENDENCY_REJECTED);
  for (const auto& r : v.rejections) {
    if (r.job_id() == "cyc-a") {
      EXPECT_TRUE(absl::StrContains(r.message(), "cyc-a -> cyc-b -> cyc-a")) << r.message();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Index, CrossJobTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "given" : "built";
                         });

// The allow-list (glob matching in the runtime) is asked once per distinct
// image; rejected jobs interleaved with accepted ones keep both lists in
// input order.
TEST(JobValidationTest, AllowListOncePerImageAndOrderKept) {
  ValidationConfig config = Config();
  std::map<std::string, int> asked;
  config.image_allowed = [&asked](absl::string_view image) {
    ++asked[std::string(image)];
    return absl::StartsWith(image, "berth-test/");
  };
  std::vector<v1::JobSpec> jobs;
  for (int i = 0; i < 9; ++i) {
    jobs.push_back(Good("j" + std::to_string(i)));
    if (i % 3 == 1) jobs.back().set_image("evil/x:1");  // j1, j4, j7
  }
  ValidatedJobs v = ValidateJobs(std::move(jobs), config, nullptr);
  EXPECT_EQ(asked, (std::map<std::string, int>{{"berth-test/busybox:1", 1},
                                               {"evil/x:1", 1}}));
  std::vector<std::string> accepted, rejected;
  for (const auto& j : v.accepted) accepted.push_back(j.id());
  for (const auto& j : v.rejected) rejected.push_back(j.id());
  EXPECT_EQ(accepted, (std::vector<std::string>{"j0", "j2", "j3", "j5", "j6", "j8"}));
  EXPECT_EQ(v.accepted_from, (std::vector<size_t>{0, 2, 3, 5, 6, 8}));
  EXPECT_EQ(rejected, (std::vector<std::string>{"j1", "j4", "j7"}));
  ASSERT_EQ(v.rejections.size(), 3u);
  EXPECT_EQ(v.rejections[1].job_id(), "j4");
  EXPECT_EQ(v.rejections[1].reason(), v1::REJECT_REASON_IMAGE_NOT_ALLOWED);
}

TEST(JobValidationTest, LongChainIsLinear) {
  // A 200k-long chain whose head is rejected: every job is rejected once.
  constexpr int kN = 200'000;
  std::vector<v1::JobSpec> jobs;
  jobs.reserve(kN);
  for (int i = 0; i < kN; ++i) {
    jobs.push_back(Good("j" + std::to_string(i)));
    if (i + 1 < kN) jobs.back().add_depends_on("j" + std::to_string(i + 1));
  }
  jobs.back().set_image("evil");
  ValidatedJobs v = ValidateJobs(std::move(jobs), Config(), nullptr);
  EXPECT_TRUE(v.accepted.empty());
  EXPECT_TRUE(v.accepted_from.empty());
  EXPECT_EQ(v.rejections.size(), static_cast<size_t>(kN));
}

}  // namespace
}  // namespace berth

namespace berth {
namespace {

v1::Node TestNode(const std::string& id, int64_t memory_gib, int64_t cpu,
                  const std::string& pool = "") {
  v1::Node n;
  n.set_id(id);
  n.set_memory_bytes(memory_gib << 30);
  n.set_cpu_millis(cpu);
  if (!pool.empty()) (*n.mutable_labels())["pool"] = pool;
  return n;
}

TEST(JobValidationNodesTest, AJobLargerThanEveryNodeNeverFitsNamingTheLargest) {
  ValidationConfig c = Config();
  c.memory_bytes = 0;  // the cluster's sums apply in the planner
  c.nodes = {TestNode("node-a", 32, 8000), TestNode("node-b", 40, 8000),
             TestNode("db-1", 128, 8000, "database")};
  v1::JobSpec j = Good("j");
  j.mutable_resources()->set_memory_bytes(int64_t{48} << 30);
  std::optional<v1::JobRejection> r = ValidateJob(j, c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->reason(), v1::REJECT_REASON_NEVER_FITS);
  // The fragmentation case: 72 GiB in the default nodes, but no one node
  // has 48 GiB.
  EXPECT_EQ(r->message(),
            "needs 48 GiB memory and 0.5 cores, more than any node has: the largest is "
            "node-b (40 GiB memory, 8 cores), 72 GiB memory and 16 cores in the cluster. "
            "Fits on node-b if memory estimate <= 40 GiB");
  // The database pool runs on its own node, where 48 GiB fits.
  j.set_pool("database");
  EXPECT_FALSE(ValidateJob(j, c).has_value());
  j.clear_pool();
  j.mutable_resources()->set_memory_bytes(int64_t{40} << 30);
  EXPECT_FALSE(ValidateJob(j, c).has_value());
}

}  // namespace
}  // namespace berth
