#include "planner/testing/workload.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"

namespace berth::planner::testing {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

double LogUniform(std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(std::log(lo), std::log(hi));
  return std::exp(u(rng));
}

}  // namespace

Budgets BenchmarkBudgets() {
  Budgets b;
  b.memory_bytes = 1024 * kGiB;
  b.cpu_millis = 256 * 1000;
  b.max_workers = 64;
  b.pool_max_workers["database"] = 8;
  b.workspace_max_workers = 16;
  return b;
}

Workload MakeWorkload(const WorkloadOptions& o, const Budgets& budgets) {
  std::mt19937_64 rng(o.seed);
  Workload w;
  w.budgets = budgets;
  w.now = absl::FromUnixSeconds(1795000000);
  auto chance = [&rng](double p) {
    return std::uniform_real_distribution<double>(0, 1)(rng) < p;
  };
  auto pick = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const int num_ws = o.num_workspaces > 0 ? o.num_workspaces : 1;
  auto resources = [&] {
    Resources r;
    r.memory_bytes = static_cast<int64_t>(
        LogUniform(rng, o.min_memory_gib, o.max_memory_gib) * kGiB);
    r.cpu_millis = pick(o.min_cpu_millis / 100, o.max_cpu_millis / 100) * 100;
    return r;
  };
  auto duration = [&] {
    return absl::Seconds(LogUniform(rng, absl::ToDoubleSeconds(o.min_duration),
                                    absl::ToDoubleSeconds(o.max_duration)));
  };

  // Running jobs, as many of the drawn count as the budgets hold.
  const int target = static_cast<int>(pick(o.min_running, o.max_running));
  int64_t mem = 0, cpu = 0, db = 0;
  for (int i = 0; i < target && static_cast<int64_t>(w.state.running.size()) <
                                    budgets.max_workers;
       ++i) {
    RunningJob r;
    r.id = absl::StrCat("run-", i);
    r.workspace = absl::StrCat("ws-", pick(0, num_ws - 1));
    r.resources = resources();
    if (mem + r.resources.memory_bytes > budgets.memory_bytes ||
        cpu + r.resources.cpu_millis > budgets.cpu_millis)
      continue;
    if (chance(o.database_fraction) && db < 8) {
      r.pool = "database";
      ++db;
    }
    mem += r.resources.memory_bytes;
    cpu += r.resources.cpu_millis;
    r.expected_duration = duration();
    r.started_at = w.now - absl::Seconds(pick(
        0, absl::ToInt64Seconds(r.expected_duration)));
    w.state.running.push_back(std::move(r));
  }

  w.state.queued.reserve(o.num_queued);
  for (int i = 0; i < o.num_queued; ++i) {
    QueuedJob q;
    q.id = absl::StrCat("job-", o.seed, "-", i);
    q.workspace = absl::StrCat("ws-", pick(0, num_ws - 1));
    q.priority = static_cast<int32_t>(pick(0, o.max_priority));
    q.resources = resources();
    if (chance(o.database_fraction)) q.pool = "database";
    q.created_at = w.now - absl::Microseconds(pick(
        0, absl::ToInt64Microseconds(o.created_spread)));
    if (!chance(o.unknown_duration_fraction)) q.expected_duration = duration();
    if (i > 0 && chance(o.dependency_fraction)) {
      const int deps = static_cast<int>(pick(1, 2));
      for (int k = 0; k < deps; ++k) {
        const int64_t target_job = pick(0, i - 1);
        q.depends_on.push_back(absl::StrCat("job-", o.seed, "-", target_job));
      }
    }
    w.state.queued.push_back(std::move(q));
  }
  return w;
}

const Workload& BenchmarkWorkload(int64_t num_queued) {
  static auto* cache = new std::map<int64_t, std::unique_ptr<Workload>>();
  std::unique_ptr<Workload>& w = (*cache)[num_queued];
  if (!w) {
    WorkloadOptions o;
    o.seed = 42;
    o.num_queued = static_cast<int>(num_queued);
    w = std::make_unique<Workload>(MakeWorkload(o));
  }
  return *w;
}

}  // namespace berth::planner::testing
