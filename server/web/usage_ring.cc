#include "server/web/usage_ring.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "planner/base/units.h"
#include "server/web/html.h"

namespace berth::web {

UsageRing::UsageRing(size_t capacity, absl::Duration interval)
    : capacity_(std::max<size_t>(1, capacity)), interval_(interval) {}

bool UsageRing::Due(absl::Time now) const {
  absl::MutexLock lock(&mu_);
  return now - last_ >= interval_;
}

void UsageRing::Add(const UsageSample& sample) {
  absl::MutexLock lock(&mu_);
  last_ = sample.time;
  if (ring_.size() < capacity_) {
    ring_.push_back(sample);
    return;
  }
  ring_[next_] = sample;
  next_ = (next_ + 1) % capacity_;
}

std::vector<UsageSample> UsageRing::Samples() const {
  absl::MutexLock lock(&mu_);
  std::vector<UsageSample> out;
  out.reserve(ring_.size());
  for (size_t i = 0; i < ring_.size(); ++i) out.push_back(ring_[(next_ + i) % ring_.size()]);
  return out;
}

namespace {

constexpr int kWidth = 960, kHeight = 150, kLeft = 60, kTop = 10;

struct Series {
  const char* name;
  const char* color;
  int64_t UsageSample::*field;
  bool dashed;
};

std::string Panel(const char* id, const char* title, const std::vector<UsageSample>& samples,
                  absl::Time now, std::initializer_list<Series> series,
                  std::string (*format)(int64_t)) {
  const absl::Time from = now - absl::Hours(24);
  int64_t top = 1;
  for (const UsageSample& s : samples) {
    for (const Series& se : series) top = std::max(top, s.*(se.field));
  }
  const double w = kWidth - kLeft - 10, h = kHeight - kTop - 20;
  auto x = [&](absl::Time t) {
    return kLeft + w * std::clamp(absl::ToDoubleSeconds(t - from) / 86400.0, 0.0, 1.0);
  };
  auto y = [&](int64_t v) { return kTop + h - h * static_cast<double>(v) / top; };
  std::string out = absl::StrCat("<h2>", title, "</h2><svg id=\"", id,
                                 "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"", kWidth,
                                 "\" height=\"", kHeight, "\" role=\"img\">");
  absl::StrAppendFormat(&out,
                        "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"#fff\" "
                        "stroke=\"#ccc\"/>",
                        kLeft, kTop, w, h);
  absl::StrAppendFormat(&out, "<text x=\"2\" y=\"%d\" font-size=\"11\">%s</text>", kTop + 10,
                        HtmlEscape(format(top)));
  absl::StrAppendFormat(&out, "<text x=\"2\" y=\"%.0f\" font-size=\"11\">0</text>", kTop + h);
  for (int hour = 0; hour <= 24; hour += 6) {
    absl::StrAppendFormat(&out,
                          "<text x=\"%.0f\" y=\"%d\" font-size=\"11\" "
                          "text-anchor=\"middle\">%s</text>",
                          kLeft + w * hour / 24, kHeight - 4,
                          hour == 24 ? std::string("now") : absl::StrCat("-", 24 - hour, "h"));
  }
  int legend = kLeft + 8;
  for (const Series& se : series) {
    std::string points;
    for (const UsageSample& s : samples) {
      if (s.time < from) continue;
      absl::StrAppendFormat(&points, "%.1f,%.1f ", x(s.time), y(s.*(se.field)));
    }
    absl::StrAppendFormat(&out,
                          "<polyline class=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s "
                          "points=\"%s\"/>",
                          se.name, se.color, se.dashed ? " stroke-dasharray=\"6,4\"" : "", points);
    absl::StrAppendFormat(&out,
                          "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"%s\">%s</text>", legend,
                          kTop + 12, se.color, se.name);
    legend += 90;
  }
  out += "</svg>";
  return out;
}

std::string Bytes(int64_t v) { return FormatBytes(v); }
std::string Cpu(int64_t v) { return FormatCpu(v); }
std::string Count(int64_t v) { return absl::StrCat(v); }

}  // namespace

std::string ChartBody(const std::vector<UsageSample>& samples, absl::Time now) {
  std::string out = absl::StrCat(
      "<p id=\"samples\">", samples.size(),
      " samples, one a minute, kept by berthd for 24 hours (since its start). Dashed: the "
      "budget; reserved: what running and admitted jobs hold; observed: what their "
      "containers use.</p>");
  using S = UsageSample;
  out += Panel("chart-memory", "Memory", samples, now,
               {{"budget", "#888", &S::memory_budget, true},
                {"reserved", "#2f6db5", &S::memory_reserved, false},
                {"observed", "#d9822b", &S::memory_observed, false}},
               Bytes);
  out += Panel("chart-cpu", "CPU", samples, now,
               {{"budget", "#888", &S::cpu_budget, true},
                {"reserved", "#2f6db5", &S::cpu_reserved, false},
                {"observed", "#d9822b", &S::cpu_observed, false}},
               Cpu);
  out += Panel("chart-workers", "Workers", samples, now,
               {{"budget", "#888", &S::workers_budget, true},
                {"workers", "#2f6db5", &S::workers, false}},
               Count);
  out += Panel("chart-queue", "Queue", samples, now, {{"queued", "#7a3fb5", &S::queued, false}},
               Count);
  return out;
}

}  // namespace berth::web
