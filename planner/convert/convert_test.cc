#include "planner/convert/convert.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "planner/model/reasons.h"

namespace berth::planner {
namespace {

// The planner's enums are 1:1 with the API's by number; the names agree too
// (the API prefixes some with the enum's name).
TEST(ConvertTest, EnumsAgreeWithTheApiByNumberAndName) {
  for (int v = 0; v <= 12; ++v) {
    ASSERT_TRUE(v1::WaitReason_IsValid(v)) << v;
    EXPECT_TRUE(absl::EndsWith(v1::WaitReason_Name(static_cast<v1::WaitReason>(v)),
                               ReasonName(static_cast<Reason>(v))))
        << v << ": " << v1::WaitReason_Name(static_cast<v1::WaitReason>(v)) << " vs "
        << ReasonName(static_cast<Reason>(v));
  }
  EXPECT_FALSE(v1::WaitReason_IsValid(13)) << "the API grew a reason the planner lacks";
  for (int v = 0; v <= 5; ++v) {
    EXPECT_TRUE(absl::EndsWith(v1::Dimension_Name(static_cast<v1::Dimension>(v)),
                               DimensionName(static_cast<Dimension>(v))))
        << v;
  }
  EXPECT_FALSE(v1::Dimension_IsValid(6));
  for (int v = 0; v <= 3; ++v) {
    EXPECT_TRUE(absl::EndsWith(v1::Verdict_Name(static_cast<v1::Verdict>(v)),
                               VerdictName(static_cast<Verdict>(v))))
        << v;
  }
}

TEST(ConvertTest, TimeRoundTrips) {
  absl::Time t = absl::FromUnixSeconds(1'790'000'000) + absl::Milliseconds(250);
  google::protobuf::Timestamp ts = ToProtoTimestamp(t);
  EXPECT_EQ(ts.seconds(), 1'790'000'000);
  EXPECT_EQ(ts.nanos(), 250'000'000);
  EXPECT_EQ(FromProto(ts), t);
  absl::Time before_epoch = absl::FromUnixSeconds(-10) + absl::Milliseconds(500);
  EXPECT_EQ(FromProto(ToProtoTimestamp(before_epoch)), before_epoch);
  // Infinite times are "unset".
  EXPECT_EQ(ToProtoTimestamp(absl::InfiniteFuture()).seconds(), 0);
  google::protobuf::Timestamp bad;
  bad.set_nanos(-1);
  EXPECT_EQ(FromProto(bad), absl::UnixEpoch());

  absl::Duration d = absl::Hours(2) + absl::Milliseconds(5);
  EXPECT_EQ(FromProto(ToProtoDuration(d)), d);
  EXPECT_EQ(FromProto(ToProtoDuration(-absl::Seconds(3))), -absl::Seconds(3));
}

TEST(ConvertTest, JobSpecToQueuedAndRunning) {
  v1::JobSpec spec;
  spec.set_id("j1");
  spec.set_workspace("ws");
  spec.set_priority(3);
  spec.mutable_resources()->set_cpu_millis(1500);
  spec.mutable_resources()->set_memory_bytes(int64_t{4} << 30);
  spec.mutable_expected_duration()->set_seconds(600);
  spec.mutable_created_at()->set_seconds(1000);
  spec.add_depends_on("j0");

  QueuedJob q = ToQueuedJob(spec);
  EXPECT_EQ(q.id, "j1");
  EXPECT_EQ(q.workspace, "ws");
  EXPECT_EQ(q.pool, kDefaultPool);
  EXPECT_EQ(q.priority, 3);
  EXPECT_EQ(q.resources.cpu_millis, 1500);
  EXPECT_EQ(q.resources.memory_bytes, int64_t{4} << 30);
  EXPECT_EQ(q.expected_duration, absl::Minutes(10));
  EXPECT_EQ(q.created_at, absl::FromUnixSeconds(1000));
  EXPECT_EQ(q.depends_on, std::vector<std::string>{"j0"});

  spec.set_pool("database");
  spec.clear_expected_duration();
  RunningJob r = ToRunningJob(spec, absl::FromUnixSeconds(5000));
  EXPECT_EQ(r.pool, "database");
  EXPECT_EQ(r.started_at, absl::FromUnixSeconds(5000));
  EXPECT_EQ(r.expected_duration, absl::ZeroDuration());
}

// A stored job carries when Berth queued it (what aging counts from) apart
// from its created_at; a bare spec has no queued_at.
TEST(ConvertTest, StoredJobCarriesQueuedAt) {
  v1::Job job;
  job.mutable_spec()->set_id("j1");
  job.mutable_spec()->mutable_created_at()->set_seconds(1000);
  job.mutable_queued_at()->set_seconds(90000);
  const QueuedJob q = ToQueuedJob(job);
  EXPECT_EQ(q.created_at, absl::FromUnixSeconds(1000));
  EXPECT_EQ(q.queued_at, absl::FromUnixSeconds(90000));
  EXPECT_EQ(ToQueuedJob(job.spec()).queued_at, absl::UnixEpoch());
}

TEST(ConvertTest, BudgetsRoundTrip) {
  v1::Budgets b;
  b.set_memory_bytes(int64_t{256} << 30);
  b.set_cpu_millis(32000);
  b.set_max_workers(24);
  (*b.mutable_pools())["database"].set_max_workers(4);
  b.set_workspace_max_workers(6);
  Budgets p = FromProto(b);
  EXPECT_EQ(p.memory_bytes, int64_t{256} << 30);
  EXPECT_EQ(p.pool_max_workers.at("database"), 4);
  EXPECT_EQ(p.workspace_max_workers, 6);
  v1::Budgets back = ToProto(p);
  EXPECT_EQ(back.SerializeAsString(), b.SerializeAsString());
}

TEST(ConvertTest, DecisionCarriesShortfallAndPosition) {
  State state;
  state.queued.push_back(ToQueuedJob([] {
    v1::JobSpec s;
    s.set_id("big");
    s.set_workspace("ws");
    s.mutable_resources()->set_cpu_millis(1000);
    s.mutable_resources()->set_memory_bytes(int64_t{16} << 30);
    return s;
  }()));
  state.running.push_back(RunningJob{"r", "ws", kDefaultPool,
                                     Resources{1000, int64_t{10} << 30},
                                     absl::FromUnixSeconds(0), absl::Hours(1), ""});
  Budgets budgets;
  budgets.memory_bytes = int64_t{16} << 30;
  budgets.cpu_millis = 8000;
  budgets.max_workers = 8;
  PlanResult result = Plan(state, budgets, Policy(), absl::FromUnixSeconds(60));
  ASSERT_EQ(result.decisions.size(), 1u);
  v1::PlanDecision d =
      ToProtoDecision(result, result.decisions[0], state, 1, EstimateStarts(state, budgets, Policy(), result)[0]);
  EXPECT_EQ(d.job_id(), "big");
  EXPECT_EQ(d.verdict(), v1::VERDICT_WAIT);
  EXPECT_EQ(d.reason(), v1::WAITING_FOR_MEMORY);
  EXPECT_EQ(d.queue_position(), 1);
  EXPECT_EQ(d.shortfall().dimension(), v1::DIMENSION_MEMORY);
  EXPECT_EQ(d.shortfall().needed(), int64_t{16} << 30);
  EXPECT_EQ(d.shortfall().free(), int64_t{6} << 30);
  EXPECT_EQ(d.shortfall().shortfall(), int64_t{10} << 30);
  EXPECT_TRUE(d.reserved());
  // Reserved at the running job's expected end.
  EXPECT_EQ(d.estimated_start().seconds(), 3600);
}

}  // namespace
}  // namespace berth::planner
