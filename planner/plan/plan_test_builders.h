// Builders of Plan() inputs shared by plan_test and plan_reasons_test: queued
// and running jobs relative to a fixed kNow, default budgets, and the decision
// Plan() made for a job id. Test-only.
#ifndef BERTH_PLANNER_PLAN_PLAN_TEST_BUILDERS_H_
#define BERTH_PLANNER_PLAN_PLAN_TEST_BUILDERS_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "planner/model/model.h"
#include "planner/plan/plan.h"

namespace berth::planner::testing {

inline constexpr int64_t kGiB = int64_t{1} << 30;
inline const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

inline QueuedJob Q(std::string id, int64_t mem_gib, int64_t cpu_millis,
                   std::string workspace = "ws") {
  QueuedJob q;
  q.id = std::move(id);
  q.workspace = std::move(workspace);
  q.resources = {cpu_millis, mem_gib * kGiB};
  q.created_at = kNow - absl::Minutes(10);
  q.expected_duration = absl::Hours(1);
  return q;
}

inline RunningJob R(std::string id, int64_t mem_gib, int64_t cpu_millis,
                    absl::Duration left, std::string workspace = "other") {
  RunningJob r;
  r.id = std::move(id);
  r.workspace = std::move(workspace);
  r.resources = {cpu_millis, mem_gib * kGiB};
  r.started_at = kNow - absl::Minutes(5);
  r.expected_duration = absl::Minutes(5) + left;
  return r;
}

inline Budgets B(int64_t mem_gib = 128, int64_t cpu = 64'000, int32_t workers = 24) {
  Budgets b;
  b.memory_bytes = mem_gib * kGiB;
  b.cpu_millis = cpu;
  b.max_workers = workers;
  b.pool_max_workers["database"] = 2;
  return b;
}

inline const Decision& Of(const State& s, const PlanResult& r, const std::string& id) {
  for (const Decision& d : r.decisions) {
    if (s.queued[d.job].id == id) return d;
  }
  static const Decision kMissing;
  ADD_FAILURE() << "no decision for " << id;
  return kMissing;
}

}  // namespace berth::planner::testing

#endif  // BERTH_PLANNER_PLAN_PLAN_TEST_BUILDERS_H_
