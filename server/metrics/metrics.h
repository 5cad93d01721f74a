// A small Prometheus metrics registry (text exposition format 0.0.4).
//
// Debian has no Prometheus client library for C++, and the format is simple.
// Families are created once (at start-up) and then updated from any thread;
// Render() produces the text a scrape returns.
//
//   MetricsRegistry registry;
//   CounterFamily& calls = registry.AddCounter(
//       "berth_docker_calls_total", "Docker API calls.", {"endpoint"});
//   calls.WithLabels({"containers/json"}).Increment();
//   std::string text = registry.Render();
//
// Thread-safe. Families and their children live as long as the registry;
// references returned are stable.
#ifndef BERTH_SERVER_METRICS_METRICS_H_
#define BERTH_SERVER_METRICS_METRICS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace berth {

// A monotonically increasing value.
class Counter {
 public:
  void Increment(double by = 1);
  // For a counter mirrored from a cumulative count kept elsewhere (e.g. the
  // Docker runtime's call counters): takes `total` if it is higher, so the
  // counter never goes down.
  void SetTotal(double total);
  double value() const;

 private:
  mutable absl::Mutex mu_;
  double value_ ABSL_GUARDED_BY(mu_) = 0;
};

// A value that goes up and down.
class Gauge {
 public:
  void Set(double v);
  void Add(double by);
  double value() const;

 private:
  mutable absl::Mutex mu_;
  double value_ ABSL_GUARDED_BY(mu_) = 0;
};

// Observations counted into cumulative buckets.
class Histogram {
 public:
  // REQUIRES: `bounds` strictly increasing.
  explicit Histogram(std::vector<double> bounds);
  void Observe(double v);

  struct Snapshot {
    std::vector<uint64_t> cumulative;  // one per bound, then +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot Read() const;
  const std::vector<double>& bounds() const { return bounds_; }

 private:
  const std::vector<double> bounds_;
  mutable absl::Mutex mu_;
  std::vector<uint64_t> counts_ ABSL_GUARDED_BY(mu_);  // per bucket, not cumulative
  double sum_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t count_ ABSL_GUARDED_BY(mu_) = 0;
};

// A metric with a fixed set of label names; one child per label-value tuple.
template <typename T>
class Family {
 public:
  Family(std::string name, std::string help, std::vector<std::string> labels,
         std::function<std::unique_ptr<T>()> make)
      : name_(std::move(name)),
        help_(std::move(help)),
        labels_(std::move(labels)),
        make_(std::move(make)) {}

  // The child for these label values (created on first use). REQUIRES:
  // values.size() equals the number of label names.
  T& WithLabels(const std::vector<std::string>& values) {
    absl::MutexLock lock(&mu_);
    auto& slot = children_[values];
    if (!slot) slot = make_();
    return *slot;
  }

  // Removes the child for these label values, if any: its series is no
  // longer exported. REQUIRES: no reference WithLabels(values) returned is
  // still in use.
  void Remove(const std::vector<std::string>& values) {
    absl::MutexLock lock(&mu_);
    children_.erase(values);
  }

  // Calls f(label values) for each child in label order.
  void ForEachLabels(const std::function<void(const std::vector<std::string>&)>& f) const {
    std::vector<std::vector<std::string>> all;
    {
      absl::MutexLock lock(&mu_);
      for (const auto& [values, child] : children_) all.push_back(values);
    }
    for (const auto& values : all) f(values);
  }

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::vector<std::string>& labels() const { return labels_; }

  // Calls f(label values, child) for each child in label order.
  void ForEach(const std::function<void(const std::vector<std::string>&, const T&)>& f) const {
    absl::MutexLock lock(&mu_);
    for (const auto& [values, child] : children_) f(values, *child);
  }

 private:
  const std::string name_;
  const std::string help_;
  const std::vector<std::string> labels_;
  const std::function<std::unique_ptr<T>()> make_;
  mutable absl::Mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<T>> children_ ABSL_GUARDED_BY(mu_);
};

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

class MetricsRegistry {
 public:
  // Names must match [a-zA-Z_:][a-zA-Z0-9_:]* and be unique (REQUIRES).
  CounterFamily& AddCounter(std::string name, std::string help,
                            std::vector<std::string> labels = {});
  GaugeFamily& AddGauge(std::string name, std::string help,
                        std::vector<std::string> labels = {});
  HistogramFamily& AddHistogram(std::string name, std::string help,
                                std::vector<std::string> labels,
                                std::vector<double> bounds);

  // A hook run at the start of every Render(), to refresh gauges computed
  // on demand (queue sizes, budget use). Runs on the scraping thread.
  void AddCollector(std::function<void()> collect);

  // The text exposition of every family, in registration order.
  std::string Render() const;

 private:
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<CounterFamily>> counters_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<GaugeFamily>> gauges_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<HistogramFamily>> histograms_ ABSL_GUARDED_BY(mu_);
  // Registration order: (kind, index) with kind 0 counter, 1 gauge, 2 histogram.
  std::vector<std::pair<int, size_t>> order_ ABSL_GUARDED_BY(mu_);
  std::vector<std::function<void()>> collectors_ ABSL_GUARDED_BY(mu_);
};

// Latency buckets in seconds, 100 µs .. 10 s.
std::vector<double> LatencyBuckets();

}  // namespace berth

#endif  // BERTH_SERVER_METRICS_METRICS_H_
