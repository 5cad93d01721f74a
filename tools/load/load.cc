#include "tools/load/load.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "planner/base/host_port.h"
#include "tools/base/quantile.h"
#include "tools/load/sync_floor.h"

namespace berth {
namespace {

// utime + stime of `pid` (all threads), or zero.
absl::Duration ProcCpu(int pid) {
  std::ifstream f(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  size_t close_paren = stat.rfind(')');
  if (close_paren == std::string::npos) return absl::ZeroDuration();
  std::vector<std::string> fields = absl::StrSplit(stat.substr(close_paren + 2), ' ');
  // Fields 14 and 15 of /proc/<pid>/stat (1-based) are utime and stime;
  // after the command they are at indexes 11 and 12.
  int64_t utime = 0, stime = 0;
  if (fields.size() < 13 || !absl::SimpleAtoi(fields[11], &utime) ||
      !absl::SimpleAtoi(fields[12], &stime)) {
    return absl::ZeroDuration();
  }
  return absl::Seconds(static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK)));
}

}  // namespace

absl::StatusOr<SyncTiming> TimedSync(BerthClient& c,
                                     const std::vector<v1::SyncSnapshotRequest>& messages) {
  absl::Time t0 = absl::Now();
  absl::StatusOr<v1::SyncSnapshotResponse> r = c.SyncRaw(messages);
  if (!r.ok()) return r.status();
  SyncTiming t;
  t.rpc = absl::Now() - t0;
  while (true) {
    absl::StatusOr<v1::Plan> plan = c.GetPlan(1);
    if (!plan.ok()) return plan.status();
    if (plan->revision() >= r->revision()) break;
    // GetPlan answers at once with the previous plan while the new one is
    // computed: a spinning probe would take a core from that computation.
    // 1 ms is the resolution of the end-to-end figure.
    absl::SleepFor(absl::Milliseconds(1));
  }
  t.end_to_end = absl::Now() - t0;
  return t;
}

int LoadFail(const std::string& what, const absl::Status& s) {
  std::fprintf(stderr, "berth-load: %s: %s\n", what.c_str(), s.ToString().c_str());
  return 1;
}

double LoadMs(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

double Quantile(std::vector<double>& v, double q) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return berth::Quantile<double>(v, q);  // the template, not this overload
}

std::string LatencySummary(std::vector<double> v) {
  if (v.empty()) return "n=0";
  double p50 = Quantile(v, 0.5), p99 = Quantile(v, 0.99);
  return absl::StrFormat("n=%d p50=%.1fms p99=%.1fms max=%.1fms", v.size(), p50, p99, v.back());
}

double ProcStatusMiB(int pid, const std::string& key) {
  std::ifstream f(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(f, line)) {
    if (absl::StartsWith(line, key + ":")) {
      std::vector<std::string> parts = absl::StrSplit(line, ' ', absl::SkipEmpty());
      int64_t kb = 0;
      if (parts.size() >= 2 && absl::SimpleAtoi(parts[1], &kb)) return static_cast<double>(kb) / 1024;
    }
  }
  return -1;
}

int FindBerthd(const std::string& target) {
  absl::StatusOr<HostPort> address = ParseHostPort(target);
  if (!address.ok()) return 0;
  const std::string port = absl::StrCat(address->port);
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return 0;
  int found = 0;
  while (dirent* e = readdir(proc)) {
    int pid = 0;
    if (!absl::SimpleAtoi(e->d_name, &pid)) continue;
    std::ifstream f(absl::StrCat("/proc/", pid, "/cmdline"));
    std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::vector<std::string> args = absl::StrSplit(cmd, '\0');
    if (args.empty() || !absl::EndsWith(args[0], "berthd")) continue;
    for (const std::string& a : args) {
      if (absl::StartsWith(a, "--listen=") && absl::EndsWith(a, ":" + port)) found = pid;
    }
  }
  closedir(proc);
  return found;
}

v1::JobSpec LoadJob(int i, const std::string& image) {
  v1::JobSpec j;
  j.set_id(absl::StrCat("load-", i));
  j.set_workspace(absl::StrCat("ws", i % 20));
  j.set_action("load");
  j.set_image(image);
  j.add_argv("true");
  j.set_priority(i % 10);
  j.mutable_resources()->set_cpu_millis(100 + 100 * (i % 8));
  j.mutable_resources()->set_memory_bytes((int64_t{64} << 20) * (1 + i % 16));
  j.mutable_expected_duration()->set_seconds(60 + i % 600);
  if (i % 100 == 0) j.set_pool("database");
  if (i % 50 == 1 && i > 1) j.add_depends_on(absl::StrCat("load-", i - 1));
  j.mutable_created_at()->set_seconds(1'700'000'000 + i);
  return j;
}
int RunLoad(BerthClient& pusher, BerthClient* op, const LoadOptions& options,
            LoadFigures* figures) {
  const int n = options.jobs;
  const absl::Duration duration = options.duration;
  if (options.pause) {
    if (op == nullptr) return LoadFail("pause", absl::InvalidArgumentError("--operator_token needed"));
    absl::StatusOr<v1::ControlState> s = op->Pause("berth-load: no containers");
    if (!s.ok()) return LoadFail("Pause", s.status());
  }
  v1::Snapshot snapshot;
  snapshot.set_generation(static_cast<uint64_t>(absl::ToUnixMillis(absl::Now())));
  for (int i = 0; i < n; ++i) *snapshot.add_jobs() = LoadJob(i, options.image);
  std::vector<v1::SyncSnapshotRequest> messages = SnapshotMessages(snapshot, options.batch);
  uint64_t generation = snapshot.generation();
  std::fprintf(stderr, "berth-load: %d jobs, %zu messages, %.1f MiB\n", n, messages.size(),
               static_cast<double>(snapshot.ByteSizeLong()) / (1 << 20));

  if (!options.floor_dir.empty()) {
    absl::StatusOr<SyncFloor> floor = MeasureSyncFloor(messages, options.floor_dir);
    if (!floor.ok()) return LoadFail("floor", floor.status());
    figures->floor_first_cpu_s = absl::ToDoubleSeconds(floor->first_cpu);
    figures->floor_unchanged_cpu_s = absl::ToDoubleSeconds(floor->unchanged_cpu);
    std::printf("floor (this process, same messages): decode + write %ld records to a fresh "
                "RocksDB %.2f s CPU; decode + compare %ld unchanged %.2f s CPU\n",
                static_cast<long>(floor->written), figures->floor_first_cpu_s,
                static_cast<long>(floor->unchanged), figures->floor_unchanged_cpu_s);
  }

  const int pid = options.berthd_pid;
  // berthd's CPU time (all threads, background flushes included) across a
  // step: steadier than wall time on a shared host.
  auto cpu_now = [pid] { return pid > 0 ? ProcCpu(pid) : absl::ZeroDuration(); };
  const absl::Duration cpu_start = cpu_now();
  absl::StatusOr<SyncTiming> first = TimedSync(pusher, messages);
  if (!first.ok()) return LoadFail("first sync", first.status());
  figures->first_cpu_s = absl::ToDoubleSeconds(cpu_now() - cpu_start);
  std::printf("first sync (%d new jobs): rpc %.0f ms, end to end %.0f ms; berthd CPU %.2f s\n",
              n, LoadMs(first->rpc), LoadMs(first->end_to_end), figures->first_cpu_s);
  figures->first_rpc_ms = LoadMs(first->rpc);
  figures->first_e2e_ms = LoadMs(first->end_to_end);

  // The same generation again is answered "already applied" right after
  // the stream is read: the cost of streaming and assembling alone.
  {
    absl::Time t0 = absl::Now();
    const absl::Duration cpu0 = cpu_now();
    absl::StatusOr<v1::SyncSnapshotResponse> again = pusher.SyncRaw(messages);
    if (!again.ok()) return LoadFail("re-send", again.status());
    figures->resend_ms = LoadMs(absl::Now() - t0);
    std::printf("same generation re-sent (stream + assemble only): rpc %.0f ms%s; berthd CPU %.2f s\n",
                figures->resend_ms, again->already_applied() ? "" : " (NOT already_applied)",
                absl::ToDoubleSeconds(cpu_now() - cpu0));
  }

  const absl::Duration cpu_before = pid > 0 ? ProcCpu(pid) : absl::ZeroDuration();
  const absl::Time load_began = absl::Now();

  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) ids.push_back(absl::StrCat("load-", i));
  const absl::Time deadline = absl::Now() + duration;
  std::atomic<int64_t> budget{options.max_requests};
  std::atomic<bool> stop{false};
  absl::Mutex mu;
  std::map<std::string, std::vector<double>> latencies;  // guarded by mu
  std::map<std::string, int64_t> errors;                  // guarded by mu
  std::vector<std::string> error_samples;                 // guarded by mu

  std::vector<std::thread> readers;
  for (int r = 0; r < options.readers; ++r) {
    readers.emplace_back([&, r] {
      ClientOptions o;
      o.target = options.target;
      o.token = options.token;
      std::unique_ptr<BerthClient> c = *BerthClient::Connect(o);
      absl::BitGen gen;
      std::map<std::string, std::vector<double>> mine;
      std::map<std::string, int64_t> my_errors;
      std::vector<std::string> my_samples;
      for (int64_t i = r; !stop && absl::Now() < deadline && budget-- > 0; ++i) {
        const char* rpc = i % 3 == 0 ? "GetPlan" : i % 3 == 1 ? "ExplainJob" : "ListJobs";
        absl::Time t0 = absl::Now();
        absl::Status s;
        if (i % 3 == 0) {
          s = c->GetPlan(100).status();
        } else if (i % 3 == 1) {
          s = c->ExplainJob(ids[absl::Uniform<size_t>(gen, 0, ids.size())]).status();
        } else {
          v1::ListJobsRequest req;
          req.set_page_size(100);
          req.add_states(v1::JOB_STATE_QUEUED);
          req.set_workspace(absl::StrCat("ws", absl::Uniform(gen, 0, 20)));
          s = c->ListJobs(req).status();
        }
        mine[rpc].push_back(LoadMs(absl::Now() - t0));
        if (!s.ok()) {
          ++my_errors[rpc];
          if (my_samples.size() < 3) my_samples.push_back(absl::StrCat(rpc, ": ", s.ToString()));
        }
      }
      absl::MutexLock l(&mu);
      for (auto& [k, v] : mine) latencies[k].insert(latencies[k].end(), v.begin(), v.end());
      for (auto& [k, v] : my_errors) errors[k] += v;
      for (auto& e : my_samples) error_samples.push_back(e);
    });
  }

  std::vector<double> unchanged_rpc, unchanged_e2e, changed_rpc, changed_e2e, unchanged_cpu;
  int64_t sync_errors = 0;
  absl::BitGen gen;
  // At least one sync of each kind, however long a sync takes (1M jobs on a
  // loaded host may take longer than --duration).
  for (int round = 0; absl::Now() < deadline || round < 2; ++round) {
    absl::Time next = absl::Now() + options.interval;
    const bool change = round % 2 == 1;
    messages.front().mutable_header()->set_generation(++generation);
    if (change) {
      // 1% of the jobs get a new priority.
      for (int k = 0; k < n / 100; ++k) {
        int i = absl::Uniform(gen, 0, n);
        const int batch = options.batch;
        v1::JobSpec* j =
            messages[1 + static_cast<size_t>(i / batch)].mutable_batch()->mutable_jobs(i % batch);
        j->set_priority(j->priority() + 1);
      }
    }
    const absl::Duration sync_cpu0 = cpu_now();
    absl::StatusOr<SyncTiming> t = TimedSync(pusher, messages);
    if (t.ok() && !change && pid > 0) {
      unchanged_cpu.push_back(absl::ToDoubleSeconds(cpu_now() - sync_cpu0));
    }
    if (!t.ok()) {
      ++sync_errors;
      std::fprintf(stderr, "berth-load: sync: %s\n", t.status().ToString().c_str());
    } else {
      (change ? changed_rpc : unchanged_rpc).push_back(LoadMs(t->rpc));
      (change ? changed_e2e : unchanged_e2e).push_back(LoadMs(t->end_to_end));
    }
    absl::Duration wait = std::min(next, deadline) - absl::Now();
    if (wait > absl::ZeroDuration()) absl::SleepFor(wait);
  }
  stop = true;
  for (std::thread& t : readers) t.join();

  const absl::Duration wall = absl::Now() - load_began;
  int64_t read_errors = 0, reads = 0;
  for (auto& [k, v] : errors) read_errors += v;
  std::printf("readers: %d for %s\n", options.readers,
              absl::FormatDuration(duration).c_str());
  std::vector<double> all;
  for (auto& [rpc, v] : latencies) {
    reads += static_cast<int64_t>(v.size());
    all.insert(all.end(), v.begin(), v.end());
    std::printf("  %-10s %s errors=%ld\n", rpc.c_str(), LatencySummary(v).c_str(),
                static_cast<long>(errors[rpc]));
  }
  std::printf("  %-10s %s\n", "all reads", LatencySummary(all).c_str());
  figures->read_p99_ms = Quantile(all, 0.99);
  std::printf("syncs (every %s):\n", absl::FormatDuration(options.interval).c_str());
  std::printf("  unchanged rpc   %s\n", LatencySummary(unchanged_rpc).c_str());
  std::printf("  unchanged e2e   %s\n", LatencySummary(unchanged_e2e).c_str());
  std::printf("  1%% changed rpc  %s\n", LatencySummary(changed_rpc).c_str());
  std::printf("  1%% changed e2e  %s\n", LatencySummary(changed_e2e).c_str());
  figures->unchanged_rpc_ms = Quantile(unchanged_rpc, 0.5);
  figures->unchanged_e2e_ms = Quantile(unchanged_e2e, 0.5);
  figures->changed_rpc_ms = Quantile(changed_rpc, 0.5);
  figures->changed_e2e_ms = Quantile(changed_e2e, 0.5);
  figures->unchanged_cpu_s = Quantile(unchanged_cpu, 0.5);
  if (pid > 0) {
    figures->vmhwm_mib = ProcStatusMiB(pid, "VmHWM");
    std::printf("berthd pid %d: VmHWM %.0f MiB, VmRSS %.0f MiB\n", pid, figures->vmhwm_mib,
                ProcStatusMiB(pid, "VmRSS"));
    const absl::Duration cpu = ProcCpu(pid) - cpu_before;
    figures->cpu_per_sync_s =
        absl::ToDoubleSeconds(cpu) /
        static_cast<double>(std::max<size_t>(1, unchanged_rpc.size() + changed_rpc.size()));
    std::printf("berthd CPU during the load: %.1f s in %.1f s (%.2f cores); %.2f s per sync\n",
                absl::ToDoubleSeconds(cpu), absl::ToDoubleSeconds(wall),
                absl::ToDoubleSeconds(cpu) / absl::ToDoubleSeconds(wall),
                figures->cpu_per_sync_s);
  } else {
    std::printf("berthd pid not found (pass --pid): no RSS\n");
  }
  for (const std::string& e : error_samples) std::printf("  error: %s\n", e.c_str());
  const bool ok = read_errors == 0 && sync_errors == 0 && (reads > 0 || options.readers == 0);
  figures->ok = ok;
  std::printf("%s: %ld reads, %ld read errors, %ld sync errors\n", ok ? "OK" : "ERRORS",
              static_cast<long>(reads), static_cast<long>(read_errors),
              static_cast<long>(sync_errors));
  return ok ? 0 : 1;
}

}  // namespace berth
