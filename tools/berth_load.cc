// berth-load: a bounded load generator and latency probe for a running
// berthd. Two modes:
//
// --mode=load (default): pauses admission (so no container is started),
//   then one pusher syncs a --jobs snapshot every --interval, alternating an
//   unchanged re-sync (same jobs, next generation) and one with 1% of the
//   jobs changed (priority), while --readers threads call GetPlan(limit
//   100), ExplainJob and ListJobs(page_size 100) in turn, for --duration
//   (and at most --max_requests reads in all). Reports errors, p50/p99 per
//   RPC, sync times, and berthd's peak RSS (VmHWM of --pid, or of the berthd
//   process listening on --target's port).
//   A sync's end-to-end time runs from the first message sent to a GetPlan
//   answered at the sync's revision or later: stream + validate + diff +
//   persist (the Sync RPC) + plan (GetPlan recomputes for a new revision).
//
// --mode=overhead: against an idle, unpaused berthd, --runs times: sync one
//   small job and measure Berth's own time from snapshot to container start,
//   without Docker's: (RUNNING event time - SNAPSHOT_APPLIED event time) -
//   (container State.StartedAt - Created, from Docker's inspect). That is
//   (Created - applied): plan, persist ADMITTED, send create; plus
//   (RUNNING - StartedAt): the start answer returning, persist RUNNING.
//   Both event times are berthd's clock, both container times dockerd's, on
//   the same host.
//
// Scale: with --berthd=PATH berth-load starts a fresh berthd
// itself for each case (new process, new data dir under --work_dir, budgets
// and allowed images from --berthd_flags), and after the load restarts it
// on the same data dir and reports the time until it serves again (reopen:
// the store loaded). Each case is measured only once the child's reconcile
// pass has reached dockerd (--require_runtime). --million runs the --jobs
// case (default 100,000) and then the 1,000,000-job case, each so, and
// prints every figure of both with the ratio 1M / --jobs:
//
//   berth-load --berthd=bazel-bin/server/berthd --million --readers=0 --duration=20s
//
//   berth-load --target=127.0.0.1:7070 --token=PUSHER --operator_token=OP
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "planner/base/build_info.h"
#include "tools/client/client.h"
#include "tools/load/child_berthd.h"
#include "tools/load/load.h"
#include "tools/load/soak.h"

ABSL_FLAG(std::string, target, "127.0.0.1:7070", "berthd gRPC address (without --berthd)");
ABSL_FLAG(std::string, token, "", "pusher token (sync, watch, reads)");
ABSL_FLAG(std::string, operator_token, "", "operator token (Pause/Resume)");
ABSL_FLAG(std::string, mode, "load", "load or overhead");
ABSL_FLAG(int32_t, jobs, 100000, "jobs per snapshot (load)");
ABSL_FLAG(bool, million, false,
          "load: run --jobs and then 1,000,000 jobs, each against a fresh berthd (needs "
          "--berthd), and print the ratio of every figure");
ABSL_FLAG(std::string, berthd, "",
          "path of berthd: start a fresh one per case (own data dir and port) and measure "
          "its reopen after a restart; empty: use the berthd at --target");
ABSL_FLAG(std::string, berthd_flags,
          "--allowed_images=berth-test/* --memory=64Gi --cpus=16 --max_workers=8 "
          "--pool_max=database=2",
          "flags of the berthd started by --berthd (space-separated)");
ABSL_FLAG(std::string, work_dir, "/tmp", "where --berthd's data dirs are made (and removed)");
ABSL_FLAG(bool, require_runtime, true,
          "with --berthd: measure only once the child's reconcile pass reaches its runtime "
          "(berth_runtime_up 1); without dockerd its pass never plans and the figures are "
          "not berthd's as it runs");
ABSL_FLAG(absl::Duration, runtime_timeout, absl::Seconds(15),
          "with --require_runtime: how long to wait for the child's runtime");
ABSL_FLAG(absl::Duration, interval, absl::Seconds(2), "time between syncs (load)");
ABSL_FLAG(int32_t, batch, 1000, "jobs per SyncSnapshot batch message (load)");
ABSL_FLAG(int32_t, readers, 50, "concurrent reader threads (load)");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(60), "how long the load runs");
ABSL_FLAG(int64_t, max_requests, 2000000, "cap on reads in all (load)");
ABSL_FLAG(bool, pause, true, "pause admission first so no container starts (load)");
ABSL_FLAG(int32_t, pid, 0, "berthd pid for RSS; 0: find the berthd on --target's port");
ABSL_FLAG(int32_t, runs, 20, "syncs of one job (overhead)");
ABSL_FLAG(std::string, docker_socket, "/var/run/docker.sock",
          "dockerd's socket, for container timestamps (overhead)");
ABSL_FLAG(std::string, image, "berth-test/busybox:1", "image of the jobs");
ABSL_FLAG(int32_t, soak_queued, 50000, "held jobs kept queued (soak)");
ABSL_FLAG(int32_t, soak_arrivals, 250, "held jobs arriving (and as many cancelled) per sync (soak)");
ABSL_FLAG(int32_t, soak_real, 1, "real containers added per sync (soak)");
ABSL_FLAG(absl::Duration, sample_every, absl::Minutes(1), "sampling period (soak)");
ABSL_FLAG(std::string, out_dir, ".", "where soak.csv and soak.svg are written (soak)");
ABSL_FLAG(std::string, metrics, "",
          "berthd's metrics host:port, for the plan-pass figure (soak; with --berthd, the "
          "child's own metrics port unless this names another)");
ABSL_FLAG(std::string, data_dir, "", "berthd's data dir, for its size (soak, without --berthd)");

namespace berth {
namespace {

// A fresh berthd from --berthd with --berthd_flags; an empty token becomes
// the child's default pusher or operator token.
absl::StatusOr<std::unique_ptr<ChildBerthd>> StartChild(std::string* token,
                                                        std::string* operator_token) {
  ChildBerthdOptions co;
  co.binary = absl::GetFlag(FLAGS_berthd);
  co.flags = absl::StrSplit(absl::GetFlag(FLAGS_berthd_flags), ' ', absl::SkipEmpty());
  co.work_dir = absl::GetFlag(FLAGS_work_dir);
  co.require_runtime = absl::GetFlag(FLAGS_require_runtime);
  co.runtime_timeout = absl::GetFlag(FLAGS_runtime_timeout);
  if (token->empty()) *token = "berth-load-pusher-0123456789";
  if (operator_token->empty()) *operator_token = "berth-load-operator-0123456789";
  co.pusher_token = *token;
  co.operator_token = *operator_token;
  return ChildBerthd::Start(co);
}

// One load case; with `berthd_binary`, against a fresh child berthd, then
// its reopen time. `reopen_ms` is -1 without a child.
struct CaseFigures {
  LoadFigures load;
  double reopen_ms = -1;
  double reopen_loaded_ms = -1;
};

int RunCase(int jobs, CaseFigures* out) {
  const std::string binary = absl::GetFlag(FLAGS_berthd);
  std::unique_ptr<ChildBerthd> child;
  LoadOptions o;
  o.target = absl::GetFlag(FLAGS_target);
  o.token = absl::GetFlag(FLAGS_token);
  std::string operator_token = absl::GetFlag(FLAGS_operator_token);
  if (!binary.empty()) {
    absl::StatusOr<std::unique_ptr<ChildBerthd>> c = StartChild(&o.token, &operator_token);
    if (!c.ok()) return LoadFail("start berthd", c.status());
    child = *std::move(c);
    o.target = child->target();
    o.berthd_pid = child->pid();
    // A fresh berthd's figures beside their floors, measured in this run.
    o.floor_dir = child->data_dir() + ".floor";
  } else {
    o.berthd_pid = absl::GetFlag(FLAGS_pid);
    if (o.berthd_pid == 0) o.berthd_pid = FindBerthd(o.target);
  }
  o.jobs = jobs;
  o.batch = absl::GetFlag(FLAGS_batch);
  o.readers = absl::GetFlag(FLAGS_readers);
  o.max_requests = absl::GetFlag(FLAGS_max_requests);
  o.duration = absl::GetFlag(FLAGS_duration);
  o.interval = absl::GetFlag(FLAGS_interval);
  o.pause = absl::GetFlag(FLAGS_pause);
  o.image = absl::GetFlag(FLAGS_image);
  ClientOptions co;
  co.target = o.target;
  co.token = o.token;
  co.timeout = absl::Seconds(120);
  absl::StatusOr<std::unique_ptr<BerthClient>> pusher = BerthClient::Connect(co);
  if (!pusher.ok()) return LoadFail("connect", pusher.status());
  std::unique_ptr<BerthClient> op;
  if (!operator_token.empty()) {
    co.token = operator_token;
    op = *BerthClient::Connect(co);
  }
  int rc = RunLoad(**pusher, op.get(), o, &out->load);
  if (child != nullptr) {
    absl::StatusOr<ChildBerthd::Reopen> reopen = child->Restart();
    if (!reopen.ok()) return LoadFail("restart berthd", reopen.status());
    out->reopen_ms = LoadMs(reopen->serving);
    out->reopen_loaded_ms = LoadMs(reopen->loaded);
    std::printf("reopen after a restart (%d jobs): serving after %.0f ms, every job loaded "
                "(ListJobs answers) after %.0f ms\n",
                jobs, out->reopen_ms, out->reopen_loaded_ms);
  }
  return rc;
}

// --mode=soak: against a fresh child berthd (--berthd) or the one at
// --target (--pid, --data_dir).
int Soak() {
  SoakOptions o;
  o.target = absl::GetFlag(FLAGS_target);
  o.token = absl::GetFlag(FLAGS_token);
  o.operator_token = absl::GetFlag(FLAGS_operator_token);
  o.metrics = absl::GetFlag(FLAGS_metrics);
  o.data_dir = absl::GetFlag(FLAGS_data_dir);
  o.berthd_pid = absl::GetFlag(FLAGS_pid);
  std::unique_ptr<ChildBerthd> child;
  if (!absl::GetFlag(FLAGS_berthd).empty()) {
    absl::StatusOr<std::unique_ptr<ChildBerthd>> c = StartChild(&o.token, &o.operator_token);
    if (!c.ok()) return LoadFail("start berthd", c.status());
    child = *std::move(c);
    o.target = child->target();
    o.berthd_pid = child->pid();
    o.data_dir = child->data_dir();
    // The child's own metrics port, unless --metrics names another.
    if (o.metrics.empty()) o.metrics = child->metrics();
  } else if (o.berthd_pid == 0) {
    o.berthd_pid = FindBerthd(o.target);
  }
  o.duration = absl::GetFlag(FLAGS_duration);
  o.interval = absl::GetFlag(FLAGS_interval);
  o.sample_every = absl::GetFlag(FLAGS_sample_every);
  o.queued = absl::GetFlag(FLAGS_soak_queued);
  o.arrivals = absl::GetFlag(FLAGS_soak_arrivals);
  o.real_per_sync = absl::GetFlag(FLAGS_soak_real);
  o.readers = absl::GetFlag(FLAGS_readers);
  o.image = absl::GetFlag(FLAGS_image);
  o.out_dir = absl::GetFlag(FLAGS_out_dir);
  return RunSoak(o);
}

void PrintComparison(int base_jobs, const CaseFigures& base, const CaseFigures& big,
                     int big_jobs) {
  std::printf("\n%-44s %12d %12d %8s\n", "figure (p50 where repeated)", base_jobs, big_jobs,
              "ratio");
  auto row = [](const char* name, double a, double b, const char* unit) {
    if (a < 0 || b < 0) {
      std::printf("%-44s %12s %12s %8s\n", name, "-", "-", "-");
      return;
    }
    std::printf("%-44s %9.0f %-2s %9.0f %-2s %7.1fx\n", name, a, unit, b, unit,
                a > 0 ? b / a : 0.0);
  };
  row("first sync, end to end", base.load.first_e2e_ms, big.load.first_e2e_ms, "ms");
  row("first sync, rpc", base.load.first_rpc_ms, big.load.first_rpc_ms, "ms");
  row("first sync, berthd CPU", base.load.first_cpu_s * 1000, big.load.first_cpu_s * 1000, "ms");
  row("same generation re-sent (stream + assemble)", base.load.resend_ms, big.load.resend_ms,
      "ms");
  row("unchanged re-sync, rpc", base.load.unchanged_rpc_ms, big.load.unchanged_rpc_ms, "ms");
  row("unchanged re-sync, end to end", base.load.unchanged_e2e_ms, big.load.unchanged_e2e_ms,
      "ms");
  row("1% changed, rpc", base.load.changed_rpc_ms, big.load.changed_rpc_ms, "ms");
  row("1% changed, end to end", base.load.changed_e2e_ms, big.load.changed_e2e_ms, "ms");
  row("reads p99", base.load.read_p99_ms, big.load.read_p99_ms, "ms");
  row("re-syncs, berthd CPU per sync", base.load.cpu_per_sync_s * 1000,
      big.load.cpu_per_sync_s * 1000, "ms");
  row("unchanged re-sync, berthd CPU", base.load.unchanged_cpu_s * 1000,
      big.load.unchanged_cpu_s * 1000, "ms");
  row("floor: decode + write to a fresh RocksDB", base.load.floor_first_cpu_s * 1000,
      big.load.floor_first_cpu_s * 1000, "ms");
  row("floor: decode + compare (unchanged)", base.load.floor_unchanged_cpu_s * 1000,
      big.load.floor_unchanged_cpu_s * 1000, "ms");
  row("berthd VmHWM", base.load.vmhwm_mib, big.load.vmhwm_mib, "Mi");
  row("reopen after a restart", base.reopen_ms, big.reopen_ms, "ms");
  row("reopen, every job loaded", base.reopen_loaded_ms, big.reopen_loaded_ms, "ms");
  std::printf("(jobs ratio %.1fx: a ratio above it is superlinear growth)\n",
              static_cast<double>(big_jobs) / base_jobs);
  // Each case's figures as ratios to its floors, measured in the same run.
  auto ratio = [](double a, double floor) { return a >= 0 && floor > 0 ? a / floor : -1.0; };
  for (const auto& [jobs, f] : {std::pair<int, const LoadFigures*>{base_jobs, &base.load},
                                {big_jobs, &big.load}}) {
    std::printf("%d jobs: first sync CPU %.2fx its floor (target <= 2x); unchanged re-sync CPU "
                "%.2fx its floor, %.0f ms end to end (target <= 1.5 s or <= 2x); VmHWM %.0f MiB "
                "(target <= 1536)\n",
                jobs, ratio(f->first_cpu_s, f->floor_first_cpu_s),
                ratio(f->unchanged_cpu_s, f->floor_unchanged_cpu_s), f->unchanged_e2e_ms,
                f->vmhwm_mib);
  }
}

}  // namespace
}  // namespace berth

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "berth-load: bounded load and latency probe for berthd.\n"
      "  berth-load --target=HOST:PORT --token=PUSHER --operator_token=OP [--mode=load|overhead]\n"
      "  berth-load --berthd=PATH [--million] [--readers=0 --duration=20s]");
  // The build line every Berth binary prints, not absl's default (which
  // reports how Debian built absl, not this binary).
  absl::FlagsUsageConfig usage;
  usage.version_string = [] { return berth::VersionLine("berth-load") + "\n"; };
  absl::SetFlagsUsageConfig(usage);
  absl::ParseCommandLine(argc, argv);
  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (mode == "overhead") {
    berth::ClientOptions o;
    o.target = absl::GetFlag(FLAGS_target);
    o.token = absl::GetFlag(FLAGS_token);
    o.timeout = absl::Seconds(60);
    absl::StatusOr<std::unique_ptr<berth::BerthClient>> pusher = berth::BerthClient::Connect(o);
    if (!pusher.ok()) return berth::LoadFail("connect", pusher.status());
    std::unique_ptr<berth::BerthClient> op;
    if (!absl::GetFlag(FLAGS_operator_token).empty()) {
      o.token = absl::GetFlag(FLAGS_operator_token);
      op = *berth::BerthClient::Connect(o);
    }
    return berth::RunOverhead(**pusher, op.get(), absl::GetFlag(FLAGS_runs),
                              absl::GetFlag(FLAGS_image), absl::GetFlag(FLAGS_docker_socket));
  }
  if (mode == "soak") return berth::Soak();
  if (mode != "load") {
    std::fprintf(stderr, "berth-load: --mode must be load, overhead or soak\n");
    return 2;
  }
  const int jobs = absl::GetFlag(FLAGS_jobs);
  if (!absl::GetFlag(FLAGS_million)) {
    berth::CaseFigures f;
    return berth::RunCase(jobs, &f);
  }
  if (absl::GetFlag(FLAGS_berthd).empty()) {
    std::fprintf(stderr, "berth-load: --million needs --berthd (a fresh berthd per case)\n");
    return 2;
  }
  constexpr int kMillion = 1'000'000;
  berth::CaseFigures base, big;
  std::printf("== %d jobs ==\n", jobs);
  std::fflush(stdout);
  int rc = berth::RunCase(jobs, &base);
  std::printf("\n== %d jobs ==\n", kMillion);
  std::fflush(stdout);
  rc |= berth::RunCase(kMillion, &big);
  berth::PrintComparison(jobs, base, big, kMillion);
  return rc;
}
