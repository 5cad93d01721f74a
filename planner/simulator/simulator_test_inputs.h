// Inputs shared by simulator_test and simulator_property_test: a fixed
// start, budgets, a job arriving at an offset, a job running at the start,
// and a seeded random workload.
// Test-only.
#ifndef BERTH_PLANNER_SIMULATOR_SIMULATOR_TEST_INPUTS_H_
#define BERTH_PLANNER_SIMULATOR_SIMULATOR_TEST_INPUTS_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "planner/simulator/simulator.h"

namespace berth::planner::testing {

inline constexpr int64_t kGi = int64_t{1} << 30;
inline const absl::Time kStart = absl::FromUnixSeconds(1'800'000'000);

inline Budgets MakeBudgets(int64_t memory, int64_t cpu, int32_t workers) {
  Budgets b;
  b.memory_bytes = memory;
  b.cpu_millis = cpu;
  b.max_workers = workers;
  return b;
}

inline SimJob Job(std::string id, int64_t memory, absl::Duration expected,
                  absl::Duration arrival = absl::ZeroDuration(),
                  std::string workspace = "ws") {
  SimJob j;
  j.job.id = std::move(id);
  j.job.workspace = std::move(workspace);
  j.job.resources = {1000, memory};
  j.job.expected_duration = expected;
  j.job.created_at = kStart + arrival;
  j.arrival_offset = arrival;
  return j;
}

// A job already running at the start (1 core), holding `memory` until
// started_at + expected.
inline RunningJob Running(std::string id, int64_t memory, absl::Time started_at,
                          absl::Duration expected, std::string workspace = "ws") {
  RunningJob r;
  r.id = std::move(id);
  r.workspace = std::move(workspace);
  r.resources = {1000, memory};
  r.started_at = started_at;
  r.expected_duration = expected;
  return r;
}

// A seeded random workload for the invariant tests.
inline SimInput RandomWorkload(uint64_t seed, int jobs) {
  uint64_t s = seed;
  auto next = [&s]() {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return s >> 33;
  };
  SimInput in;
  in.start = kStart;
  in.budgets = MakeBudgets(64 * kGi, 16000, 8);
  in.budgets.pool_max_workers["database"] = 2;
  in.budgets.workspace_max_workers = 4;
  for (int i = 0; i < jobs; ++i) {
    SimJob j = Job(absl::StrCat("j", i), static_cast<int64_t>(1 + next() % 40) * kGi,
                   absl::Minutes(1 + next() % 120),
                   absl::Minutes(static_cast<int64_t>(next() % 600)),
                   absl::StrCat("ws", next() % 6));
    j.job.resources.cpu_millis = static_cast<int64_t>(250 * (1 + next() % 24));
    j.job.priority = static_cast<int32_t>(next() % 3);
    if (next() % 10 == 0) j.job.pool = "database";
    if (next() % 3 == 0) j.actual_duration = absl::Minutes(1 + next() % 200);
    if (next() % 25 == 0) j.fails = true;
    if (i > 0 && next() % 4 == 0) {
      j.job.depends_on.push_back(absl::StrCat("j", next() % i));
    }
    if (next() % 50 == 0) j.job.resources.memory_bytes = 100 * kGi;  // never fits
    in.jobs.push_back(std::move(j));
  }
  return in;
}

}  // namespace berth::planner::testing

#endif  // BERTH_PLANNER_SIMULATOR_SIMULATOR_TEST_INPUTS_H_
