#include "planner/base/units.h"

#include "gtest/gtest.h"

namespace berth {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

TEST(UnitsTest, Bytes) {
  struct Case {
    int64_t bytes;
    Rounding rounding;
    const char* want;
  } cases[] = {
      {0, Rounding::kNearest, "0 B"},
      {512, Rounding::kNearest, "512 B"},
      {1536, Rounding::kNearest, "1.5 KiB"},
      {6 * kGiB, Rounding::kNearest, "6 GiB"},
      {16 * kGiB, Rounding::kNearest, "16 GiB"},
      {3 * kGiB / 2, Rounding::kNearest, "1.5 GiB"},
      {2 * kGiB - 1, Rounding::kNearest, "2 GiB"},
      {2 * kGiB - 1, Rounding::kDown, "1.99 GiB"},
      // Two decimals, so that two of berthctl list's 1.75 GiB add up to
      // berthctl plan's 3.5 GiB (one decimal printed 1.8).
      {7 * kGiB / 4, Rounding::kNearest, "1.75 GiB"},
      {7 * kGiB / 2, Rounding::kNearest, "3.5 GiB"},
      {1024 * kGiB, Rounding::kNearest, "1 TiB"},
      {-6 * kGiB, Rounding::kNearest, "-6 GiB"},
      {INT64_MAX, Rounding::kDown, "7.99 EiB"},
      {INT64_MIN, Rounding::kNearest, "-8 EiB"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(FormatBytes(c.bytes, c.rounding), c.want) << c.bytes;
  }
}

// A value beside a limit never reads as the limit itself.
TEST(UnitsTest, BytesBeside) {
  EXPECT_EQ(FormatBytesBeside((6 << 20) - 1, 6 << 20), "6291455 B");
  EXPECT_EQ(FormatBytesBeside((int64_t{1} << 30) + 1, int64_t{1} << 30), "1073741825 B");
  EXPECT_EQ(FormatBytesBeside(6 << 20, 6 << 20), "6 MiB");
  EXPECT_EQ(FormatBytesBeside(5 << 20, 6 << 20), "5 MiB");
}

TEST(UnitsTest, Cpu) {
  EXPECT_EQ(FormatCpu(1000), "1 core");
  EXPECT_EQ(FormatCpu(1500), "1.5 cores");
  EXPECT_EQ(FormatCpu(250), "0.25 cores");
  EXPECT_EQ(FormatCpu(256000), "256 cores");
  EXPECT_EQ(FormatCpu(0), "0 cores");
}

TEST(UnitsTest, Time) {
  EXPECT_EQ(FormatTimeUtc(absl::FromUnixSeconds(0) + absl::Hours(14) +
                          absl::Minutes(20)),
            "1970-01-01 14:20:00 UTC");
  EXPECT_EQ(FormatTimeUtc(absl::InfiniteFuture()), "unknown");
}

}  // namespace
}  // namespace berth
