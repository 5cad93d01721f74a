// Tests of berth-plan's --executor-metrics reading: the medians of berthd's
// latency histograms as its registry renders them, from a file and from a
// live HTTP endpoint on 127.0.0.1.
#include "tools/plan/executor_metrics.h"

#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "server/metrics/metrics.h"

namespace berth {
namespace plan {
namespace {

// What berthd's PassMetrics registers, with the given observations.
std::string Rendered(const std::vector<double>& starts, const std::vector<double>& finishes) {
  MetricsRegistry registry;
  HistogramFamily& start =
      registry.AddHistogram("berth_start_latency_seconds", "start", {}, LatencyBuckets());
  HistogramFamily& finish =
      registry.AddHistogram("berth_finish_latency_seconds", "finish", {}, LatencyBuckets());
  // A labelled histogram whose name shares the prefix must not be read.
  registry.AddHistogram("berth_start_latency_seconds_other", "x", {"k"}, LatencyBuckets())
      .WithLabels({"v"})
      .Observe(100);
  start.WithLabels({});  // the series exist before any observation
  finish.WithLabels({});
  for (double v : starts) start.WithLabels({}).Observe(v);
  for (double v : finishes) finish.WithLabels({}).Observe(v);
  return registry.Render();
}

TEST(HistogramMedianTest, InterpolatesInsideTheMiddleBucket) {
  // Buckets ... 0.25, 0.5, 1, ...: three of four starts in (0.5, 1], so the
  // median (rank 2) is a third of the way into that bucket: 0.5 + 0.5 / 3.
  const std::string text = Rendered({0.3, 0.6, 0.7, 0.8}, {0.04, 0.045, 0.03});
  int64_t count = 0;
  absl::StatusOr<absl::Duration> m =
      HistogramMedian(text, "berth_start_latency_seconds", &count);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(count, 4);
  EXPECT_NEAR(absl::ToDoubleSeconds(*m), 0.5 + 0.5 / 3, 1e-9);

  absl::StatusOr<ExecutorLatencies> both = ParseExecutorLatencies(text);
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ(both->start_median, *m);
  EXPECT_EQ(both->finish_count, 3);
  // All three in (0.025, 0.05]: rank 1.5 of 3 -> 0.025 + 0.025 / 2.
  EXPECT_NEAR(absl::ToDoubleSeconds(both->finish_median), 0.0375, 1e-9);
}

// The starts' latencies by level, as berthd renders them: levels 1..4 at
// 0.2 + 0.1 * (k - 1) s, on bucket bounds so that each median is exact.
TEST(ExecutorLatenciesTest, FitsTheStartModelFromTheLevels) {
  MetricsRegistry registry;
  HistogramFamily& start =
      registry.AddHistogram("berth_start_latency_seconds", "start", {}, LatencyBuckets());
  HistogramFamily& finish =
      registry.AddHistogram("berth_finish_latency_seconds", "finish", {}, LatencyBuckets());
  HistogramFamily& by_starts = registry.AddHistogram(
      "berth_start_latency_by_starts_seconds", "by", {"starts"}, {0.1, 0.2, 0.3, 0.4, 0.5, 1});
  finish.WithLabels({}).Observe(0.04);
  for (int k = 1; k <= 4; ++k) {
    for (int n = 0; n < 10; ++n) {
      // Half in the bucket below the level's bound, half in the one above:
      // the interpolated median is the bound.
      const double v = 0.2 + 0.1 * (k - 1) + (n % 2 == 0 ? -0.05 : 0.05);
      start.WithLabels({}).Observe(v);
      by_starts.WithLabels({std::to_string(k)}).Observe(v);
    }
  }
  absl::StatusOr<ExecutorLatencies> l = ParseExecutorLatencies(registry.Render());
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->start_levels, 4);
  EXPECT_NEAR(absl::ToDoubleSeconds(l->start.alone), 0.2, 0.002);
  EXPECT_NEAR(absl::ToDoubleSeconds(l->start.contention), 0.1, 0.002);

  // One level only: no contention measured.
  MetricsRegistry one;
  one.AddHistogram("berth_start_latency_seconds", "s", {}, LatencyBuckets())
      .WithLabels({})
      .Observe(0.3);
  one.AddHistogram("berth_finish_latency_seconds", "f", {}, LatencyBuckets())
      .WithLabels({})
      .Observe(0.04);
  one.AddHistogram("berth_start_latency_by_starts_seconds", "by", {"starts"}, LatencyBuckets())
      .WithLabels({"1"})
      .Observe(0.3);
  l = ParseExecutorLatencies(one.Render());
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->start_levels, 0);
}

TEST(HistogramMedianTest, AboveTheHighestBoundIsThatBound) {
  int64_t count = 0;
  absl::StatusOr<absl::Duration> m =
      HistogramMedian(Rendered({20, 30, 40}, {}), "berth_start_latency_seconds", &count);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(*m, absl::Seconds(10));
}

TEST(HistogramMedianTest, MissingOrEmptyIsAnError) {
  int64_t count = 0;
  EXPECT_EQ(HistogramMedian("up 1\n", "berth_start_latency_seconds", &count).status().code(),
            absl::StatusCode::kNotFound);
  // Series present, nothing observed (a berthd that has started nothing).
  EXPECT_EQ(ParseExecutorLatencies(Rendered({}, {})).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(HistogramMedian("berth_start_latency_seconds_bucket{le=\"x\"} 1\n",
                            "berth_start_latency_seconds", &count)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ReadMetricsTest, FromAFileAndFromALiveEndpoint) {
  const std::string text = Rendered({0.6}, {0.04});
  const std::string path = std::string(getenv("TEST_TMPDIR")) + "/metrics.txt";
  std::ofstream(path) << text;
  absl::StatusOr<std::string> from_file = ReadMetrics(path);
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  EXPECT_EQ(*from_file, text);
  EXPECT_EQ(ReadMetrics(path + ".missing").status().code(), absl::StatusCode::kNotFound);

  httplib::Server server;
  server.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(text, "text/plain; version=0.0.4");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread serving([&] { server.listen_after_bind(); });
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  absl::StatusOr<std::string> live = ReadMetrics(base);
  EXPECT_TRUE(live.ok()) << live.status();
  if (live.ok()) {
    EXPECT_EQ(*live, text);
  }
  EXPECT_EQ(ReadMetrics(base + "/nothing-here").status().code(), absl::StatusCode::kUnavailable);
  server.stop();
  serving.join();
  // Nobody listens any more.
  EXPECT_EQ(ReadMetrics(base).status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace plan
}  // namespace berth
