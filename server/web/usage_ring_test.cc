#include "server/web/usage_ring.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace berth::web {
namespace {

UsageSample At(int minute, int64_t queued) {
  UsageSample s;
  s.time = absl::FromUnixSeconds(1'800'000'000) + absl::Minutes(minute);
  s.queued = queued;
  s.memory_budget = int64_t{16} << 30;
  s.memory_reserved = int64_t{4} << 30;
  return s;
}

TEST(UsageRing, KeepsTheNewestInOrderAndIsBounded) {
  UsageRing ring(3, absl::Minutes(1));
  EXPECT_TRUE(ring.Due(At(0, 0).time));
  for (int i = 0; i < 5; ++i) ring.Add(At(i, i));
  std::vector<UsageSample> s = ring.Samples();
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].queued, 2);
  EXPECT_EQ(s[1].queued, 3);
  EXPECT_EQ(s[2].queued, 4);
  EXPECT_FALSE(ring.Due(At(4, 0).time + absl::Seconds(59)));
  EXPECT_TRUE(ring.Due(At(5, 0).time));
}

TEST(ChartBody, DrawsFourPanelsWithBudgetsAndNoScript) {
  std::vector<UsageSample> samples = {At(0, 10), At(1, 20), At(2, 5)};
  const std::string html = ChartBody(samples, At(3, 0).time);
  for (const char* id : {"chart-memory", "chart-cpu", "chart-workers", "chart-queue"}) {
    EXPECT_NE(html.find(absl::StrCat("<svg id=\"", id, "\"")), std::string::npos) << id;
  }
  EXPECT_NE(html.find("class=\"budget\""), std::string::npos);
  EXPECT_NE(html.find("class=\"queued\""), std::string::npos);
  EXPECT_NE(html.find("16 GiB"), std::string::npos);  // the memory axis' top
  EXPECT_NE(html.find("3 samples"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  // Samples older than 24 hours are left out of the lines.
  std::vector<UsageSample> old = {At(0, 1)};
  const std::string later = ChartBody(old, At(0, 0).time + absl::Hours(30));
  EXPECT_NE(later.find("class=\"queued\" fill=\"none\" stroke=\"#7a3fb5\" stroke-width=\"2\" points=\"\""),
            std::string::npos) << later;
}

}  // namespace
}  // namespace berth::web
