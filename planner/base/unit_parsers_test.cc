#include "planner/base/units.h"

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using ::testing::HasSubstr;

struct BytesCase {
  const char* text;
  int64_t bytes;
};

TEST(ParseBytes, AcceptsBinaryDecimalAndFractionalUnits) {
  const BytesCase cases[] = {
      {"0", 0},
      {"100", 100},
      {"100B", 100},
      {"1Ki", 1024},
      {"512Mi", 512LL << 20},
      {"512MiB", 512LL << 20},
      {"256Gi", 256LL << 30},
      {"2Ti", 2LL << 40},
      {"1.5Gi", 3LL << 29},
      {"1.5G", 1500000000},
      {"4G", 4000000000},
      {"10k", 10000},
      {" 8Gi ", 8LL << 30},
      {"0.5Ki", 512},
  };
  for (const BytesCase& c : cases) {
    auto got = ParseBytes("--memory", c.text);
    ASSERT_TRUE(got.ok()) << c.text << ": " << got.status();
    EXPECT_EQ(*got, c.bytes) << c.text;
  }
}

TEST(ParseBytes, ErrorsNameTheFlagTheValueAndTheProblem) {
  auto unknown = ParseBytes("--memory", "256Gx");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.status().message(),
            "--memory: \"256Gx\": unknown unit \"Gx\" (use B, K, M, G, T, Ki, "
            "Mi, Gi, Ti)");
  auto negative = ParseBytes("--memory", "-4Gi");
  EXPECT_EQ(negative.status().message(),
            "--memory: \"-4Gi\": must not be negative");
  auto empty = ParseBytes("memory", "");
  EXPECT_THAT(empty.status().message(), HasSubstr("memory: \"\": empty"));
  auto word = ParseBytes("--memory", "lots");
  EXPECT_THAT(word.status().message(), HasSubstr("not a size"));
  auto huge = ParseBytes("--memory", "99999999999Pi");
  EXPECT_THAT(huge.status().message(), HasSubstr("too large"));
  EXPECT_FALSE(ParseBytes("--memory", "1..5Gi").ok());
}

TEST(ParseCpuMillis, CoresFractionsAndMillicores) {
  EXPECT_EQ(*ParseCpuMillis("--cpus", "32"), 32000);
  EXPECT_EQ(*ParseCpuMillis("--cpus", "1.5"), 1500);
  EXPECT_EQ(*ParseCpuMillis("--cpus", "500m"), 500);
  EXPECT_EQ(*ParseCpuMillis("--cpus", "0.25"), 250);
  auto bad = ParseCpuMillis("--cpus", "4 cores");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(),
              HasSubstr("--cpus: \"4 cores\": unknown unit \"cores\""));
  EXPECT_THAT(ParseCpuMillis("--cpus", "1.5m").status().message(),
              HasSubstr("whole number"));
  EXPECT_THAT(ParseCpuMillis("--cpus", "-1").status().message(),
              HasSubstr("must not be negative"));
}

TEST(ParseHumanDuration, UnitsAndCombinations) {
  EXPECT_EQ(*ParseHumanDuration("--target-p95-wait", "2h"), absl::Hours(2));
  EXPECT_EQ(*ParseHumanDuration("x", "90m"), absl::Minutes(90));
  EXPECT_EQ(*ParseHumanDuration("x", "45s"), absl::Seconds(45));
  EXPECT_EQ(*ParseHumanDuration("x", "1h30m"), absl::Minutes(90));
  EXPECT_EQ(*ParseHumanDuration("x", "1.5h"), absl::Minutes(90));
  EXPECT_EQ(*ParseHumanDuration("x", "2d"), absl::Hours(48));
  EXPECT_EQ(*ParseHumanDuration("x", "250ms"), absl::Milliseconds(250));
  EXPECT_EQ(*ParseHumanDuration("x", "0"), absl::ZeroDuration());
  EXPECT_EQ(ParseHumanDuration("--target-p95-wait", "2 hours").status().message(),
            "--target-p95-wait: \"2 hours\": unknown unit \"hours\" (use d, h, "
            "m, s or ms)");
  EXPECT_EQ(ParseHumanDuration("--target-p95-wait", "soon").status().message(),
            "--target-p95-wait: \"soon\": not a duration; expected e.g. 2h, "
            "90m, 1h30m, 45s");
  EXPECT_EQ(ParseHumanDuration("--target-p95-wait", "2y").status().message(),
            "--target-p95-wait: \"2y\": unknown unit \"y\" (use d, h, m, s or "
            "ms)");
  EXPECT_THAT(ParseHumanDuration("x", "15").status().message(),
              HasSubstr("missing unit"));
}

TEST(Format, BytesCpuDurations) {
  EXPECT_EQ(FormatBytes(256LL << 30), "256 GiB");
  EXPECT_EQ(FormatBytes(3LL << 29), "1.5 GiB");
  EXPECT_EQ(FormatBytes(512LL << 20), "512 MiB");
  EXPECT_EQ(FormatBytes(100), "100 B");
  EXPECT_EQ(FormatBytes(-(32LL << 30)), "-32 GiB");
  EXPECT_EQ(FormatBytesFlag(256LL << 30), "256Gi");
  EXPECT_EQ(FormatBytesFlag(1536LL << 20), "1536Mi");
  EXPECT_EQ(FormatBytesFlag(100), "100");
  EXPECT_EQ(FormatCores(32000), "32");
  EXPECT_EQ(FormatCores(1500), "1.5");
  EXPECT_EQ(FormatCores(250), "0.25");
  EXPECT_EQ(FormatHumanDuration(absl::Minutes(90)), "1h30m");
  EXPECT_EQ(FormatHumanDuration(absl::Seconds(45)), "45s");
  EXPECT_EQ(FormatHumanDuration(absl::Hours(51)), "2d3h");
  EXPECT_EQ(FormatHumanDuration(absl::Hours(1) + absl::Seconds(5)), "1h5s");
  EXPECT_EQ(FormatHumanDuration(absl::ZeroDuration()), "0s");
  EXPECT_EQ(FormatHumanDuration(absl::Milliseconds(250)), "250ms");
}

TEST(Format, RoundTripsThroughTheParsers) {
  for (int64_t b : {1LL << 30, 3LL << 29, 100LL, 512LL << 20}) {
    EXPECT_EQ(*ParseBytes("x", FormatBytesFlag(b)), b);
  }
  for (int64_t m : {32000LL, 1500LL, 250LL, 1LL}) {
    EXPECT_EQ(*ParseCpuMillis("x", FormatCores(m)), m);
  }
  for (absl::Duration d : {absl::Minutes(90), absl::Hours(51), absl::Seconds(1)}) {
    EXPECT_EQ(*ParseHumanDuration("x", FormatHumanDuration(d)), d);
  }
}

}  // namespace
}  // namespace berth
