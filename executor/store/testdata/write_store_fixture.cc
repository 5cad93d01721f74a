// Writes the store fixture that store_format_test opens: a small store with
// jobs in several states, decisions, budgets, the control state and a usage
// history, in whatever format this build writes.
//
// testdata/store_v1/ was written by this program at schema version 1 (the
// layout before usage histories had their own column family). When the
// format changes again, run it at the old version first and commit its output
// as testdata/store_v<N>/:
//   bazel run //executor/store/testdata:write_store_fixture -- "$PWD/dir"
// The expected contents are checked by store_format_test.cc; keep both in
// step.
#include <cstdlib>
#include <iostream>
#include <string>

#include "absl/time/time.h"
#include "executor/store/rocks_store.h"
#include "executor/store/store_test_util.h"

namespace berth {
namespace {

namespace v1 = ::berth::v1;
using ::berth::testing::Decide;
using ::berth::testing::Snapshot;
using ::berth::testing::Spec;
using ::berth::testing::T0;
using ::berth::testing::Tr;

bool Check(const absl::Status& s, const char* what) {
  if (!s.ok()) std::cerr << what << ": " << s << "\n";
  return s.ok();
}

int Write(const std::string& dir) {
  auto opened = RocksStore::Open(dir, {});
  if (!Check(opened.status(), "open")) return 1;
  RocksStore& store = **opened;
  // Generation 3: a (will succeed), b (will fail OOM), c and d stay queued.
  if (!Check(store.ApplySnapshot(Snapshot(3, {Spec("a1", 5), Spec("a2", 4),
                                              Spec("c1"), Spec("d1", 0, int64_t{2} << 30)}),
                                 T0()).status(),
             "snapshot")) {
    return 1;
  }
  for (const char* id : {"a1", "a2"}) {
    if (!Check(store.RecordDecisions(
                        {Decide(id, DecisionKind::kAdmit, v1::JOB_STATE_QUEUED, "fits", 3)},
                        T0())
                   .status(),
               "admit") ||
        !Check(store.Transition(Tr(id, v1::JOB_STATE_ADMITTED, v1::JOB_STATE_RUNNING),
                                T0() + absl::Seconds(1))
                   .status(),
               "run")) {
      return 1;
    }
  }
  v1::ResourceUsage used;
  used.set_peak_memory_bytes(123456789);
  used.set_cpu_seconds(42.5);
  used.set_run_seconds(600);
  used.set_samples(60);
  used.set_peak_exact(true);
  TransitionRequest ok = Tr("a1", v1::JOB_STATE_RUNNING, v1::JOB_STATE_SUCCEEDED);
  ok.observed = used;
  ok.exit_code = 0;
  if (!Check(store.Transition(ok, T0() + absl::Seconds(601)).status(), "succeed")) return 1;
  used.set_peak_memory_bytes(int64_t{1} << 30);
  TransitionRequest oom = Tr("a2", v1::JOB_STATE_RUNNING, v1::JOB_STATE_FAILED);
  oom.observed = used;
  oom.exit_code = 137;
  oom.failure_cause = v1::FAILURE_CAUSE_OOM_KILLED;
  if (!Check(store.Transition(oom, T0() + absl::Seconds(602)).status(), "fail")) return 1;
  v1::Budgets b;
  b.set_max_workers(12);
  b.set_memory_bytes(int64_t{64} << 30);
  b.set_cpu_millis(16000);
  if (!Check(store.SetBudgets(b, T0()).status(), "budgets")) return 1;
  if (!Check(store.SetPoolMaintenance("database", true, "disk swap", T0()).status(),
             "maintenance")) {
    return 1;
  }
  std::cout << "wrote schema version " << kRocksStoreSchemaVersion << " store to " << dir
            << " (revision " << store.CurrentRevision() << ")\n";
  return 0;
}

}  // namespace
}  // namespace berth

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: write_store_fixture DIR (a new directory)\n";
    return 2;
  }
  return berth::Write(argv[1]);
}
