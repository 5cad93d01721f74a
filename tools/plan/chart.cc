#include "tools/plan/chart.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"

namespace berth {
namespace plan {
namespace {

// A "nice" tick step (1, 2 or 5 x 10^k) giving about `count` ticks up to max.
double NiceStep(double max, int count) {
  if (max <= 0) return 1;
  double raw = max / count;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double norm = raw / mag;
  double nice = norm < 1.5 ? 1 : norm < 3.5 ? 2 : norm < 7.5 ? 5 : 10;
  return nice * mag;
}

std::string Num(double v) {
  std::string s = absl::StrFormat("%.1f", v);
  if (absl::EndsWith(s, ".0")) s.resize(s.size() - 2);
  if (s == "-0") s = "0";
  return s;
}

// Long text is cut to fit the chart width (about 6.5 px per character at
// font-size 12).
std::string Fit(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  return text.substr(0, max_chars - 3) + "...";
}

std::string TickLabel(double v, double step) {
  if (step >= 1) return absl::StrFormat("%.0f", v);
  if (step >= 0.1) return absl::StrFormat("%.1f", v);
  return absl::StrFormat("%.2f", v);
}

// Geometry of one panel's plotting area.
struct Box {
  double x, y, w, h;  // pixels
  double x_max, y_max;  // data ranges (from 0)
  double px(double v) const { return x + w * std::clamp(v / x_max, 0.0, 1.0); }
  double py(double v) const { return y + h - h * std::clamp(v / y_max, 0.0, 1.0); }
};

// Step polyline, at most ~4 points per pixel column.
std::string StepPath(const Series& s, const Box& b) {
  if (s.points.empty()) return "";
  std::vector<std::pair<double, double>> out;  // pixel coordinates
  auto emit = [&out](double x, double y) {
    if (!out.empty() && out.back().first == x && out.back().second == y) return;
    out.emplace_back(x, y);
  };
  double prev_y = b.py(s.points.front().second);
  emit(b.px(s.points.front().first), prev_y);
  size_t i = 1;
  while (i < s.points.size()) {
    double col = std::floor(b.px(s.points[i].first));
    // All points in this pixel column: vertical extent, then the last value.
    double lo = prev_y, hi = prev_y, last = prev_y;
    emit(col, prev_y);
    while (i < s.points.size() && std::floor(b.px(s.points[i].first)) == col) {
      last = b.py(s.points[i].second);
      lo = std::min(lo, last);
      hi = std::max(hi, last);
      ++i;
    }
    if (lo != prev_y) emit(col, lo);
    if (hi != prev_y) emit(col, hi);
    emit(col, last);
    prev_y = last;
  }
  emit(b.x + b.w, prev_y);
  std::string pts;
  for (const auto& [x, y] : out) {
    absl::StrAppend(&pts, pts.empty() ? "" : " ", Num(x), ",", Num(y));
  }
  return pts;
}

double PanelMax(const Panel& p) {
  double m = std::max(p.budget, 0.0);
  for (const Series& s : p.series) {
    for (const auto& pt : s.points) m = std::max(m, pt.second);
  }
  return m;
}

void DrawPanel(const Panel& p, const Box& b, const std::string& x_label,
               bool x_labels, std::string* svg, int font) {
  absl::StrAppend(svg, "<g class=\"panel\" data-title=\"", XmlEscape(p.title), "\">\n");
  size_t title_chars = static_cast<size_t>((b.w + 30) / (0.62 * (font + 1)));
  absl::StrAppend(svg, "<text x=\"", Num(b.x), "\" y=\"", Num(b.y - 6),
                  "\" font-size=\"", font + 1, "\" font-weight=\"bold\">",
                  XmlEscape(Fit(p.title, title_chars)), "</text>\n");
  // Grid and y ticks.
  double ystep = NiceStep(b.y_max, 4);
  for (double v = 0; v <= b.y_max + 1e-9; v += ystep) {
    absl::StrAppend(svg, "<line x1=\"", Num(b.x), "\" y1=\"", Num(b.py(v)), "\" x2=\"",
                    Num(b.x + b.w), "\" y2=\"", Num(b.py(v)),
                    "\" stroke=\"#e0e0e0\" stroke-width=\"1\"/>\n");
    absl::StrAppend(svg, "<text x=\"", Num(b.x - 6), "\" y=\"", Num(b.py(v) + 4),
                    "\" font-size=\"", font, "\" text-anchor=\"end\">",
                    TickLabel(v, ystep), "</text>\n");
  }
  double xstep = NiceStep(b.x_max, 8);
  for (double v = 0; v <= b.x_max + 1e-9; v += xstep) {
    absl::StrAppend(svg, "<line x1=\"", Num(b.px(v)), "\" y1=\"", Num(b.y + b.h),
                    "\" x2=\"", Num(b.px(v)), "\" y2=\"", Num(b.y + b.h + 4),
                    "\" stroke=\"#333\"/>\n");
    if (x_labels) {
      absl::StrAppend(svg, "<text x=\"", Num(b.px(v)), "\" y=\"", Num(b.y + b.h + 16),
                      "\" font-size=\"", font, "\" text-anchor=\"middle\">",
                      TickLabel(v, xstep), "</text>\n");
    }
  }
  // Axes.
  absl::StrAppend(svg, "<line x1=\"", Num(b.x), "\" y1=\"", Num(b.y), "\" x2=\"", Num(b.x),
                  "\" y2=\"", Num(b.y + b.h), "\" stroke=\"#333\"/>\n");
  absl::StrAppend(svg, "<line x1=\"", Num(b.x), "\" y1=\"", Num(b.y + b.h), "\" x2=\"",
                  Num(b.x + b.w), "\" y2=\"", Num(b.y + b.h), "\" stroke=\"#333\"/>\n");
  // Y label, rotated.
  double ly = b.y + b.h / 2;
  absl::StrAppend(svg, "<text x=\"", Num(b.x - 44), "\" y=\"", Num(ly), "\" font-size=\"",
                  font, "\" text-anchor=\"middle\" transform=\"rotate(-90 ", Num(b.x - 44),
                  " ", Num(ly), ")\">", XmlEscape(p.y_label), "</text>\n");
  if (x_labels && !x_label.empty()) {
    absl::StrAppend(svg, "<text x=\"", Num(b.x + b.w / 2), "\" y=\"", Num(b.y + b.h + 32),
                    "\" font-size=\"", font, "\" text-anchor=\"middle\">",
                    XmlEscape(x_label), "</text>\n");
  }
  // Series.
  for (const Series& s : p.series) {
    absl::StrAppend(svg, "<g class=\"series\" data-name=\"", XmlEscape(s.name), "\">",
                    "<title>", XmlEscape(absl::StrCat(p.title, ": ", s.name)), "</title>",
                    "<polyline fill=\"none\" stroke=\"", XmlEscape(s.color),
                    "\" stroke-width=\"1.5\" points=\"", StepPath(s, b), "\"/></g>\n");
  }
  // Budget on top.
  if (p.budget >= 0) {
    absl::StrAppend(svg, "<line class=\"budget\" data-name=\"", XmlEscape(p.budget_label),
                    "\" x1=\"", Num(b.x), "\" y1=\"", Num(b.py(p.budget)), "\" x2=\"",
                    Num(b.x + b.w), "\" y2=\"", Num(b.py(p.budget)),
                    "\" stroke=\"#d62728\" stroke-width=\"1.5\" "
                    "stroke-dasharray=\"6 4\"/>\n");
    absl::StrAppend(svg, "<text x=\"", Num(b.x + b.w - 4), "\" y=\"", Num(b.py(p.budget) - 4),
                    "\" font-size=\"", font, "\" text-anchor=\"end\" fill=\"#d62728\">",
                    XmlEscape(p.budget_label), "</text>\n");
  }
  absl::StrAppend(svg, "</g>\n");
}

std::vector<std::string> SubtitleLines(const Chart& c) {
  std::vector<std::string> lines;
  if (c.subtitle.empty()) return lines;
  size_t start = 0;
  while (true) {
    size_t nl = c.subtitle.find('\n', start);
    lines.push_back(c.subtitle.substr(start, nl == std::string::npos ? nl : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return lines;
}

// Height taken by the title and subtitle lines.
double HeaderHeight(const Chart& c) { return 56 + 16.0 * SubtitleLines(c).size(); }

void Header(std::string* svg, double width, double height, const Chart& c) {
  size_t title_chars = static_cast<size_t>((width - 40) / 10.5);
  size_t line_chars = static_cast<size_t>((width - 40) / 6.6);
  absl::StrAppend(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"",
                  Num(width), "\" height=\"", Num(height), "\" viewBox=\"0 0 ", Num(width),
                  " ", Num(height), "\" font-family=\"sans-serif\">\n",
                  "<title>", XmlEscape(c.title), "</title>\n",
                  "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
                  "<text x=\"20\" y=\"26\" font-size=\"18\" font-weight=\"bold\">",
                  XmlEscape(Fit(c.title, title_chars)), "</text>\n");
  double y = 46;
  for (const std::string& line : SubtitleLines(c)) {
    absl::StrAppend(svg, "<text x=\"20\" y=\"", Num(y), "\" font-size=\"12\" fill=\"#555\">",
                    XmlEscape(Fit(line, line_chars)), "</text>\n");
    y += 16;
  }
}

// Legend: every distinct series name (first colour seen) and the budget.
void Legend(std::string* svg, const std::vector<Panel>& panels, double x, double y) {
  std::vector<std::pair<std::string, std::string>> entries;
  std::set<std::string> seen;
  bool budget = false;
  for (const Panel& p : panels) {
    budget = budget || p.budget >= 0;
    for (const Series& s : p.series) {
      if (seen.insert(s.name).second) entries.emplace_back(s.name, s.color);
    }
  }
  absl::StrAppend(svg, "<g class=\"legend\">\n");
  for (const auto& [name, color] : entries) {
    absl::StrAppend(svg, "<line x1=\"", Num(x), "\" y1=\"", Num(y - 4), "\" x2=\"",
                    Num(x + 24), "\" y2=\"", Num(y - 4), "\" stroke=\"", XmlEscape(color),
                    "\" stroke-width=\"3\"/>\n<text x=\"", Num(x + 30), "\" y=\"", Num(y),
                    "\" font-size=\"12\">", XmlEscape(name), "</text>\n");
    x += 40 + 7.0 * name.size();
  }
  if (budget) {
    absl::StrAppend(svg, "<line x1=\"", Num(x), "\" y1=\"", Num(y - 4), "\" x2=\"",
                    Num(x + 24), "\" y2=\"", Num(y - 4),
                    "\" stroke=\"#d62728\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n"
                    "<text x=\"",
                    Num(x + 30), "\" y=\"", Num(y), "\" font-size=\"12\">budget</text>\n");
  }
  absl::StrAppend(svg, "</g>\n");
}

}  // namespace

std::string XmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control characters are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') {
          out += ' ';
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string RenderChartSvg(const Chart& chart) {
  const double width = 960, left = 90, right = 30, panel_h = 170, gap = 62;
  const double top = HeaderHeight(chart) + 20;
  double height = top + chart.panels.size() * (panel_h + gap) + 10;
  std::string svg;
  Header(&svg, width, height, chart);
  Legend(&svg, chart.panels, 20, top - 18);
  double x_max = chart.x_max > 0 ? chart.x_max : 1;
  for (size_t i = 0; i < chart.panels.size(); ++i) {
    const Panel& p = chart.panels[i];
    double y_max = PanelMax(p);
    y_max = y_max > 0 ? y_max * 1.08 : 1;
    Box b{left, top + 14 + i * (panel_h + gap), width - left - right, panel_h, x_max, y_max};
    DrawPanel(p, b, chart.x_label, true, &svg, 11);
  }
  svg += "</svg>\n";
  return svg;
}

std::string RenderSmallMultiplesSvg(const Chart& chart, int columns) {
  columns = std::max(1, columns);
  const double cell_w = 340, cell_h = 190, plot_w = 260, plot_h = 120;
  const double top = HeaderHeight(chart) + 20;
  size_t rows = (chart.panels.size() + columns - 1) / columns;
  double width = 20 + columns * cell_w;
  double height = top + rows * cell_h + 10;
  std::string svg;
  Header(&svg, width, height, chart);
  Legend(&svg, chart.panels, 20, top - 18);
  double y_max = 0;
  for (const Panel& p : chart.panels) y_max = std::max(y_max, PanelMax(p));
  y_max = y_max > 0 ? y_max * 1.08 : 1;
  double x_max = chart.x_max > 0 ? chart.x_max : 1;
  for (size_t i = 0; i < chart.panels.size(); ++i) {
    double cx = 20 + (i % columns) * cell_w, cy = top + (i / columns) * cell_h;
    Box b{cx + 60, cy + 24, plot_w, plot_h, x_max, y_max};
    DrawPanel(chart.panels[i], b, chart.x_label, true, &svg, 10);
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace plan
}  // namespace berth
