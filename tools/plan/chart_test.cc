#include "tools/plan/chart.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace berth::plan {
namespace {

using ::testing::HasSubstr;

int Count(const std::string& hay, const std::string& needle) {
  int n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos;
       at = hay.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

Chart Sample() {
  Chart c;
  c.title = "Burst <test> & \"quotes\"";
  c.subtitle = "256 GiB, 32 cores";
  c.x_max = 4;
  Panel mem;
  mem.title = "Memory";
  mem.y_label = "GiB";
  mem.budget = 256;
  mem.budget_label = "budget 256 GiB";
  mem.series.push_back({"Berth", "#1f77b4", {{0, 10}, {1, 200}, {2, 50}, {3, 0}}});
  mem.series.push_back({"count-only", "#ff7f0e", {{0, 10}, {1, 300}, {3, 0}}});
  Panel queue;
  queue.title = "Queue";
  queue.y_label = "jobs";
  queue.series.push_back({"Berth", "#1f77b4", {{0, 5}, {2, 0}}});
  c.panels = {mem, queue};
  return c;
}

TEST(Chart, HasTitleAxesLegendSeriesAndBudget) {
  std::string svg = RenderChartSvg(Sample());
  EXPECT_TRUE(absl::StartsWith(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg "));
  EXPECT_TRUE(absl::EndsWith(svg, "</svg>\n"));
  EXPECT_THAT(svg, HasSubstr("<title>Burst &lt;test&gt; &amp; &quot;quotes&quot;</title>"));
  EXPECT_EQ(Count(svg, "<g class=\"series\" data-name=\"Berth\">"), 2);
  EXPECT_EQ(Count(svg, "<g class=\"series\" data-name=\"count-only\">"), 1);
  EXPECT_EQ(Count(svg, "<line class=\"budget\" data-name=\"budget 256 GiB\""), 1);
  EXPECT_THAT(svg, HasSubstr(">GiB</text>"));
  EXPECT_THAT(svg, HasSubstr(">time since start (hours)</text>"));
  EXPECT_THAT(svg, HasSubstr("<g class=\"legend\">"));
  EXPECT_THAT(svg, HasSubstr(">budget</text>"));
  // No raw special characters leak from text.
  EXPECT_FALSE(absl::StrContains(svg, "<test>"));
  EXPECT_FALSE(absl::StrContains(svg, "& "));
}

TEST(Chart, StepPathKeepsPeaksWhenManyPointsShareAPixel) {
  Chart c;
  c.title = "dense";
  c.x_max = 1000;
  Panel p;
  p.title = "Memory";
  p.y_label = "GiB";
  Series s{"Berth", "#000", {}};
  // 100000 points: a single spike to 100 in the middle, 1 elsewhere.
  for (int i = 0; i < 100000; ++i) {
    s.points.emplace_back(i / 100.0, i == 50000 ? 100.0 : 1.0);
  }
  p.series.push_back(s);
  c.panels = {p};
  std::string svg = RenderChartSvg(c);
  EXPECT_LT(svg.size(), 60000u);  // reduced to a few points per pixel
  // The spike is the panel's maximum: y = top of the plot area + 8% headroom.
  size_t at = svg.find("points=\"");
  ASSERT_NE(at, std::string::npos);
  std::string pts = svg.substr(at + 8, svg.find('"', at + 8) - at - 8);
  double min_y = 1e9;
  for (absl::string_view xy : absl::StrSplit(pts, ' ')) {
    std::pair<std::string, std::string> parts = absl::StrSplit(xy, ',');
    min_y = std::min(min_y, std::stod(parts.second));
  }
  EXPECT_LT(min_y, 120.0);  // near the top of a 170 px panel starting ~90 px
}

TEST(Chart, SmallMultiplesShareOneScale) {
  Chart c = Sample();
  c.panels[1].budget = -1;
  std::string svg = RenderSmallMultiplesSvg(c, 2);
  EXPECT_EQ(Count(svg, "<g class=\"panel\""), 2);
  EXPECT_TRUE(absl::EndsWith(svg, "</svg>\n"));
}

TEST(Chart, SubtitleLinesAndLongTitlesAreCutToFit) {
  Chart c = Sample();
  c.title = std::string(200, 'x');
  c.subtitle = "first line\nsecond line";
  std::string svg = RenderChartSvg(c);
  EXPECT_THAT(svg, HasSubstr(">first line</text>"));
  EXPECT_THAT(svg, HasSubstr(">second line</text>"));
  EXPECT_THAT(svg, HasSubstr("x...</text>"));
  EXPECT_THAT(svg, HasSubstr("<title>" + std::string(200, 'x') + "</title>"));
}

TEST(XmlEscape, EscapesAllFiveAndDropsControlCharacters) {
  EXPECT_EQ(XmlEscape("a<b>&\"'\x01"), "a&lt;b&gt;&amp;&quot;&apos; ");
}

}  // namespace
}  // namespace berth::plan
