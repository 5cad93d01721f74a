// Hostile and careless input: a table of malformed snapshots,
// operator requests, berthd configurations and token files, each checked
// against a real berthd (in-process: real gRPC on 127.0.0.1, real RocksDB,
// real Docker) for the exact status code, the field it names, and that the
// state and its revision are unchanged. docs/VALIDATION.md lists the cases;
// refused configurations and token files are in hostile_start_test.cc.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "berth/v1/executor.grpc.pb.h"
#include "executor/store/rocks_store.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "tests/hostile_input_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "server/daemon/berthd.h"

namespace berth {
namespace {

using testing::BaseConfig;
using testing::HostileInputTest;
using testing::GoodJob;
using testing::kOperator;
using testing::kPusher;
using testing::Stream;

// ---- 1. Jobs: REJECTED naming the field (DryRun and Sync) ----

struct JobCase {
  const char* name;
  std::function<void(v1::JobSpec*)> mutate;
  v1::RejectReason reason;
  const char* field;
};

std::vector<JobCase> JobCases() {
  auto res = [](int64_t cpu, int64_t mem) {
    return [=](v1::JobSpec* j) {
      j->mutable_resources()->set_cpu_millis(cpu);
      j->mutable_resources()->set_memory_bytes(mem);
    };
  };
  auto image = [](std::string i) { return [=](v1::JobSpec* j) { j->set_image(i); }; };
  using R = v1::RejectReason;
  const R kId = v1::REJECT_REASON_INVALID_ID, kField = v1::REJECT_REASON_INVALID_FIELD,
          kRes = v1::REJECT_REASON_INVALID_RESOURCES;
  return {
      {"id_dot", [](v1::JobSpec* j) { j->set_id("."); }, kId, "id"},
      {"id_dotdot", [](v1::JobSpec* j) { j->set_id(".."); }, kId, "id"},
      {"id_slash", [](v1::JobSpec* j) { j->set_id("a/b"); }, kId, "id"},
      {"id_129", [](v1::JobSpec* j) { j->set_id(std::string(129, 'x')); }, kId, "id"},
      {"id_empty", [](v1::JobSpec* j) { j->set_id(""); }, kId, "id"},
      {"workspace_dot", [](v1::JobSpec* j) { j->set_workspace("."); }, kField, "workspace"},
      {"workspace_dotdot", [](v1::JobSpec* j) { j->set_workspace(".."); }, kField, "workspace"},
      {"workspace_path", [](v1::JobSpec* j) { j->set_workspace("../../etc"); }, kField, "workspace"},
      {"workspace_missing_dir", [](v1::JobSpec* j) { j->set_workspace("nodir"); },
       v1::REJECT_REASON_WORKSPACE_NOT_FOUND, "workspace"},
      {"action_long", [](v1::JobSpec* j) { j->set_action(std::string(129, 'a')); }, kField, "action"},
      {"image_empty", image(""), kField, "image"},
      {"image_dotdot", image("berth-test/../evil:1"), kField, "image"},
      {"image_newline", image("berth-test/busybox:1\n"), kField, "image"},
      {"image_trailing_slash", image("berth-test/"), kField, "image"},
      {"image_upper", image("berth-test/BusyBox:1"), kField, "image"},
      {"image_space", image("berth-test/busy box:1"), kField, "image"},
      {"image_not_allowed", image("evil/busybox:1"), v1::REJECT_REASON_IMAGE_NOT_ALLOWED, "image"},
      // Allowed, valid, but not on the engine.
      {"image_missing_tag", image("berth-test/busybox:2"), v1::REJECT_REASON_IMAGE_NOT_FOUND,
       "image"},
      {"image_missing_digest", image("berth-test/busybox@sha256:" + std::string(64, '0')),
       v1::REJECT_REASON_IMAGE_NOT_FOUND, "image"},
      {"argv_nul", [](v1::JobSpec* j) { j->add_argv(std::string("a\0b", 3)); }, kField, "argv[1]"},
      {"argv_200k", [](v1::JobSpec* j) { j->add_argv(std::string(200 << 10, 'a')); }, kField,
       "argv[1]"},
      {"env_1mib", [](v1::JobSpec* j) { (*j->mutable_env())["BIG"] = std::string(1 << 20, 'v'); },
       kField, "env['BIG']"},
      {"env_key_digit", [](v1::JobSpec* j) { (*j->mutable_env())["1X"] = "v"; }, kField,
       "env['1X']"},
      {"env_key_equals", [](v1::JobSpec* j) { (*j->mutable_env())["A=B"] = "v"; }, kField,
       "env['A=B']"},
      {"cpu_1", res(1, 64 << 20), kRes, "resources.cpu_millis"},
      {"cpu_9", res(9, 64 << 20), kRes, "resources.cpu_millis"},
      {"cpu_negative", res(-5, 64 << 20), kRes, "resources.cpu_millis"},
      {"memory_below_6mib", res(100, (6 << 20) - 1), kRes, "resources.memory_bytes"},
      {"memory_zero", res(100, 0), kRes, "resources.memory_bytes"},
      {"resources_empty", [](v1::JobSpec* j) { j->clear_resources(); }, kRes, "resources"},
      {"memory_over_budget", res(100, int64_t{2} << 30), v1::REJECT_REASON_NEVER_FITS,
       "resources.memory_bytes"},
      {"pool_unknown", [](v1::JobSpec* j) { j->set_pool("gpu"); }, v1::REJECT_REASON_UNKNOWN_POOL,
       "pool"},
      {"expected_duration_2e62",
       [](v1::JobSpec* j) { j->mutable_expected_duration()->set_seconds(int64_t{1} << 62); },
       kField, "expected_duration"},
      {"max_duration_zero", [](v1::JobSpec* j) { j->mutable_max_duration()->set_seconds(0); },
       kField, "max_duration"},
      {"created_at_year_10000",
       [](v1::JobSpec* j) { j->mutable_created_at()->set_seconds(253402300800); }, kField,
       "created_at"},
      {"label_long", [](v1::JobSpec* j) { (*j->mutable_labels())["k"] = std::string(257, 'v'); },
       kField, "labels['k']"},
      {"depends_on_self", [](v1::JobSpec* j) { j->add_depends_on(j->id()); },
       v1::REJECT_REASON_DEPENDENCY_CYCLE, "depends_on[0]"},
      {"depends_on_unknown", [](v1::JobSpec* j) { j->add_depends_on("ghost"); },
       v1::REJECT_REASON_UNKNOWN_DEPENDENCY, "depends_on[0]"},
  };
}

TEST_F(HostileInputTest, JobsAreRejectedNamingTheirField) {
  const std::vector<JobCase> cases = JobCases();
  const std::string before = State();
  std::vector<v1::JobSpec> all;
  for (const JobCase& c : cases) {
    SCOPED_TRACE(c.name);
    v1::JobSpec bad = GoodJob(absl::StrCat("bad-", c.name));
    bad.add_argv("x");  // argv[1] is the case's own
    bad.mutable_argv()->RemoveLast();
    c.mutate(&bad);
    all.push_back(bad);
    std::string bytes;
    grpc::Status s = SendRaw(Stream(101, {GoodJob("base"), bad}), /*dry_run=*/true, &bytes);
    ASSERT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
    v1::DryRunResponse r;
    ASSERT_TRUE(r.ParseFromString(bytes));
    ASSERT_EQ(r.sync().rejections_size(), 1) << r.sync().ShortDebugString().substr(0, 500);
    EXPECT_EQ(r.sync().rejections(0).reason(), c.reason) << r.sync().rejections(0).message();
    EXPECT_EQ(r.sync().rejections(0).field(), c.field) << r.sync().rejections(0).message();
    EXPECT_EQ(r.sync().rejections(0).job_id(), bad.id());
    EXPECT_EQ(State(), before);
  }
  // All at once through Sync: each REJECTED on its own, none admitted, the
  // base job untouched.
  all.push_back(GoodJob("base"));
  std::string bytes;
  grpc::Status s = SendRaw(Stream(102, all), /*dry_run=*/false, &bytes);
  ASSERT_TRUE(s.ok()) << s.error_message();
  v1::SyncSnapshotResponse r;
  ASSERT_TRUE(r.ParseFromString(bytes));
  EXPECT_EQ(r.rejected(), static_cast<int>(cases.size()));
  EXPECT_EQ(r.added(), 0);
  for (const v1::JobSpec& j : all) {
    if (j.id() == "base" || j.id().empty() || j.id().size() > 128) continue;
    auto ctx = Context(kOperator);
    v1::GetJobRequest req;
    req.set_job_id(j.id());
    v1::Job got;
    ASSERT_TRUE(Stub()->GetJob(ctx.get(), req, &got).ok()) << j.id();
    EXPECT_EQ(got.state(), v1::JOB_STATE_REJECTED) << j.id();
  }
  ASSERT_GE(cases.size(), 35u);
}

// An image the engine lacks (by tag or by digest) is REJECTED naming the
// image; one it holds is accepted. The engine is the real
// dockerd, which holds berth-test/busybox:1 and neither of the others.
TEST_F(HostileInputTest, ImagesTheEngineLacksAreRejectedNamingThem) {
  const std::string digest = "berth-test/busybox@sha256:" + std::string(64, 'e');
  v1::JobSpec tag = GoodJob("img-tag"), dig = GoodJob("img-digest");
  tag.set_image("berth-test/busybox:2");
  dig.set_image(digest);
  const std::string before = State();
  std::string bytes;
  grpc::Status s = SendRaw(Stream(1000000, {GoodJob("img-present"), tag, dig}), /*dry_run=*/true,
                           &bytes);
  ASSERT_TRUE(s.ok()) << s.error_message();
  v1::DryRunResponse r;
  ASSERT_TRUE(r.ParseFromString(bytes));
  ASSERT_EQ(r.sync().rejections_size(), 2) << r.sync().ShortDebugString();
  EXPECT_EQ(r.sync().added(), 1);  // img-present, berth-test/busybox:1
  for (const v1::JobRejection& j : r.sync().rejections()) {
    EXPECT_EQ(j.reason(), v1::REJECT_REASON_IMAGE_NOT_FOUND) << j.message();
    EXPECT_EQ(j.field(), "image");
  }
  EXPECT_EQ(r.sync().rejections(0).job_id(), "img-tag");
  EXPECT_TRUE(absl::StrContains(r.sync().rejections(0).message(), "'berth-test/busybox:2'"))
      << r.sync().rejections(0).message();
  EXPECT_EQ(r.sync().rejections(1).job_id(), "img-digest");
  EXPECT_TRUE(absl::StrContains(r.sync().rejections(1).message(), "'" + digest + "'"))
      << r.sync().rejections(1).message();
  EXPECT_EQ(State(), before);
}

// ---- 2. Streams: the whole snapshot refused, nothing changed ----

struct StreamCase {
  const char* name;
  std::function<std::vector<std::string>()> messages;
  grpc::StatusCode code;
  const char* names;  // a fragment the message must contain (the field)
};

TEST_F(HostileInputTest, BadStreamsAreRefusedAndChangeNothing) {
  auto header = [](uint64_t gen, uint64_t n) {
    v1::SyncSnapshotRequest m;
    m.mutable_header()->set_generation(gen);
    m.mutable_header()->set_expected_job_count(n);
    return m.SerializeAsString();
  };
  auto end = [](uint64_t n) {
    v1::SyncSnapshotRequest m;
    m.mutable_end()->set_job_count(n);
    return m.SerializeAsString();
  };
  auto batch = [](std::vector<v1::JobSpec> jobs) {
    v1::SyncSnapshotRequest m;
    for (auto& j : jobs) *m.mutable_batch()->add_jobs() = j;
    return m.SerializeAsString();
  };
  // A JobSpec whose id is not UTF-8: protobuf refuses to parse it.
  auto non_utf8 = [&] {
    std::string job = GoodJob("x").SerializeAsString();
    job[2] = static_cast<char>(0xff);  // the first byte of the id "x"
    v1::SyncSnapshotRequest m;
    std::string b;
    b.push_back(static_cast<char>((2 << 3) | 2));  // field 2 (batch), bytes
    std::string inner;
    inner.push_back(static_cast<char>((1 << 3) | 2));  // SnapshotBatch.jobs
    inner.push_back(static_cast<char>(job.size()));
    inner += job;
    b.push_back(static_cast<char>(inner.size()));
    return b + inner;
  };
  // The applied snapshot the stale / repeated generations are compared with.
  {
    std::string bytes;
    ASSERT_TRUE(SendRaw(Stream(200, {GoodJob("base")}), false, &bytes).ok());
  }
  const int kInvalid = grpc::StatusCode::INVALID_ARGUMENT;
  const std::vector<StreamCase> cases = {
      {"garbage_bytes", [&] { return std::vector<std::string>{header(300, 0), "\xff\xff\xff\xff", end(0)}; },
       grpc::StatusCode(kInvalid), "message 2"},
      {"non_utf8_id", [&] { return std::vector<std::string>{header(300, 1), non_utf8(), end(1)}; },
       grpc::StatusCode(kInvalid), "UTF-8"},
      {"oversize_batch_20mb",
       [&] {
         v1::JobSpec j = GoodJob("big");
         (*j.mutable_labels())["pad"] = std::string(100, 'p');
         std::vector<v1::JobSpec> jobs;
         std::vector<std::string> out = {header(300, 0)};
         v1::SyncSnapshotRequest m;
         for (int i = 0; m.ByteSizeLong() < (20u << 20); ++i) {
           v1::JobSpec* k = m.mutable_batch()->add_jobs();
           *k = j;
           k->set_id(absl::StrCat("big-", i));
           k->add_argv(std::string(100000, 'a'));
         }
         out.push_back(m.SerializeAsString());
         out.push_back(end(0));
         return out;
       },
       grpc::StatusCode(kInvalid), "the maximum is 16 MiB"},
      {"no_header", [&] { return std::vector<std::string>{batch({GoodJob("a")}), end(1)}; },
       grpc::StatusCode(kInvalid), "batch"},
      {"two_headers", [&] { return std::vector<std::string>{header(300, 0), header(300, 0), end(0)}; },
       grpc::StatusCode(kInvalid), "header"},
      {"generation_zero", [&] { return std::vector<std::string>{header(0, 0), end(0)}; },
       grpc::StatusCode(kInvalid), "header.generation"},
      {"truncated", [&] { return std::vector<std::string>{header(300, 1), batch({GoodJob("a")})}; },
       grpc::StatusCode(kInvalid), "end message"},
      {"count_mismatch",
       [&] { return std::vector<std::string>{header(300, 1), batch({GoodJob("a")}), end(2)}; },
       grpc::StatusCode(kInvalid), "end.job_count"},
      {"more_than_announced",
       [&] {
         return std::vector<std::string>{header(300, 1), batch({GoodJob("a"), GoodJob("b")}), end(2)};
       },
       grpc::StatusCode(kInvalid), "expected_job_count"},
      {"duplicate_id",
       [&] { return std::vector<std::string>{header(300, 2), batch({GoodJob("a"), GoodJob("a")}), end(2)}; },
       grpc::StatusCode(kInvalid), "jobs[1].id"},
      {"empty_message", [&] { return std::vector<std::string>{header(300, 0), "", end(0)}; },
       grpc::StatusCode(kInvalid), "none of header, batch, end"},
      {"announces_too_many", [&] { return std::vector<std::string>{header(300, 3'000'000), end(0)}; },
       grpc::StatusCode::RESOURCE_EXHAUSTED, "header.expected_job_count"},
      {"stale_generation", [&] { return Stream(199, {GoodJob("base")}); },
       grpc::StatusCode::FAILED_PRECONDITION, "generation"},
      {"same_generation_new_content",
       [&] { return Stream(200, {GoodJob("base"), GoodJob("sneaked-in")}); },
       grpc::StatusCode::FAILED_PRECONDITION, "different content"},
  };
  const std::string before = State();
  for (const StreamCase& c : cases) {
    for (bool dry_run : {false, true}) {
      SCOPED_TRACE(absl::StrCat(c.name, dry_run ? " (DryRun)" : " (Sync)"));
      grpc::Status s = SendRaw(c.messages(), dry_run);
      EXPECT_EQ(s.error_code(), c.code) << s.error_message();
      EXPECT_TRUE(absl::StrContains(s.error_message(), c.names)) << s.error_message();
      EXPECT_EQ(State(), before);
    }
  }
  // The idempotent re-send still works.
  std::string bytes;
  ASSERT_TRUE(SendRaw(Stream(200, {GoodJob("base")}), false, &bytes).ok());
  v1::SyncSnapshotResponse r;
  ASSERT_TRUE(r.ParseFromString(bytes));
  EXPECT_TRUE(r.already_applied());
  EXPECT_EQ(State(), before);
}

// ---- 3. Operator and read requests over their maximums ----

TEST_F(HostileInputTest, OversizeRequestStringsAreRefused) {
  const std::string before = State();
  const std::string mib(1 << 20, 'r');
  struct Case {
    const char* name;
    std::function<grpc::Status(v1::Executor::Stub&, grpc::ClientContext*)> call;
    const char* field;
  };
  const std::vector<Case> cases = {
      {"pause_reason_1mib",
       [&](v1::Executor::Stub& s, grpc::ClientContext* c) {
         v1::PauseRequest r;
         r.set_reason(mib);
         v1::ControlState o;
         return s.Pause(c, r, &o);
       },
       "reason"},
      {"drain_reason_1mib",
       [&](v1::Executor::Stub& s, grpc::ClientContext* c) {
         v1::DrainRequest r;
         r.set_reason(mib);
         v1::DrainResponse o;
         return s.Drain(c, r, &o);
       },
       "reason"},
      {"maintenance_reason_1mib",
       [&](v1::Executor::Stub& s, grpc::ClientContext* c) {
         v1::SetPoolMaintenanceRequest r;
         r.set_pool("default");
         r.set_in_maintenance(true);
         r.set_reason(mib);
         v1::SetPoolMaintenanceResponse o;
         return s.SetPoolMaintenance(c, r, &o);
       },
       "reason"},
      {"maintenance_pool_200",
       [&](v1::Executor::Stub& s, grpc::ClientContext* c) {
         v1::SetPoolMaintenanceRequest r;
         r.set_pool(std::string(200, 'p'));
         v1::SetPoolMaintenanceResponse o;
         return s.SetPoolMaintenance(c, r, &o);
       },
       "pool"},
      {"get_job_id_200",
       [&](v1::Executor::Stub& s, grpc::ClientContext* c) {
         v1::GetJobRequest r;
         r.set_job_id(std::string(200, 'j'));
         v1::Job o;
         return s.GetJob(c, r, &o);
       },
       "job_id"},
      {"explain_job_id_200",
       [&](v1::Executor::Stub& s, grpc::ClientContext* c) {
         v1::ExplainJobRequest r;
         r.set_job_id(std::string(200, 'j'));
         v1::Explanation o;
         return s.ExplainJob(c, r, &o);
       },
       "job_id"},
      {"read_job_log_id_1mib",
       [&](v1::Executor::Stub& s, grpc::ClientContext* c) {
         v1::ReadJobLogRequest r;
         r.set_job_id(mib);
         std::unique_ptr<grpc::ClientReader<v1::JobLogChunk>> reader = s.ReadJobLog(c, r);
         v1::JobLogChunk chunk;
         while (reader->Read(&chunk)) {
         }
         return reader->Finish();
       },
       "job_id"},
      {"list_page_token_2k",
       [&](v1::Executor::Stub& s, grpc::ClientContext* c) {
         v1::ListJobsRequest r;
         r.set_page_token(std::string(2048, 't'));
         v1::ListJobsResponse o;
         return s.ListJobs(c, r, &o);
       },
       "page_token"},
      {"list_workspace_200",
       [&](v1::Executor::Stub& s, grpc::ClientContext* c) {
         v1::ListJobsRequest r;
         r.set_workspace(std::string(200, 'w'));
         v1::ListJobsResponse o;
         return s.ListJobs(c, r, &o);
       },
       "workspace"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto ctx = Context(kOperator);
    auto stub = Stub();
    grpc::Status s = c.call(*stub, ctx.get());
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
    EXPECT_TRUE(absl::StrContains(s.error_message(), c.field)) << s.error_message();
    EXPECT_LT(s.error_message().size(), 200u);  // never echoes the value
    EXPECT_EQ(State(), before);
  }
}

}  // namespace
}  // namespace berth
