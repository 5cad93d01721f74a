// Every spec validation hands back, accepted or rejected, renders as proto3
// JSON: a rejected job is stored and listed, and one field JSON cannot
// render made every JSON read of the job list fail (INTERNAL).
#include <cstdint>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "planner/base/proto_json.h"
#include "server/ingest/job_validation.h"

namespace berth {
namespace {

ValidationConfig Config() {
  ValidationConfig c;
  c.image_allowed = [](absl::string_view image) {
    return absl::StartsWith(image, "berth-test/");
  };
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

// google.protobuf.Duration's rules as duration.proto states them, which Go's
// protojson (grpcurl) enforces and C++'s printer does not: seconds within
// +-315,576,000,000; nanos within +-999,999,999 and of the seconds' sign.
bool DurationFollowsItsSpec(const google::protobuf::Duration& d) {
  if (d.seconds() < -315'576'000'000 || d.seconds() > 315'576'000'000) return false;
  if (d.nanos() < -999'999'999 || d.nanos() > 999'999'999) return false;
  return (d.seconds() >= 0 || d.nanos() <= 0) && (d.seconds() <= 0 || d.nanos() >= 0);
}

// Renders as proto3 JSON for every reader: C++'s printer and the duration
// rules above.
::testing::AssertionResult Renders(const v1::JobSpec& j) {
  absl::StatusOr<std::string> json = ToJson(j);
  if (!json.ok()) return ::testing::AssertionFailure() << json.status();
  if (j.has_expected_duration() && !DurationFollowsItsSpec(j.expected_duration())) {
    return ::testing::AssertionFailure() << "expected_duration " << j.expected_duration().seconds()
                                         << "s " << j.expected_duration().nanos() << "ns";
  }
  if (j.has_max_duration() && !DurationFollowsItsSpec(j.max_duration())) {
    return ::testing::AssertionFailure() << "max_duration " << j.max_duration().seconds() << "s "
                                         << j.max_duration().nanos() << "ns";
  }
  return ::testing::AssertionSuccess();
}

// Every spec ValidateJobs hands back, accepted or rejected, renders as proto3
// JSON: a rejected job is stored and listed, and one that cannot be rendered
// made every JSON read of the job list fail. Times and durations are drawn
// around the edges of both the validation range and proto3 JSON's.
TEST(JobValidationRenderTest, EveryValidatedSpecRendersAsJson) {
  // --gtest_random_seed=N replays a failure; else a new seed each run.
  uint32_t seed = static_cast<uint32_t>(::testing::UnitTest::GetInstance()->random_seed());
  if (seed == 0) seed = std::random_device{}();
  std::mt19937_64 rng(seed);
  const int64_t kSeconds[] = {
      0, 1, 5, -1, -5, kMaxJobDurationSeconds, kMaxJobDurationSeconds + 1,
      315'576'000'000, 315'576'000'001, -315'576'000'001, -62135596800, -62135596801,
      253402300799, 253402300800, INT64_MAX, INT64_MIN};
  const int32_t kNanos[] = {0, 1, -1, -5, 999'999'999, 1'000'000'000, -1'000'000'000,
                            INT32_MAX, INT32_MIN};
  auto pick_seconds = [&] { return kSeconds[rng() % std::size(kSeconds)]; };
  auto pick_nanos = [&] { return kNanos[rng() % std::size(kNanos)]; };
  std::vector<v1::JobSpec> jobs;
  for (int i = 0; i < 400; ++i) {
    v1::JobSpec j = Good("j" + std::to_string(i));
    if (rng() % 2) {
      j.mutable_created_at()->set_seconds(pick_seconds());
      j.mutable_created_at()->set_nanos(pick_nanos());
    }
    if (rng() % 2) {
      j.mutable_expected_duration()->set_seconds(pick_seconds());
      j.mutable_expected_duration()->set_nanos(pick_nanos());
    }
    if (rng() % 2) {
      j.mutable_max_duration()->set_seconds(pick_seconds());
      j.mutable_max_duration()->set_nanos(pick_nanos());
    }
    jobs.push_back(std::move(j));
  }
  ValidatedJobs v = ValidateJobs(jobs, Config(), nullptr);
  ASSERT_GT(v.rejected.size(), 50u) << "seed " << seed;
  ASSERT_GT(v.accepted.size(), 10u) << "seed " << seed;
  for (const v1::JobSpec& j : v.accepted) {
    EXPECT_TRUE(Renders(j)) << "seed " << seed << " job " << j.id();
  }
  for (const v1::JobSpec& j : v.rejected) {
    EXPECT_TRUE(Renders(j)) << "seed " << seed << " job " << j.id();
  }
}

// The two cases seen: a creation time after 9999-12-31 and a duration whose
// nanos have the other sign. The spec is stored without them; the rejection
// still names the field.
TEST(JobValidationRenderTest, UnrenderableFieldsOfARejectedJobAreCleared) {
  v1::JobSpec late = Good("late");
  late.mutable_created_at()->set_seconds(253402300800);
  v1::JobSpec odd = Good("odd");
  odd.mutable_max_duration()->set_seconds(5);
  odd.mutable_max_duration()->set_nanos(-5);
  odd.set_action("keep-me");
  ASSERT_FALSE(Renders(late));  // what the store used to keep
  ASSERT_FALSE(Renders(odd));
  ValidatedJobs v = ValidateJobs({late, odd}, Config(), nullptr);
  ASSERT_EQ(v.rejected.size(), 2u);
  EXPECT_EQ(v.rejections[0].field(), "created_at");
  EXPECT_EQ(v.rejections[1].field(), "max_duration");
  EXPECT_FALSE(v.rejected[0].has_created_at());
  EXPECT_FALSE(v.rejected[1].has_max_duration());
  EXPECT_EQ(v.rejected[1].action(), "keep-me");  // the rest is kept
  EXPECT_TRUE(Renders(v.rejected[0]));
  EXPECT_TRUE(Renders(v.rejected[1]));
  v1::JobSpec fine = Good("fine");
  fine.mutable_max_duration()->set_seconds(-5);  // rejected, but renderable: kept as sent
  EXPECT_TRUE(ClearUnrenderableFields(&fine).empty());
  EXPECT_EQ(fine.max_duration().seconds(), -5);
}

}  // namespace
}  // namespace berth
