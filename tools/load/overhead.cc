// berth-load --mode=overhead: Berth's own time from snapshot to container
// start (tools/load/load.h).
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "tools/load/load.h"

namespace berth {
namespace {

absl::StatusOr<std::string> DockerGet(const std::string& docker_socket, const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string& sock = docker_socket;
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

}  // namespace

int RunOverhead(BerthClient& pusher, BerthClient* op, int runs, const std::string& image,
                const std::string& docker_socket) {
  if (op != nullptr) {
    absl::StatusOr<v1::ControlState> s = op->Resume();
    if (!s.ok()) return LoadFail("Resume", s.status());
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
  for (int r = 0; r < runs; ++r) {
    v1::Snapshot s;
    s.set_generation(++generation);
    v1::JobSpec j = LoadJob(r, image);
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
    if (!synced.ok()) return LoadFail("sync", synced.status());
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
    if (!seen) return LoadFail(j.id(), absl::DeadlineExceededError("never RUNNING"));
    absl::StatusOr<std::string> body = DockerGet(docker_socket, absl::StrCat("/containers/berth-", j.id(), "/json"));
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
        return LoadFail("container times", created.ok() ? started.status() : created.status());
      }
      total.push_back(LoadMs(t_running - t_applied));
      docker.push_back(LoadMs(*started - *created));
      before_create.push_back(LoadMs(*created - t_applied));
      after_start.push_back(LoadMs(t_running - *started));
      overhead.push_back(LoadMs((t_running - t_applied) - (*started - *created)));
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
  std::printf("overhead: %d runs (one job per snapshot, idle berthd)\n", runs);
  std::printf("  applied -> RUNNING persisted     %s\n", LatencySummary(total).c_str());
  std::printf("  docker Created -> StartedAt      %s\n", LatencySummary(docker).c_str());
  std::printf("  applied -> docker Created        %s\n", LatencySummary(before_create).c_str());
  std::printf("  StartedAt -> RUNNING persisted   %s\n", LatencySummary(after_start).c_str());
  std::printf("  Berth overhead (total - docker)  %s\n", LatencySummary(overhead).c_str());
  return failures == 0 ? 0 : 1;
}


}  // namespace berth
