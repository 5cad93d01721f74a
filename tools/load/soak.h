// berth-load's soak: a job-server pushing realistic snapshots
// for a long time against one berthd — jobs arriving, a share of them run as
// real containers and leave the snapshot once finished, queued ones
// cancelled (dropped from the snapshot) and re-prioritised — with readers
// and a follower, sampling berthd's RSS, data-dir size, threads, file
// descriptors, plan-pass and sync latency and read p99 at a fixed period.
// Writes <out_dir>/soak.csv and <out_dir>/soak.svg; docs/BENCHMARKS.md
// "Soak" holds a run's figures.
//
// Not thread-safe: one RunSoak at a time (it starts its own threads).
#ifndef BERTH_TOOLS_LOAD_SOAK_H_
#define BERTH_TOOLS_LOAD_SOAK_H_

#include <string>

#include "absl/time/time.h"

namespace berth {

struct SoakOptions {
  // berthd's gRPC address, a pusher token (also used to read and follow)
  // and an operator token (to put the held pool in maintenance).
  std::string target;
  std::string token;
  std::string operator_token;
  // berthd's pid and data dir (RSS, threads, fds; the data dir's size), and
  // its metrics address ("127.0.0.1:9090"; empty: no plan-pass figure).
  int berthd_pid = 0;
  std::string data_dir;
  std::string metrics;
  absl::Duration duration = absl::Hours(1);
  absl::Duration interval = absl::Seconds(3);   // between syncs
  absl::Duration sample_every = absl::Minutes(1);
  // Jobs waiting in the held pool (kept in maintenance, so they wait and
  // are planned and explained but never run): the queue's size, reached in
  // the first syncs and then kept by cancelling as many as arrive.
  int queued = 50'000;
  int arrivals = 250;   // new held jobs per sync
  int real_per_sync = 1;  // new real containers per sync (sleep 1; echo)
  int readers = 4;
  std::string image = "berth-test/busybox:1";
  std::string out_dir = ".";
};

// Runs the soak; prints a line per sample and a summary. 0 if there was no
// sync, read or follower error; 1 otherwise.
int RunSoak(const SoakOptions& options);

}  // namespace berth

#endif  // BERTH_TOOLS_LOAD_SOAK_H_
