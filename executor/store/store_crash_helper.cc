// Child process of store_crash_test: opens a RocksStore and applies
// snapshots, decisions and transitions in an endless loop until it is killed.
// It writes "R" to stdout (unbuffered) once the store is open, then after
// each acknowledged RecordDecisions call one line per decision:
// "D <sequence> <job id>".
//
// Snapshots are a pure function of their generation (CrashSnapshotIds /
// CrashPriority in store_crash_util.h), so the test can check that the last
// applied one was applied completely.
//
// Usage: store_crash_helper <store dir> <seed>
// Exit codes: 0 never (runs until killed); 2 bad usage; 3 a store error.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "executor/store/rocks_store.h"
#include "executor/store/store_crash_util.h"

namespace berth {
namespace {

[[noreturn]] void Die(const absl::Status& s, const char* what) {
  std::fprintf(stderr, "store_crash_helper: %s: %s\n", what,
               s.ToString().c_str());
  std::exit(3);
}

void Write(const std::string& line) {
  size_t off = 0;
  while (off < line.size()) {
    ssize_t n = ::write(1, line.data() + off, line.size() - off);
    if (n <= 0) std::exit(4);  // the test went away
    off += static_cast<size_t>(n);
  }
}

void Ack(const Decision& d) {
  Write(absl::StrCat("D ", d.sequence, " ", d.job_id, "\n"));
}

int Main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: store_crash_helper <dir> <seed>\n");
    return 2;
  }
  auto opened = RocksStore::Open(argv[1]);
  if (!opened.ok()) Die(opened.status(), "open");
  std::unique_ptr<RocksStore> store = std::move(*opened);
  Write("R\n");  // opened: the test may now pick its moment
  std::mt19937 rng(static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 10)));
  auto chance = [&](int percent) {
    return static_cast<int>(rng() % 100) < percent;
  };
  absl::Time now = absl::FromUnixSeconds(1'800'000'000);

  for (;;) {
    now += absl::Seconds(1);
    const int op = static_cast<int>(rng() % 10);
    if (op < 2) {
      // A new snapshot generation.
      SnapshotRequest r;
      r.generation = store->LastAppliedGeneration() + 1;
      r.jobs = CrashSnapshot(r.generation);
      r.options.allow_mass_cancel = true;
      auto res = store->ApplySnapshot(r, now);
      if (!res.ok()) Die(res.status(), "apply snapshot");
    } else if (op < 5) {
      // Admit a few queued jobs in one durable decision batch.
      std::vector<DecisionRequest> ds;
      for (const JobRecord& jr : store->JobsInState(v1::JOB_STATE_QUEUED)) {
        const StoredJob j = jr->Decode();
        if (ds.size() >= 3) break;
        if (!chance(30)) continue;
        DecisionRequest d;
        d.job_id = j.job.spec().id();
        d.kind = DecisionKind::kAdmit;
        d.expected_state = v1::JOB_STATE_QUEUED;
        d.reason = "fits";
        d.plan_generation = store->LastAppliedGeneration();
        ds.push_back(d);
      }
      if (ds.empty()) continue;
      auto res = store->RecordDecisions(ds, now);
      if (!res.ok()) Die(res.status(), "admit");
      for (const Decision& d : *res) Ack(d);
    } else if (op < 6) {
      // Ask a running job to stop (requeue or timeout).
      for (const JobRecord& jr : store->JobsInState(v1::JOB_STATE_RUNNING)) {
        const StoredJob j = jr->Decode();
        if (j.stop_intent != StopIntent::kNone || !chance(50)) continue;
        DecisionRequest d;
        d.job_id = j.job.spec().id();
        d.kind = chance(50) ? DecisionKind::kRequeue : DecisionKind::kTimeout;
        d.expected_state = v1::JOB_STATE_RUNNING;
        d.reason = "crash test";
        auto res = store->RecordDecisions({d}, now);
        if (!res.ok()) Die(res.status(), "stop decision");
        for (const Decision& rd : *res) Ack(rd);
        break;
      }
    } else {
      // Move admitted jobs to running, and running ones to their end.
      for (const JobRecord& jr : store->JobsInState(v1::JOB_STATE_ADMITTED)) {
        const StoredJob j = jr->Decode();
        if (!chance(50)) continue;
        TransitionRequest t;
        t.job_id = j.job.spec().id();
        t.expected_state = v1::JOB_STATE_ADMITTED;
        t.new_state = v1::JOB_STATE_RUNNING;
        t.container_id = "c-" + t.job_id;
        auto res = store->Transition(t, now);
        if (!res.ok()) Die(res.status(), "start");
      }
      for (const JobRecord& jr : store->JobsInState(v1::JOB_STATE_RUNNING)) {
        const StoredJob j = jr->Decode();
        TransitionRequest t;
        t.job_id = j.job.spec().id();
        t.expected_state = v1::JOB_STATE_RUNNING;
        switch (j.stop_intent) {
          case StopIntent::kCancel:
            t.new_state = v1::JOB_STATE_CANCELLED;
            t.exit_code = 137;
            break;
          case StopIntent::kRequeue:
            t.new_state = v1::JOB_STATE_QUEUED;
            break;
          case StopIntent::kTimeout:
            t.new_state = v1::JOB_STATE_FAILED;
            t.failure_cause = v1::FAILURE_CAUSE_TIMED_OUT;
            t.exit_code = 137;
            break;
          case StopIntent::kNone:
            if (!chance(30)) continue;
            t.new_state =
                chance(80) ? v1::JOB_STATE_SUCCEEDED : v1::JOB_STATE_FAILED;
            t.exit_code = t.new_state == v1::JOB_STATE_SUCCEEDED ? 0 : 1;
            t.logs_tail = "done";
            break;
        }
        auto res = store->Transition(t, now);
        if (!res.ok()) Die(res.status(), "finish");
      }
    }
  }
}

}  // namespace
}  // namespace berth

int main(int argc, char** argv) { return berth::Main(argc, argv); }
