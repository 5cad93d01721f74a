// StoredRecord over generated jobs: every accessor equals the job's field,
// the value is the job's encoding and parses back to it, and a record made
// from a persisted value (the load path) equals one made from the job.
#include "executor/store/job_record.h"

#include <cstdint>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "planner/convert/convert.h"

namespace berth {
namespace {

// Strings of 0..40 pieces (empty, inline-sized and heap-sized), valid
// UTF-8 as proto3 strings must be, with multi-byte characters among them.
std::string RandomString(std::mt19937_64& gen) {
  static const char* const kPieces[] = {"a", "Z", "-", "_", "0", "9", ".", "/", " ",
                                        "\xc3\xa9", "\xe6\x97\xa5", "\xf0\x9f\x9a\xa2"};
  const int n = std::uniform_int_distribution<int>(0, 40)(gen);
  std::string s;
  for (int i = 0; i < n; ++i) s += kPieces[gen() % (sizeof(kPieces) / sizeof(kPieces[0]))];
  return s;
}

StoredJob RandomJob(std::mt19937_64& gen) {
  StoredJob j;
  v1::JobSpec& spec = *j.job.mutable_spec();
  spec.set_id(absl::StrCat("job-", gen() % 1000000, RandomString(gen)));
  if (gen() % 4 != 0) spec.set_workspace(RandomString(gen));
  if (gen() % 3 == 0) spec.set_pool(RandomString(gen));
  if (gen() % 3 == 0) j.job.set_node(RandomString(gen));
  spec.set_action(RandomString(gen));
  spec.set_image("berth-test/busybox:1");
  for (int k = static_cast<int>(gen() % 3); k > 0; --k) spec.add_depends_on(RandomString(gen));
  for (int k = static_cast<int>(gen() % 4); k > 0; --k) spec.add_argv(RandomString(gen));
  spec.set_priority(static_cast<int32_t>(gen() % 21) - 10);
  spec.mutable_resources()->set_cpu_millis(static_cast<int64_t>(gen() % 64000));
  spec.mutable_resources()->set_memory_bytes(static_cast<int64_t>(gen() % (int64_t{1} << 40)));
  if (gen() % 2 == 0) j.job.set_raised_memory_bytes(static_cast<int64_t>(gen() % (int64_t{1} << 41)));
  if (gen() % 2 == 0) spec.mutable_expected_duration()->set_seconds(static_cast<int64_t>(gen() % 86400));
  if (gen() % 2 == 0) spec.mutable_created_at()->set_seconds(1'700'000'000 + static_cast<int64_t>(gen() % 1'000'000));
  if (gen() % 2 == 0) j.job.mutable_queued_at()->set_seconds(1'700'000'000 + static_cast<int64_t>(gen() % 1'000'000));
  if (gen() % 3 == 0) j.job.mutable_admitted_at()->set_seconds(1'700'000'000);
  if (gen() % 3 == 0) j.job.mutable_started_at()->set_nanos(static_cast<int32_t>(gen() % 1'000'000'000));
  if (gen() % 3 == 0) j.job.mutable_finished_at()->set_seconds(1'800'000'000);
  j.job.set_state(static_cast<v1::JobState>(gen() % 8));
  j.stop_intent = static_cast<StopIntent>(gen() % 4);
  return j;
}

void ExpectMatches(const StoredRecord& r, const StoredJob& j, uint64_t seed) {
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  const v1::JobSpec& spec = j.job.spec();
  EXPECT_EQ(r.id(), spec.id());
  EXPECT_EQ(r.workspace(), spec.workspace());
  EXPECT_EQ(r.pool(), spec.pool());
  EXPECT_EQ(r.node(), j.job.node());
  EXPECT_EQ(r.state(), j.job.state());
  EXPECT_EQ(r.stop_intent(), j.stop_intent);
  EXPECT_EQ(r.priority(), spec.priority());
  EXPECT_EQ(r.cpu_millis(), spec.resources().cpu_millis());
  EXPECT_EQ(r.memory_bytes(), spec.resources().memory_bytes());
  EXPECT_EQ(r.raised_memory_bytes(), j.job.raised_memory_bytes());
  EXPECT_EQ(r.created_at(), planner::PlanningCreatedAt(j.job));
  EXPECT_EQ(std::vector<std::string>(spec.depends_on().begin(), spec.depends_on().end()),
            r.depends_on());
  // The value is the persisted form: stop intent, then the job's encoding.
  std::string want(1, static_cast<char>(j.stop_intent));
  j.job.AppendToString(&want);
  EXPECT_EQ(r.value(), want);
  const StoredJob back = r.Decode();
  EXPECT_EQ(back.job.SerializeAsString(), j.job.SerializeAsString());
  EXPECT_EQ(back.stop_intent, j.stop_intent);
}

TEST(StoredRecordTest, GeneratedJobsRoundTrip) {
  const uint64_t base = std::random_device{}();
  for (uint64_t k = 0; k < 2000; ++k) {
    const uint64_t seed = base + k;
    std::mt19937_64 gen(seed);
    const StoredJob job = RandomJob(gen);
    const StoredRecord made(job);
    ExpectMatches(made, job, seed);
    // The load path: a persisted value and its parse.
    StoredJob parsed;
    ASSERT_TRUE(StoredRecord::ParseValue(made.value(), &parsed)) << "seed " << seed;
    const StoredRecord loaded(std::string(made.value()), parsed);
    ExpectMatches(loaded, job, seed);
    if (HasFailure()) return;  // the seed above reproduces it
  }
}

TEST(StoredRecordTest, ViewsOutliveAMove) {
  StoredJob j;
  j.job.mutable_spec()->set_id("a-job-id-longer-than-inline-strings");
  j.job.mutable_spec()->set_workspace("ws");
  StoredRecord r(j);
  const StoredRecord moved(std::move(r));
  EXPECT_EQ(moved.id(), "a-job-id-longer-than-inline-strings");
  EXPECT_EQ(moved.workspace(), "ws");
  EXPECT_EQ(moved.pool(), "");
}

}  // namespace
}  // namespace berth
