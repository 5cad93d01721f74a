// The measurements of berth-load (tools/berth_load.cc): a sync load with
// readers against a running berthd, and Berth's overhead from snapshot to
// container start. docs/BENCHMARKS.md "berthd sync" describes the
// method and holds the figures.
//
// Not thread-safe: one call at a time (RunLoad starts its own readers).
#ifndef BERTH_TOOLS_LOAD_LOAD_H_
#define BERTH_TOOLS_LOAD_LOAD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "absl/time/time.h"
#include "berth/v1/job.pb.h"
#include "tools/client/client.h"

namespace berth {

struct LoadOptions {
  // berthd's address and the pusher token (the readers' connections).
  std::string target;
  std::string token;
  // Jobs per snapshot and per SyncSnapshot batch message.
  int jobs = 100'000;
  int batch = 1000;
  // Reader threads (GetPlan(100), ExplainJob, ListJobs(100) in turn) and the
  // cap on their reads in all.
  int readers = 50;
  int64_t max_requests = 2'000'000;
  // How long the syncs and reads go on (at least one unchanged and one 1%
  // changed sync are made), and the time between syncs.
  absl::Duration duration = absl::Seconds(60);
  absl::Duration interval = absl::Seconds(2);
  // Pause admission first, so that no container starts.
  bool pause = true;
  std::string image = "berth-test/busybox:1";
  // berthd's pid, for its VmHWM and CPU time (0: not reported).
  int berthd_pid = 0;
  // Where the floors (sync_floor.h) of this snapshot write their fresh
  // RocksDB, measured in this process before the first sync; empty: not
  // measured.
  std::string floor_dir;
};

// Medians (p50) of each kind of sync, milliseconds; reads' p99; berthd's
// peak RSS and CPU. A figure that was not measured is negative.
struct LoadFigures {
  double first_rpc_ms = -1;
  double first_e2e_ms = -1;
  double resend_ms = -1;
  double unchanged_rpc_ms = -1;
  double unchanged_e2e_ms = -1;
  double changed_rpc_ms = -1;
  double changed_e2e_ms = -1;
  double read_p99_ms = -1;
  double vmhwm_mib = -1;
  double first_cpu_s = -1;  // berthd's CPU time during the first sync
  double cpu_per_sync_s = -1;
  // berthd's CPU time from an unchanged re-sync's first message to its plan.
  double unchanged_cpu_s = -1;
  // The floors of the first and of an unchanged sync (SyncFloor), CPU.
  double floor_first_cpu_s = -1;
  double floor_unchanged_cpu_s = -1;
  bool ok = false;  // no read or sync errors
};

// A sync's latency: the RPC, and until GetPlan answers with a plan at the
// sync's revision (end to end).
struct SyncTiming {
  absl::Duration rpc;
  absl::Duration end_to_end;
};

// Sends `messages` (one snapshot) and waits for a plan at its revision.
absl::StatusOr<SyncTiming> TimedSync(BerthClient& c,
                                     const std::vector<v1::SyncSnapshotRequest>& messages);

// The job spec number `i` of the load's snapshot.
v1::JobSpec LoadJob(int i, const std::string& image);

// The sync load (see berth_load.cc's header): prints every figure and fills
// `figures`. Returns 0 if there was no error, else 1.
int RunLoad(BerthClient& pusher, BerthClient* op, const LoadOptions& options,
            LoadFigures* figures);

// The overhead mode: `runs` syncs of one job against an idle berthd; prints
// Berth's own overhead from snapshot to container start. 0 if all ran.
int RunOverhead(BerthClient& pusher, BerthClient* op, int runs, const std::string& image,
                const std::string& docker_socket);

// Prints "berth-load: what: status" to stderr; returns 1.
int LoadFail(const std::string& what, const absl::Status& s);
double LoadMs(absl::Duration d);
// berth::Quantile (tools/base/quantile.h) of `v`, -1 if empty; sorts `v`
// (LatencySummary reads its maximum at the back).
double Quantile(std::vector<double>& v, double q);
// "n=.. p50=..ms p99=..ms max=..ms".
std::string LatencySummary(std::vector<double> v);

// "VmHWM" / "VmRSS" of `pid` in MiB, or -1.
double ProcStatusMiB(int pid, const std::string& key);

// The pid of a process whose command line names berthd and listens on
// `target`'s port (--listen=...:<port>); 0 if none.
int FindBerthd(const std::string& target);

}  // namespace berth

#endif  // BERTH_TOOLS_LOAD_LOAD_H_
