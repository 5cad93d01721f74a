#include "server/metrics/metrics.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

TEST(MetricsTest, RendersCountersGaugesAndHistogramsInTextFormat) {
  MetricsRegistry r;
  CounterFamily& calls = r.AddCounter("berth_docker_calls_total", "Docker API calls.",
                                      {"endpoint"});
  GaugeFamily& queued = r.AddGauge("berth_jobs", "Jobs by state.", {"state", "pool"});
  HistogramFamily& latency = r.AddHistogram("berth_plan_seconds", "Plan latency.", {},
                                            {0.01, 0.1});
  calls.WithLabels({"containers/json"}).Increment();
  calls.WithLabels({"containers/json"}).Increment(2);
  queued.WithLabels({"queued", "db \"main\""}).Set(7);
  latency.WithLabels({}).Observe(0.005);
  latency.WithLabels({}).Observe(0.05);
  latency.WithLabels({}).Observe(3);
  int collected = 0;
  r.AddCollector([&] { queued.WithLabels({"running", "default"}).Set(++collected); });

  std::string text = r.Render();
  const char* expected =
      "# HELP berth_docker_calls_total Docker API calls.\n"
      "# TYPE berth_docker_calls_total counter\n"
      "berth_docker_calls_total{endpoint=\"containers/json\"} 3\n"
      "# HELP berth_jobs Jobs by state.\n"
      "# TYPE berth_jobs gauge\n"
      "berth_jobs{state=\"queued\",pool=\"db \\\"main\\\"\"} 7\n"
      "berth_jobs{state=\"running\",pool=\"default\"} 1\n"
      "# HELP berth_plan_seconds Plan latency.\n"
      "# TYPE berth_plan_seconds histogram\n"
      "berth_plan_seconds_bucket{le=\"0.01\"} 1\n"
      "berth_plan_seconds_bucket{le=\"0.1\"} 2\n"
      "berth_plan_seconds_bucket{le=\"+Inf\"} 3\n"
      "berth_plan_seconds_sum 3.055\n"
      "berth_plan_seconds_count 3\n";
  EXPECT_EQ(text, expected);
  EXPECT_EQ(collected, 1);
}

TEST(MetricsTest, CountersIgnoreNegativeIncrements) {
  Counter c;
  c.Increment(5);
  c.Increment(-3);
  EXPECT_EQ(c.value(), 5);
}

TEST(MetricsTest, ConcurrentIncrementsAreNotLost) {
  MetricsRegistry r;
  CounterFamily& f = r.AddCounter("n_total", "n", {"t"});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&f] {
      for (int i = 0; i < 10000; ++i) f.WithLabels({"x"}).Increment();
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(f.WithLabels({"x"}).value(), 40000);
}

}  // namespace
}  // namespace berth
