// Helpers for the Store tests (testonly).
#ifndef BERTH_EXECUTOR_STORE_STORE_TEST_UTIL_H_
#define BERTH_EXECUTOR_STORE_STORE_TEST_UTIL_H_

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "berth/v1/job.pb.h"
#include "executor/store/store.h"

namespace berth::testing {

inline berth::v1::JobSpec Spec(const std::string& id, int priority = 0,
                               int64_t memory = 1 << 30) {
  berth::v1::JobSpec s;
  s.set_id(id);
  s.set_workspace("ws-" + id.substr(0, 1));
  s.set_action("cohort-extraction");
  s.set_image("registry.example/job-runner:v3");
  s.add_argv("run");
  s.add_argv(id);
  (*s.mutable_env())["MODE"] = "batch";
  s.set_priority(priority);
  s.mutable_resources()->set_cpu_millis(1000);
  s.mutable_resources()->set_memory_bytes(memory);
  s.set_pool("default");
  return s;
}

inline SnapshotRequest Snapshot(uint64_t generation,
                                std::vector<berth::v1::JobSpec> jobs) {
  SnapshotRequest r;
  r.generation = generation;
  r.jobs = std::move(jobs);
  return r;
}

// A fresh directory under TEST_TMPDIR (or /tmp outside Bazel).
inline std::string TempDir(const std::string& name) {
  static int counter = 0;
  const char* base = std::getenv("TEST_TMPDIR");
  return absl::StrCat(base != nullptr ? base : "/tmp", "/", name, "-",
                      ++counter);
}

inline TransitionRequest Tr(const std::string& id, berth::v1::JobState from,
                            berth::v1::JobState to) {
  TransitionRequest t;
  t.job_id = id;
  t.expected_state = from;
  t.new_state = to;
  return t;
}

inline DecisionRequest Decide(
    const std::string& id, DecisionKind kind, berth::v1::JobState expected,
    const std::string& reason = "", uint64_t generation = 1,
    berth::v1::RejectReason reject = berth::v1::REJECT_REASON_UNSPECIFIED) {
  DecisionRequest d;
  d.job_id = id;
  d.kind = kind;
  d.expected_state = expected;
  d.reason = reason;
  d.plan_generation = generation;
  d.reject_reason = reject;
  return d;
}

inline absl::Time T0() { return absl::FromUnixSeconds(1'800'000'000); }

}  // namespace berth::testing

#endif  // BERTH_EXECUTOR_STORE_STORE_TEST_UTIL_H_
