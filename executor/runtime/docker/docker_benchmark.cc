// Docker runtime benchmark against the real dockerd (bounded; cleans up).
//
//   bazel run -c opt //executor/runtime/docker:docker_benchmark
//
// Measures: wall time to create+start 50 containers with parallelism 1 and 4;
// latency of the bulk list with 100 of our containers (median of 11); engine
// calls per observe pass (list + diff + inspect changed) with 100 running
// jobs, when nothing changed and when one job exited.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "planner/base/clock.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "executor/runtime/docker/testing/docker_test_util.h"

namespace berth {
namespace {

using ::berth::testing::InstanceCleanup;
using ::berth::testing::TestOptions;
using ::berth::testing::TestSpec;
using ::berth::testing::UniqueName;

// Starts jobs prefix-0..n-1 with `parallelism` threads; returns wall seconds
// or a negative number on error.
double StartMany(Runtime& rt, const std::string& prefix, int n, int parallelism) {
  std::atomic<int> next{0};
  std::atomic<int> errors{0};
  Clock* clock = Clock::Real();
  const absl::Time t0 = clock->Now();
  std::vector<std::thread> threads;
  for (int t = 0; t < parallelism; ++t) {
    threads.emplace_back([&] {
      for (int i = next++; i < n; i = next++) {
        ContainerSpec spec = TestSpec(absl::StrCat(prefix, "-", i), {"sleep", "600"});
        spec.cpu_millis = 100;
        spec.memory_bytes = int64_t{16} << 20;
        absl::StatusOr<StartResult> r = rt.Start(spec);
        if (!r.ok()) {
          std::fprintf(stderr, "start failed: %s\n", r.status().ToString().c_str());
          ++errors;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  const double secs = absl::ToDoubleSeconds(clock->Now() - t0);
  return errors.load() == 0 ? secs : -1;
}

// One reconciler observe pass; returns the engine calls it made.
int64_t ObservePass(Runtime& rt, ContainerList* last) {
  const int64_t before = TotalCalls(rt.Counters());
  absl::StatusOr<ContainerList> now = rt.List();
  if (!now.ok()) return -1;
  ContainerListDiff diff = DiffContainerLists(*last, *now);
  for (const std::string& job : diff.changed) (void)rt.Inspect(job);
  *last = std::move(*now);
  return TotalCalls(rt.Counters()) - before;
}

int Main() {
  const std::string instance = UniqueName("bench");
  InstanceCleanup cleanup(instance);
  auto created = DockerRuntime::Create(TestOptions(instance));
  if (!created.ok()) {
    std::fprintf(stderr, "%s\n", created.status().ToString().c_str());
    return 1;
  }
  DockerRuntime& rt = **created;
  if (!rt.Ping().ok()) {
    std::fprintf(stderr, "dockerd not reachable; run tools/setup.sh\n");
    return 1;
  }

  std::printf("instance %s\n", instance.c_str());
  const double p1 = StartMany(rt, instance + "-p1", 50, 1);
  std::printf("create+start 50, parallelism 1: %.2f s (%.0f ms/container)\n", p1,
              p1 * 1000 / 50);
  (void)testing::RemoveInstanceContainers(instance);
  const double p4 = StartMany(rt, instance + "-p4", 50, 4);
  std::printf("create+start 50, parallelism 4: %.2f s (%.0f ms/container)\n", p4,
              p4 * 1000 / 50);
  (void)testing::RemoveInstanceContainers(instance);

  const double s100 = StartMany(rt, instance + "-run", 100, 4);
  std::printf("started 100 running containers in %.2f s\n", s100);
  std::vector<double> ms;
  for (int i = 0; i < 11; ++i) {
    const absl::Time t0 = Clock::Real()->Now();
    absl::StatusOr<ContainerList> l = rt.List();
    ms.push_back(absl::ToDoubleMilliseconds(Clock::Real()->Now() - t0));
    if (!l.ok() || l->size() != 100) {
      std::fprintf(stderr, "list: %s, %zu rows\n", l.status().ToString().c_str(),
                   l.ok() ? l->size() : 0);
      return 1;
    }
  }
  std::sort(ms.begin(), ms.end());
  std::printf("bulk list, 100 containers: median %.1f ms (min %.1f, max %.1f, n=11)\n",
              ms[5], ms.front(), ms.back());

  ContainerList last;
  const int64_t first = ObservePass(rt, &last);  // everything is new: 1 + 100
  int64_t steady = 0;
  for (int i = 0; i < 5; ++i) steady = std::max(steady, ObservePass(rt, &last));
  (void)rt.Stop(instance + "-run-7", absl::Seconds(1));
  const int64_t one_changed = ObservePass(rt, &last);
  std::printf("observe pass calls, 100 running: first %lld, unchanged %lld (max of 5), "
              "one exited %lld\n",
              static_cast<long long>(first), static_cast<long long>(steady),
              static_cast<long long>(one_changed));
  absl::StatusOr<int> removed = testing::RemoveInstanceContainers(instance);
  std::printf("removed %d containers\n", removed.ok() ? *removed : -1);
  return p1 < 0 || p4 < 0 || s100 < 0 || steady != 1 ? 1 : 0;
}

}  // namespace
}  // namespace berth

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  return berth::Main();
}
