#include "tools/load/soak.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "tools/client/client.h"
#include "tools/load/load.h"
#include "tools/load/metrics_scrape.h"
#include "tools/plan/chart.h"

namespace berth {
namespace {

namespace fs = std::filesystem;

// What happened since the last sample, and the run's error counts.
class SoakStats {
 public:
  void Sync(double ms) { absl::MutexLock l(&mu_); sync_ms_.push_back(ms); }
  void Read(double ms) { absl::MutexLock l(&mu_); read_ms_.push_back(ms); }
  void Error(const char* kind, const std::string& what) {
    absl::MutexLock l(&mu_);
    ++errors_[kind];
    if (samples_.size() < 5) samples_.push_back(absl::StrCat(kind, ": ", what));
  }
  void Event() { absl::MutexLock l(&mu_); ++events_; }
  void Finished(const std::string& id) { absl::MutexLock l(&mu_); finished_.insert(id); }
  // The real jobs that finished since the last call (the job-server drops
  // them from its next snapshot).
  std::set<std::string> TakeFinished() {
    absl::MutexLock l(&mu_);
    finished_total_ += static_cast<int64_t>(finished_.size());
    return std::exchange(finished_, {});
  }
  struct Window {
    std::vector<double> sync_ms, read_ms;
    int64_t events = 0, finished_total = 0;
    std::map<std::string, int64_t> errors;
  };
  Window Take() {
    absl::MutexLock l(&mu_);
    Window w;
    w.sync_ms = std::exchange(sync_ms_, {});
    w.read_ms = std::exchange(read_ms_, {});
    w.events = std::exchange(events_, 0);
    w.finished_total = finished_total_;
    w.errors = errors_;
    return w;
  }
  std::vector<std::string> ErrorSamples() {
    absl::MutexLock l(&mu_);
    return samples_;
  }

 private:
  absl::Mutex mu_;
  std::vector<double> sync_ms_, read_ms_;
  int64_t events_ = 0, finished_total_ = 0;
  std::set<std::string> finished_;
  std::map<std::string, int64_t> errors_;
  std::vector<std::string> samples_;
};

double DirMiB(const std::string& dir) {
  std::error_code ec;
  uintmax_t total = 0;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2)) total += it->file_size(e2);
  }
  return static_cast<double>(total) / (1 << 20);
}

int CountFds(int pid) {
  std::error_code ec;
  int n = 0;
  for (auto it = fs::directory_iterator(absl::StrCat("/proc/", pid, "/fd"), ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

int CountThreads(int pid) {
  std::ifstream f(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  int n = -1;
  while (std::getline(f, line)) {
    if (absl::StartsWith(line, "Threads:")) (void)absl::SimpleAtoi(line.substr(8), &n);
  }
  return n;
}

// berth_plan_seconds' sum and count from berthd's /metrics ({-1, -1} if
// unreadable).
std::pair<double, double> PlanSeconds(const std::string& metrics) {
  absl::StatusOr<std::string> text = ScrapeMetrics(metrics);
  if (!text.ok()) return {-1, -1};
  return {MetricValue(*text, "berth_plan_seconds_sum").value_or(-1),
          MetricValue(*text, "berth_plan_seconds_count").value_or(-1)};
}

v1::JobSpec HeldJob(int64_t n, const std::string& image, const std::string& pool) {
  v1::JobSpec j;
  j.set_id(absl::StrCat("held-", n));
  j.set_workspace(absl::StrCat("ws", n % 20));
  j.set_action(absl::StrCat("action-", n % 7));
  j.set_image(image);
  j.add_argv("true");
  j.set_priority(static_cast<int32_t>(n % 10));
  j.set_pool(pool);
  j.mutable_resources()->set_cpu_millis(100 + 100 * (n % 4));
  j.mutable_resources()->set_memory_bytes((int64_t{64} << 20) * (1 + n % 4));
  j.mutable_expected_duration()->set_seconds(600);
  j.mutable_created_at()->set_seconds(1'800'000'000 + n / 100);
  return j;
}

v1::JobSpec RealJob(int64_t n, const std::string& image) {
  v1::JobSpec j;
  j.set_id(absl::StrCat("real-", n));
  j.set_workspace(absl::StrCat("ws", n % 20));
  j.set_action("soak-real");
  j.set_image(image);
  j.add_argv("sh");
  j.add_argv("-c");
  j.add_argv(absl::StrCat("sleep 1; echo soak job ", n));
  j.set_priority(9);
  j.mutable_resources()->set_cpu_millis(100);
  j.mutable_resources()->set_memory_bytes(int64_t{32} << 20);
  j.mutable_expected_duration()->set_seconds(2);
  j.mutable_created_at()->set_seconds(1'800'000'000 + n);
  return j;
}

bool Terminal(v1::JobState s) {
  return s == v1::JOB_STATE_SUCCEEDED || s == v1::JOB_STATE_FAILED ||
         s == v1::JOB_STATE_CANCELLED || s == v1::JOB_STATE_REJECTED;
}

std::unique_ptr<BerthClient> Connect(const SoakOptions& o, const std::string& token) {
  ClientOptions co;
  co.target = o.target;
  co.token = token;
  co.timeout = absl::Seconds(60);
  absl::StatusOr<std::unique_ptr<BerthClient>> c = BerthClient::Connect(co);
  return c.ok() ? *std::move(c) : nullptr;
}

struct Sample {
  double minute = 0, rss = -1, hwm = -1, data = -1, plan_ms = -1, sync_p50 = -1, sync_max = -1,
         read_p99 = -1;
  int threads = -1, fds = -1;
  int64_t reads = 0, events = 0, finished = 0, errors = 0;
};

void WriteOutputs(const SoakOptions& o, const std::vector<Sample>& samples) {
  std::ofstream csv(absl::StrCat(o.out_dir, "/soak.csv"));
  csv << "minute,rss_mib,vmhwm_mib,data_dir_mib,threads,fds,plan_pass_ms,sync_e2e_p50_ms,"
         "sync_e2e_max_ms,read_p99_ms,reads,events,real_jobs_finished,errors\n";
  for (const Sample& s : samples) {
    csv << absl::StrFormat("%.2f,%.1f,%.1f,%.1f,%d,%d,%.2f,%.1f,%.1f,%.2f,%d,%d,%d,%d\n",
                           s.minute, s.rss, s.hwm, s.data, s.threads, s.fds, s.plan_ms,
                           s.sync_p50, s.sync_max, s.read_p99, s.reads, s.events, s.finished,
                           s.errors);
  }
  plan::Chart chart;
  chart.title = "berthd soak";
  chart.subtitle = absl::StrFormat(
      "%d held jobs queued, %d arrive and as many are cancelled per sync, %d real container(s) "
      "per sync; a sync every %s, %d readers, 1 follower",
      o.queued, o.arrivals, o.real_per_sync, absl::FormatDuration(o.interval), o.readers);
  chart.x_label = "time since start (minutes)";
  chart.x_max = samples.empty() ? 1 : std::max(1.0, samples.back().minute);
  auto series = [&](const std::string& name, const std::string& color, auto field) {
    plan::Series s{name, color, {}};
    for (const Sample& x : samples) {
      const double v = field(x);
      if (v >= 0) s.points.emplace_back(x.minute, v);
    }
    return s;
  };
  chart.panels.push_back({"berthd memory", "MiB", -1, "",
                          {series("VmRSS", "#1f77b4", [](const Sample& x) { return x.rss; }),
                           series("VmHWM", "#aec7e8", [](const Sample& x) { return x.hwm; })}});
  chart.panels.push_back({"data dir (store + job logs)", "MiB", -1, "",
                          {series("size", "#2ca02c", [](const Sample& x) { return x.data; })}});
  chart.panels.push_back(
      {"threads and file descriptors", "count", -1, "",
       {series("threads", "#9467bd", [](const Sample& x) { return double(x.threads); }),
        series("fds", "#8c564b", [](const Sample& x) { return double(x.fds); })}});
  chart.panels.push_back(
      {"latency", "ms", -1, "",
       {series("plan pass (mean)", "#ff7f0e", [](const Sample& x) { return x.plan_ms; }),
        series("sync end to end (p50)", "#d62728", [](const Sample& x) { return x.sync_p50; }),
        series("reads (p99)", "#17becf", [](const Sample& x) { return x.read_p99; })}});
  std::ofstream(absl::StrCat(o.out_dir, "/soak.svg")) << plan::RenderChartSvg(chart);
}

}  // namespace

int RunSoak(const SoakOptions& o) {
  std::unique_ptr<BerthClient> pusher = Connect(o, o.token);
  std::unique_ptr<BerthClient> op = Connect(o, o.operator_token);
  if (pusher == nullptr || op == nullptr) {
    return LoadFail("connect", absl::UnavailableError(o.target));
  }
  const std::string held_pool = "database";
  v1::SetPoolMaintenanceRequest m;
  m.set_pool(held_pool);
  m.set_in_maintenance(true);
  m.set_reason("berth-load soak: held jobs wait");
  if (absl::Status s = op->SetPoolMaintenance(m).status(); !s.ok()) {
    return LoadFail("SetPoolMaintenance", s);
  }
  SoakStats stats;
  std::atomic<bool> stop{false};
  absl::Mutex ids_mu;
  std::vector<int64_t> held;  // guarded by ids_mu (readers pick from it)

  // The follower: every event once, in revision order.
  std::thread follower([&] {
    std::unique_ptr<BerthClient> c = Connect(o, o.token);
    uint64_t last = 0;
    while (!stop) {
      absl::Status s = c->Watch(last, [&](const v1::Event& e) {
        if (last != 0 && e.revision() != last + 1) {
          stats.Error("follower", absl::StrCat("revision ", e.revision(), " after ", last));
        }
        last = e.revision();
        stats.Event();
        if (absl::StartsWith(e.job_id(), "real-") && Terminal(e.state())) {
          stats.Finished(e.job_id());
        }
        return !stop.load();
      }, absl::Now() + absl::Seconds(30));
      if (!s.ok() && s.code() != absl::StatusCode::kDeadlineExceeded) {
        stats.Error("follower", s.ToString());
      }
      // Watch again after the last event seen (from_revision is exclusive).
    }
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < o.readers; ++r) {
    readers.emplace_back([&, r] {
      std::unique_ptr<BerthClient> c = Connect(o, o.token);
      absl::BitGen gen;
      for (int64_t i = r; !stop; ++i) {
        const absl::Time t0 = absl::Now();
        absl::Status s;
        if (i % 3 == 0) {
          s = c->GetPlan(100).status();
        } else if (i % 3 == 1) {
          int64_t n = -1;
          {
            absl::MutexLock l(&ids_mu);
            if (!held.empty()) n = held[absl::Uniform<size_t>(gen, 0, held.size())];
          }
          s = n < 0 ? absl::OkStatus() : c->ExplainJob(absl::StrCat("held-", n)).status();
          // Cancelled between the pick and the call: not an error.
          if (s.code() == absl::StatusCode::kNotFound) s = absl::OkStatus();
        } else {
          v1::ListJobsRequest req;
          req.set_page_size(100);
          req.add_states(v1::JOB_STATE_QUEUED);
          req.set_workspace(absl::StrCat("ws", absl::Uniform(gen, 0, 20)));
          s = c->ListJobs(req).status();
        }
        stats.Read(LoadMs(absl::Now() - t0));
        if (!s.ok()) stats.Error("read", s.ToString());
        absl::SleepFor(absl::Milliseconds(5));  // a reader's think time, not synchronisation
      }
    });
  }

  // The sampler.
  std::vector<Sample> samples;
  absl::Notification done;
  const absl::Time began = absl::Now();
  std::thread sampler([&] {
    std::pair<double, double> plan0 = PlanSeconds(o.metrics);
    while (!done.WaitForNotificationWithTimeout(o.sample_every)) {
      SoakStats::Window w = stats.Take();
      Sample s;
      s.minute = absl::ToDoubleMinutes(absl::Now() - began);
      s.rss = ProcStatusMiB(o.berthd_pid, "VmRSS");
      s.hwm = ProcStatusMiB(o.berthd_pid, "VmHWM");
      s.threads = CountThreads(o.berthd_pid);
      s.fds = CountFds(o.berthd_pid);
      s.data = o.data_dir.empty() ? -1 : DirMiB(o.data_dir);
      const std::pair<double, double> plan1 = PlanSeconds(o.metrics);
      if (plan0.second >= 0 && plan1.second > plan0.second) {
        s.plan_ms = 1000 * (plan1.first - plan0.first) / (plan1.second - plan0.second);
      }
      plan0 = plan1;
      s.reads = static_cast<int64_t>(w.read_ms.size());
      s.read_p99 = Quantile(w.read_ms, 0.99);
      s.sync_p50 = Quantile(w.sync_ms, 0.5);
      s.sync_max = w.sync_ms.empty() ? -1 : w.sync_ms.back();
      s.events = w.events;
      s.finished = w.finished_total;
      for (const auto& [k, v] : w.errors) s.errors += v;
      std::printf("%6.1f min  RSS %6.1f MiB (HWM %6.1f)  data %7.1f MiB  threads %3d  fds %3d  "
                  "plan %6.1f ms  sync p50 %6.1f ms  reads %6ld p99 %6.1f ms  events %6ld  "
                  "real done %5ld  errors %ld\n",
                  s.minute, s.rss, s.hwm, s.data, s.threads, s.fds, s.plan_ms, s.sync_p50,
                  static_cast<long>(s.reads), s.read_p99, static_cast<long>(s.events),
                  static_cast<long>(s.finished), static_cast<long>(s.errors));
      std::fflush(stdout);
      samples.push_back(s);
      WriteOutputs(o, samples);
    }
  });

  // The job-server.
  absl::BitGen gen;
  int64_t next_held = 0, next_real = 0;
  std::set<int64_t> real;
  std::map<int64_t, int32_t> priority_bump;  // held job -> added priority
  uint64_t generation = static_cast<uint64_t>(absl::ToUnixMillis(absl::Now()));
  const absl::Time deadline = began + o.duration;
  while (absl::Now() < deadline) {
    const absl::Time next = absl::Now() + o.interval;
    {
      absl::MutexLock l(&ids_mu);
      const int arrive = held.empty() ? o.queued : o.arrivals;
      for (int k = 0; k < arrive; ++k) held.push_back(next_held++);
      while (static_cast<int>(held.size()) > o.queued) {  // cancelled by their owners
        const size_t victim = absl::Uniform<size_t>(gen, 0, held.size());
        priority_bump.erase(held[victim]);
        held[victim] = held.back();
        held.pop_back();
      }
      for (int k = 0; k < o.queued / 100; ++k) {  // 1% re-prioritised
        ++priority_bump[held[absl::Uniform<size_t>(gen, 0, held.size())]];
      }
    }
    for (const std::string& id : stats.TakeFinished()) {
      int64_t n = 0;
      if (absl::SimpleAtoi(absl::string_view(id).substr(5), &n)) real.erase(n);
    }
    for (int k = 0; k < o.real_per_sync; ++k) real.insert(next_real++);
    v1::Snapshot snap;
    snap.set_generation(++generation);
    {
      absl::MutexLock l(&ids_mu);
      for (int64_t n : held) {
        v1::JobSpec* j = snap.add_jobs();
        *j = HeldJob(n, o.image, held_pool);
        auto bump = priority_bump.find(n);
        if (bump != priority_bump.end()) j->set_priority(j->priority() + bump->second);
      }
    }
    for (int64_t n : real) *snap.add_jobs() = RealJob(n, o.image);
    absl::StatusOr<SyncTiming> t = TimedSync(*pusher, SnapshotMessages(snap, 1000));
    if (t.ok()) {
      stats.Sync(LoadMs(t->end_to_end));
    } else {
      stats.Error("sync", t.status().ToString());
    }
    const absl::Duration wait = next - absl::Now();
    if (wait > absl::ZeroDuration()) absl::SleepFor(wait);
  }
  stop = true;
  done.Notify();
  sampler.join();
  for (std::thread& t : readers) t.join();
  follower.join();

  int64_t errors = 0;
  for (const auto& [k, v] : stats.Take().errors) {
    errors += v;
    std::printf("%s errors: %ld\n", k.c_str(), static_cast<long>(v));
  }
  for (const std::string& e : stats.ErrorSamples()) std::printf("  error: %s\n", e.c_str());
  WriteOutputs(o, samples);
  std::printf("%s: %zu samples, %ld errors; %s/soak.csv and soak.svg written\n",
              errors == 0 ? "OK" : "ERRORS", samples.size(), static_cast<long>(errors),
              o.out_dir.c_str());
  return errors == 0 ? 0 : 1;
}

}  // namespace berth
