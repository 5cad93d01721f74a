#include "executor/reconcile/testing/bench_queue.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace berth {
namespace {

// Admits and starts `id`; then ends it when `end` is a terminal state.
absl::Status Run(Store& store, const std::string& id, v1::JobState end, absl::Time now) {
  DecisionRequest d;
  d.job_id = id;
  d.kind = DecisionKind::kAdmit;
  d.expected_state = v1::JOB_STATE_QUEUED;
  d.reason = "benchmark";
  if (absl::Status s = store.RecordDecisions({d}, now).status(); !s.ok()) return s;
  TransitionRequest t;
  t.job_id = id;
  t.expected_state = v1::JOB_STATE_ADMITTED;
  t.new_state = v1::JOB_STATE_RUNNING;
  t.container_id = "c";
  if (absl::Status s = store.Transition(t, now).status(); !s.ok()) return s;
  if (end == v1::JOB_STATE_RUNNING) return absl::OkStatus();
  t.expected_state = v1::JOB_STATE_RUNNING;
  t.new_state = end;
  if (end == v1::JOB_STATE_FAILED) t.failure_cause = v1::FAILURE_CAUSE_NONZERO_EXIT;
  t.exit_code = end == v1::JOB_STATE_FAILED ? 1 : 0;
  return store.Transition(t, now).status();
}

}  // namespace

v1::Budgets BenchBudgets() {
  v1::Budgets budgets;
  budgets.set_memory_bytes(int64_t{256} << 30);
  budgets.set_cpu_millis(32000);
  budgets.set_max_workers(24);
  return budgets;
}

v1::JobSpec BenchJobSpec(int i) {
  v1::JobSpec j;
  j.set_id(absl::StrCat("ws", i % 20, ".job-", i));
  j.set_workspace(absl::StrCat("ws", i % 20));
  j.set_action(absl::StrCat("act", i % 7));
  j.set_image("berth-test/busybox:1");
  j.add_argv("true");  // required at ingest
  j.set_priority(i % 4);
  j.mutable_resources()->set_cpu_millis(500 + 250 * (i % 4));
  j.mutable_resources()->set_memory_bytes((int64_t{1} << 30) * (1 + i % 8));
  j.mutable_expected_duration()->set_seconds(3600);
  j.mutable_created_at()->set_seconds(1'800'000'000 - (i % 1000));
  return j;
}

absl::Status FillBenchQueue(Store& store, const BenchQueue& q, absl::Time now,
                            std::vector<std::string>* ids) {
  SnapshotRequest snap;
  snap.generation = 1;
  snap.jobs.reserve(static_cast<size_t>(q.jobs));
  ids->clear();
  for (int i = 0; i < q.jobs; ++i) {
    snap.jobs.push_back(BenchJobSpec(i));
    ids->push_back(snap.jobs.back().id());
  }
  if (absl::Status s = store.ApplySnapshot(std::move(snap), now).status(); !s.ok()) return s;
  for (int i = 0; i < std::min(q.running, q.jobs); ++i) {
    if (absl::Status s = Run(store, (*ids)[i], v1::JOB_STATE_RUNNING, now); !s.ok()) return s;
  }
  for (int i = q.jobs - 1; i >= std::max(q.running, q.jobs - q.finished); --i) {
    const v1::JobState end = i % 4 == 0 ? v1::JOB_STATE_FAILED : v1::JOB_STATE_SUCCEEDED;
    if (absl::Status s = Run(store, (*ids)[i], end, now); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace berth
