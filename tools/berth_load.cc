// berth-load: a bounded load generator and latency probe for a running
// berthd (issue 7 "Load and speed"). Two modes:
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
//   berth-load --target=127.0.0.1:7070 --token=PUSHER --operator_token=OP
#include <dirent.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "tools/client/client.h"

ABSL_FLAG(std::string, target, "127.0.0.1:7070", "berthd gRPC address");
ABSL_FLAG(std::string, token, "", "pusher token (sync, watch, reads)");
ABSL_FLAG(std::string, operator_token, "", "operator token (Pause/Resume)");
ABSL_FLAG(std::string, mode, "load", "load or overhead");
ABSL_FLAG(int32_t, jobs, 100000, "jobs per snapshot (load)");
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

namespace berth {
namespace {

int Fail(const std::string& what, const absl::Status& s) {
  std::fprintf(stderr, "berth-load: %s: %s\n", what.c_str(), s.ToString().c_str());
  return 1;
}

double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

// The q-quantile (nearest rank) of `v`; sorts it.
double Quantile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

std::string Summary(std::vector<double> v) {
  if (v.empty()) return "n=0";
  double p50 = Quantile(v, 0.5), p99 = Quantile(v, 0.99);
  return absl::StrFormat("n=%d p50=%.1fms p99=%.1fms max=%.1fms", v.size(), p50, p99, v.back());
}

// "VmHWM" / "VmRSS" of `pid` in MiB, or -1.
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

// The pid of a process whose command line names berthd and listens on
// `port` (--listen=...:<port>); 0 if none.
int FindBerthd(const std::string& target) {
  const std::string port = target.substr(target.rfind(':') + 1);
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

v1::JobSpec LoadJob(int i) {
  v1::JobSpec j;
  j.set_id(absl::StrCat("load-", i));
  j.set_workspace(absl::StrCat("ws", i % 20));
  j.set_action("load");
  j.set_image(absl::GetFlag(FLAGS_image));
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

struct SyncTiming {
  absl::Duration rpc;
  absl::Duration end_to_end;
};

// Sends `messages` and waits for a plan at the sync's revision.
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

int RunLoad(BerthClient& pusher, BerthClient* op) {
  const int n = absl::GetFlag(FLAGS_jobs);
  const absl::Duration duration = absl::GetFlag(FLAGS_duration);
  if (absl::GetFlag(FLAGS_pause)) {
    if (op == nullptr) return Fail("pause", absl::InvalidArgumentError("--operator_token needed"));
    absl::StatusOr<v1::ControlState> s = op->Pause("berth-load: no containers");
    if (!s.ok()) return Fail("Pause", s.status());
  }
  v1::Snapshot snapshot;
  snapshot.set_generation(static_cast<uint64_t>(absl::ToUnixMillis(absl::Now())));
  for (int i = 0; i < n; ++i) *snapshot.add_jobs() = LoadJob(i);
  std::vector<v1::SyncSnapshotRequest> messages = SnapshotMessages(snapshot, absl::GetFlag(FLAGS_batch));
  uint64_t generation = snapshot.generation();
  std::fprintf(stderr, "berth-load: %d jobs, %zu messages, %.1f MiB\n", n, messages.size(),
               static_cast<double>(snapshot.ByteSizeLong()) / (1 << 20));

  absl::StatusOr<SyncTiming> first = TimedSync(pusher, messages);
  if (!first.ok()) return Fail("first sync", first.status());
  std::printf("first sync (%d new jobs): rpc %.0f ms, end to end %.0f ms\n", n, Ms(first->rpc),
              Ms(first->end_to_end));

  // The same generation again is answered "already applied" right after
  // the stream is read: the cost of streaming and assembling alone.
  {
    absl::Time t0 = absl::Now();
    absl::StatusOr<v1::SyncSnapshotResponse> again = pusher.SyncRaw(messages);
    if (!again.ok()) return Fail("re-send", again.status());
    std::printf("same generation re-sent (stream + assemble only): rpc %.0f ms%s\n",
                Ms(absl::Now() - t0), again->already_applied() ? "" : " (NOT already_applied)");
  }

  int pid = absl::GetFlag(FLAGS_pid);
  if (pid == 0) pid = FindBerthd(absl::GetFlag(FLAGS_target));
  const absl::Duration cpu_before = pid > 0 ? ProcCpu(pid) : absl::ZeroDuration();
  const absl::Time load_began = absl::Now();

  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) ids.push_back(absl::StrCat("load-", i));
  const absl::Time deadline = absl::Now() + duration;
  std::atomic<int64_t> budget{absl::GetFlag(FLAGS_max_requests)};
  std::atomic<bool> stop{false};
  absl::Mutex mu;
  std::map<std::string, std::vector<double>> latencies;  // guarded by mu
  std::map<std::string, int64_t> errors;                  // guarded by mu
  std::vector<std::string> error_samples;                 // guarded by mu

  std::vector<std::thread> readers;
  for (int r = 0; r < absl::GetFlag(FLAGS_readers); ++r) {
    readers.emplace_back([&, r] {
      ClientOptions o;
      o.target = absl::GetFlag(FLAGS_target);
      o.token = absl::GetFlag(FLAGS_token);
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
        mine[rpc].push_back(Ms(absl::Now() - t0));
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

  std::vector<double> unchanged_rpc, unchanged_e2e, changed_rpc, changed_e2e;
  int64_t sync_errors = 0;
  absl::BitGen gen;
  for (int round = 0; absl::Now() < deadline; ++round) {
    absl::Time next = absl::Now() + absl::GetFlag(FLAGS_interval);
    const bool change = round % 2 == 1;
    messages.front().mutable_header()->set_generation(++generation);
    if (change) {
      // 1% of the jobs get a new priority.
      for (int k = 0; k < n / 100; ++k) {
        int i = absl::Uniform(gen, 0, n);
        const int batch = absl::GetFlag(FLAGS_batch);
        v1::JobSpec* j =
            messages[1 + static_cast<size_t>(i / batch)].mutable_batch()->mutable_jobs(i % batch);
        j->set_priority(j->priority() + 1);
      }
    }
    absl::StatusOr<SyncTiming> t = TimedSync(pusher, messages);
    if (!t.ok()) {
      ++sync_errors;
      std::fprintf(stderr, "berth-load: sync: %s\n", t.status().ToString().c_str());
    } else {
      (change ? changed_rpc : unchanged_rpc).push_back(Ms(t->rpc));
      (change ? changed_e2e : unchanged_e2e).push_back(Ms(t->end_to_end));
    }
    absl::Duration wait = std::min(next, deadline) - absl::Now();
    if (wait > absl::ZeroDuration()) absl::SleepFor(wait);
  }
  stop = true;
  for (std::thread& t : readers) t.join();

  const absl::Duration wall = absl::Now() - load_began;
  int64_t read_errors = 0, reads = 0;
  for (auto& [k, v] : errors) read_errors += v;
  std::printf("readers: %d for %s\n", absl::GetFlag(FLAGS_readers),
              absl::FormatDuration(duration).c_str());
  std::vector<double> all;
  for (auto& [rpc, v] : latencies) {
    reads += static_cast<int64_t>(v.size());
    all.insert(all.end(), v.begin(), v.end());
    std::printf("  %-10s %s errors=%ld\n", rpc.c_str(), Summary(v).c_str(),
                static_cast<long>(errors[rpc]));
  }
  std::printf("  %-10s %s\n", "all reads", Summary(all).c_str());
  std::printf("syncs (every %s):\n", absl::FormatDuration(absl::GetFlag(FLAGS_interval)).c_str());
  std::printf("  unchanged rpc   %s\n", Summary(unchanged_rpc).c_str());
  std::printf("  unchanged e2e   %s\n", Summary(unchanged_e2e).c_str());
  std::printf("  1%% changed rpc  %s\n", Summary(changed_rpc).c_str());
  std::printf("  1%% changed e2e  %s\n", Summary(changed_e2e).c_str());
  if (pid > 0) {
    std::printf("berthd pid %d: VmHWM %.0f MiB, VmRSS %.0f MiB\n", pid, ProcStatusMiB(pid, "VmHWM"),
                ProcStatusMiB(pid, "VmRSS"));
    const absl::Duration cpu = ProcCpu(pid) - cpu_before;
    std::printf("berthd CPU during the load: %.1f s in %.1f s (%.2f cores); %.2f s per sync\n",
                absl::ToDoubleSeconds(cpu), absl::ToDoubleSeconds(wall),
                absl::ToDoubleSeconds(cpu) / absl::ToDoubleSeconds(wall),
                absl::ToDoubleSeconds(cpu) /
                    static_cast<double>(std::max<size_t>(
                        1, unchanged_rpc.size() + changed_rpc.size())));
  } else {
    std::printf("berthd pid not found (pass --pid): no RSS\n");
  }
  for (const std::string& e : error_samples) std::printf("  error: %s\n", e.c_str());
  const bool ok =
      read_errors == 0 && sync_errors == 0 && (reads > 0 || absl::GetFlag(FLAGS_readers) == 0);
  std::printf("%s: %ld reads, %ld read errors, %ld sync errors\n", ok ? "OK" : "ERRORS",
              static_cast<long>(reads), static_cast<long>(read_errors),
              static_cast<long>(sync_errors));
  return ok ? 0 : 1;
}

// ---- overhead ----

// GET `path` from dockerd over its unix socket (HTTP/1.0: no chunking).
absl::StatusOr<std::string> DockerGet(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string sock = absl::GetFlag(FLAGS_docker_socket);
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sock.c_str());
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (fd >= 0) close(fd);
    return absl::UnavailableError(absl::StrCat("cannot connect to ", sock));
  }
  std::string req = absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: docker\r\n\r\n");
  (void)!write(fd, req.data(), req.size());
  std::string resp;
  char buf[8192];
  ssize_t got;
  while ((got = read(fd, buf, sizeof(buf))) > 0) resp.append(buf, static_cast<size_t>(got));
  close(fd);
  size_t body = resp.find("\r\n\r\n");
  const bool ok200 =
      absl::StartsWith(resp, "HTTP/1.0 200") || absl::StartsWith(resp, "HTTP/1.1 200");
  if (body == std::string::npos || !ok200) {
    return absl::NotFoundError(resp.substr(0, resp.find("\r\n")));
  }
  return resp.substr(body + 4);
}

absl::StatusOr<absl::Time> ParseDockerTime(const std::string& s) {
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, s, &t, &err)) {
    return absl::InvalidArgumentError(absl::StrCat("time '", s, "': ", err));
  }
  return t;
}

absl::Time FromTimestamp(const google::protobuf::Timestamp& t) {
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}

int RunOverhead(BerthClient& pusher, BerthClient* op) {
  if (op != nullptr) {
    absl::StatusOr<v1::ControlState> s = op->Resume();
    if (!s.ok()) return Fail("Resume", s.status());
  }
  // The event history, as it happens: SNAPSHOT_APPLIED by generation and
  // RUNNING by job.
  absl::Mutex mu;
  std::map<uint64_t, absl::Time> applied;       // guarded by mu
  std::map<std::string, absl::Time> running;    // guarded by mu
  std::map<std::string, v1::JobState> terminal;  // guarded by mu
  std::atomic<bool> stop{false};
  std::thread watcher([&] {
    uint64_t last = 0;
    while (!stop) {
      (void)pusher.Watch(
          last,
          [&](const v1::Event& e) {
            absl::MutexLock l(&mu);
            last = e.revision();
            if (e.type() == v1::EVENT_TYPE_SNAPSHOT_APPLIED) {
              applied[e.generation()] = FromTimestamp(e.time());
            } else if (e.type() == v1::EVENT_TYPE_JOB_STATE_CHANGED) {
              if (e.state() == v1::JOB_STATE_RUNNING) running[e.job_id()] = FromTimestamp(e.time());
              if (e.state() == v1::JOB_STATE_SUCCEEDED || e.state() == v1::JOB_STATE_FAILED ||
                  e.state() == v1::JOB_STATE_CANCELLED || e.state() == v1::JOB_STATE_REJECTED) {
                terminal[e.job_id()] = e.state();
              }
            }
            return !stop.load();
          },
          absl::Now() + absl::Seconds(1));
    }
  });

  std::vector<double> total, docker, before_create, after_start, overhead;
  uint64_t generation = static_cast<uint64_t>(absl::ToUnixMillis(absl::Now()));
  const std::string tag = absl::StrCat(absl::ToUnixSeconds(absl::Now()));
  int failures = 0;
  for (int r = 0; r < absl::GetFlag(FLAGS_runs); ++r) {
    v1::Snapshot s;
    s.set_generation(++generation);
    v1::JobSpec j = LoadJob(r);
    j.set_id(absl::StrCat("ovh-", tag, "-", r));
    j.clear_argv();
    j.add_argv("sleep");
    j.add_argv("1");
    j.clear_depends_on();
    j.clear_pool();
    j.mutable_resources()->set_cpu_millis(100);
    j.mutable_resources()->set_memory_bytes(32 << 20);
    *s.add_jobs() = j;
    absl::StatusOr<v1::SyncSnapshotResponse> synced = pusher.Sync(s);
    if (!synced.ok()) return Fail("sync", synced.status());
    // Wait for RUNNING, then read the container's own timestamps.
    absl::Time deadline = absl::Now() + absl::Seconds(30);
    absl::Time t_applied, t_running;
    bool seen = false;
    while (absl::Now() < deadline && !seen) {
      absl::SleepFor(absl::Milliseconds(5));
      absl::MutexLock l(&mu);
      if (running.count(j.id()) && applied.count(s.generation())) {
        t_applied = applied[s.generation()];
        t_running = running[j.id()];
        seen = true;
      }
    }
    if (!seen) return Fail(j.id(), absl::DeadlineExceededError("never RUNNING"));
    absl::StatusOr<std::string> body = DockerGet(absl::StrCat("/containers/berth-", j.id(), "/json"));
    if (!body.ok()) {
      ++failures;
      std::fprintf(stderr, "berth-load: inspect %s: %s\n", j.id().c_str(),
                   body.status().ToString().c_str());
    } else {
      nlohmann::json c = nlohmann::json::parse(*body, nullptr, false);
      absl::StatusOr<absl::Time> created = ParseDockerTime(c.value("Created", ""));
      absl::StatusOr<absl::Time> started =
          ParseDockerTime(c.contains("State") ? c["State"].value("StartedAt", "") : "");
      if (!created.ok() || !started.ok()) {
        return Fail("container times", created.ok() ? started.status() : created.status());
      }
      total.push_back(Ms(t_running - t_applied));
      docker.push_back(Ms(*started - *created));
      before_create.push_back(Ms(*created - t_applied));
      after_start.push_back(Ms(t_running - *started));
      overhead.push_back(Ms((t_running - t_applied) - (*started - *created)));
    }
    // Idle again before the next run.
    deadline = absl::Now() + absl::Seconds(30);
    while (absl::Now() < deadline) {
      {
        absl::MutexLock l(&mu);
        if (terminal.count(j.id())) break;
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
  }
  stop = true;
  watcher.join();
  std::printf("overhead: %d runs (one job per snapshot, idle berthd)\n", absl::GetFlag(FLAGS_runs));
  std::printf("  applied -> RUNNING persisted     %s\n", Summary(total).c_str());
  std::printf("  docker Created -> StartedAt      %s\n", Summary(docker).c_str());
  std::printf("  applied -> docker Created        %s\n", Summary(before_create).c_str());
  std::printf("  StartedAt -> RUNNING persisted   %s\n", Summary(after_start).c_str());
  std::printf("  Berth overhead (total - docker)  %s\n", Summary(overhead).c_str());
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace berth

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "berth-load: bounded load and latency probe for berthd.\n"
      "  berth-load --target=HOST:PORT --token=PUSHER --operator_token=OP [--mode=load|overhead]");
  absl::ParseCommandLine(argc, argv);
  berth::ClientOptions o;
  o.target = absl::GetFlag(FLAGS_target);
  o.token = absl::GetFlag(FLAGS_token);
  o.timeout = absl::Seconds(60);
  absl::StatusOr<std::unique_ptr<berth::BerthClient>> pusher = berth::BerthClient::Connect(o);
  if (!pusher.ok()) return berth::Fail("connect", pusher.status());
  std::unique_ptr<berth::BerthClient> op;
  if (!absl::GetFlag(FLAGS_operator_token).empty()) {
    o.token = absl::GetFlag(FLAGS_operator_token);
    op = *berth::BerthClient::Connect(o);
  }
  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (mode == "load") return berth::RunLoad(**pusher, op.get());
  if (mode == "overhead") return berth::RunOverhead(**pusher, op.get());
  std::fprintf(stderr, "berth-load: --mode must be load or overhead\n");
  return 2;
}
