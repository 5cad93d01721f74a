// SVG charts for berth-plan: usage against budgets over time, as stacked
// panels sharing one time axis (RenderChartSvg) or as a grid of small
// multiples with a common scale (RenderSmallMultiplesSvg, for sweeps).
//
// Output is a standalone, well-formed SVG 1.1 document (UTF-8, all text
// XML-escaped) that browsers render as is. Each series is a
// <g class="series" data-name="..."> and each budget a
// <line class="budget" data-name="...">, so tests and scripts can find them.
// Step series are reduced to at most a few points per horizontal pixel
// (keeping each pixel's minimum and maximum), so peaks stay visible and
// files stay small. Pure functions; thread-safe.
#ifndef BERTH_TOOLS_PLAN_CHART_H_
#define BERTH_TOOLS_PLAN_CHART_H_

#include <string>
#include <utility>
#include <vector>

namespace berth {
namespace plan {

// A step function: y = points[k].second from points[k].first until the next
// point's x (the last holds until the chart's x_max). x ascending.
struct Series {
  std::string name;   // legend text, e.g. "Berth"
  std::string color;  // any SVG colour, e.g. "#1f77b4"
  std::vector<std::pair<double, double>> points;
};

struct Panel {
  std::string title;    // e.g. "Memory"
  std::string y_label;  // axis label with unit, e.g. "GiB"
  // A horizontal budget line; not drawn if budget < 0.
  double budget = -1;
  std::string budget_label;  // e.g. "budget 256 GiB"
  std::vector<Series> series;
};

struct Chart {
  std::string title;
  // Optional lines under the title, separated by '\n'. Title and lines too
  // long for the width are cut with "...".
  std::string subtitle;
  std::string x_label = "time since start (hours)";
  double x_max = 1;  // right end of the time axis, in x units (> 0)
  std::vector<Panel> panels;
};

// Panels stacked vertically, one legend for all series names.
std::string RenderChartSvg(const Chart& chart);

// A grid of `columns` panels per row; every panel uses the same x range
// (chart.x_max) and the same y range (the largest over all panels), so they
// compare at a glance.
std::string RenderSmallMultiplesSvg(const Chart& chart, int columns);

// XML text/attribute escaping (& < > " ').
std::string XmlEscape(const std::string& s);

}  // namespace plan
}  // namespace berth

#endif  // BERTH_TOOLS_PLAN_CHART_H_
