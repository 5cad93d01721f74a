#include "server/metrics/metrics.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace berth {
namespace {

std::string EscapeLabelValue(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string EscapeHelp(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string FormatValue(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    return absl::StrCat(static_cast<int64_t>(v));
  }
  return absl::StrFormat("%.9g", v);
}

std::string Labels(const std::vector<std::string>& names,
                   const std::vector<std::string>& values,
                   const std::string& extra_name = "",
                   const std::string& extra_value = "") {
  std::string out;
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
    absl::StrAppend(&out, out.empty() ? "" : ",", names[i], "=\"",
                    EscapeLabelValue(values[i]), "\"");
  }
  if (!extra_name.empty()) {
    absl::StrAppend(&out, out.empty() ? "" : ",", extra_name, "=\"",
                    extra_value, "\"");
  }
  return out.empty() ? "" : absl::StrCat("{", out, "}");
}

template <typename T>
void Header(std::string* out, const Family<T>& f, const char* type) {
  absl::StrAppend(out, "# HELP ", f.name(), " ", EscapeHelp(f.help()), "\n",
                  "# TYPE ", f.name(), " ", type, "\n");
}

}  // namespace

void Counter::Increment(double by) {
  absl::MutexLock lock(&mu_);
  if (by > 0) value_ += by;
}

void Counter::SetTotal(double total) {
  absl::MutexLock lock(&mu_);
  if (total > value_) value_ = total;
}

double Counter::value() const {
  absl::MutexLock lock(&mu_);
  return value_;
}

void Gauge::Set(double v) {
  absl::MutexLock lock(&mu_);
  value_ = v;
}

void Gauge::Add(double by) {
  absl::MutexLock lock(&mu_);
  value_ += by;
}

double Gauge::value() const {
  absl::MutexLock lock(&mu_);
  return value_;
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double v) {
  size_t bucket = 0;
  while (bucket < bounds_.size() && v > bounds_[bucket]) ++bucket;
  absl::MutexLock lock(&mu_);
  ++counts_[bucket];
  sum_ += v;
  ++count_;
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot s;
  absl::MutexLock lock(&mu_);
  uint64_t running = 0;
  for (uint64_t c : counts_) {
    running += c;
    s.cumulative.push_back(running);
  }
  s.sum = sum_;
  s.count = count_;
  return s;
}

CounterFamily& MetricsRegistry::AddCounter(std::string name, std::string help,
                                           std::vector<std::string> labels) {
  absl::MutexLock lock(&mu_);
  counters_.push_back(std::make_unique<CounterFamily>(
      std::move(name), std::move(help), std::move(labels),
      [] { return std::make_unique<Counter>(); }));
  order_.push_back({0, counters_.size() - 1});
  return *counters_.back();
}

GaugeFamily& MetricsRegistry::AddGauge(std::string name, std::string help,
                                       std::vector<std::string> labels) {
  absl::MutexLock lock(&mu_);
  gauges_.push_back(std::make_unique<GaugeFamily>(
      std::move(name), std::move(help), std::move(labels),
      [] { return std::make_unique<Gauge>(); }));
  order_.push_back({1, gauges_.size() - 1});
  return *gauges_.back();
}

HistogramFamily& MetricsRegistry::AddHistogram(std::string name, std::string help,
                                               std::vector<std::string> labels,
                                               std::vector<double> bounds) {
  absl::MutexLock lock(&mu_);
  histograms_.push_back(std::make_unique<HistogramFamily>(
      std::move(name), std::move(help), std::move(labels),
      [bounds] { return std::make_unique<Histogram>(bounds); }));
  order_.push_back({2, histograms_.size() - 1});
  return *histograms_.back();
}

void MetricsRegistry::AddCollector(std::function<void()> collect) {
  absl::MutexLock lock(&mu_);
  collectors_.push_back(std::move(collect));
}

std::string MetricsRegistry::Render() const {
  std::vector<std::function<void()>> collectors;
  {
    absl::MutexLock lock(&mu_);
    collectors = collectors_;
  }
  for (const auto& collect : collectors) collect();

  std::string out;
  absl::MutexLock lock(&mu_);
  for (const auto& [kind, index] : order_) {
    if (kind == 0) {
      const CounterFamily& f = *counters_[index];
      Header(&out, f, "counter");
      f.ForEach([&](const std::vector<std::string>& values, const Counter& c) {
        absl::StrAppend(&out, f.name(), Labels(f.labels(), values), " ",
                        FormatValue(c.value()), "\n");
      });
    } else if (kind == 1) {
      const GaugeFamily& f = *gauges_[index];
      Header(&out, f, "gauge");
      f.ForEach([&](const std::vector<std::string>& values, const Gauge& g) {
        absl::StrAppend(&out, f.name(), Labels(f.labels(), values), " ",
                        FormatValue(g.value()), "\n");
      });
    } else {
      const HistogramFamily& f = *histograms_[index];
      Header(&out, f, "histogram");
      f.ForEach([&](const std::vector<std::string>& values, const Histogram& h) {
        Histogram::Snapshot s = h.Read();
        for (size_t i = 0; i < s.cumulative.size(); ++i) {
          std::string le = i < h.bounds().size() ? FormatValue(h.bounds()[i]) : "+Inf";
          absl::StrAppend(&out, f.name(), "_bucket",
                          Labels(f.labels(), values, "le", le), " ",
                          s.cumulative[i], "\n");
        }
        absl::StrAppend(&out, f.name(), "_sum", Labels(f.labels(), values), " ",
                        FormatValue(s.sum), "\n", f.name(), "_count",
                        Labels(f.labels(), values), " ", s.count, "\n");
      });
    }
  }
  return out;
}

std::vector<double> LatencyBuckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
          0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5, 5, 10};
}

}  // namespace berth
