#include "tools/plan/examples_gen.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "google/protobuf/util/json_util.h"
#include "planner/base/status_macros.h"

namespace berth {
namespace plan {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kMi = int64_t{1} << 20;
constexpr char kImage[] = "registry.example/job-runner:v3";

// SplitMix64: tiny, fast, and the same on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [lo, hi].
  int64_t Between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  // Standard normal (Box-Muller).
  double Normal() {
    double u1 = 1.0 - Uniform();  // (0, 1]
    double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }
  // Log-normal with the given median and sigma (of the underlying normal).
  double LogNormal(double median, double sigma) {
    return median * std::exp(sigma * Normal());
  }
  template <typename T>
  const T& Pick(const std::vector<std::pair<T, int>>& weighted) {
    int total = 0;
    for (const auto& [v, w] : weighted) total += w;
    int64_t r = Between(0, total - 1);
    for (const auto& [v, w] : weighted) {
      if (r < w) return v;
      r -= w;
    }
    return weighted.back().first;
  }

 private:
  uint64_t state_;
};

int64_t UnixSeconds(int y, int mo, int d, int h) {
  return absl::ToUnixSeconds(
      absl::FromCivil(absl::CivilSecond(y, mo, d, h, 0, 0), absl::UTCTimeZone()));
}

void SetBudgets(v1::Budgets* b, int64_t memory, int64_t cpu_millis,
                int32_t workers, int32_t database_max, int32_t workspace_max) {
  b->set_memory_bytes(memory);
  b->set_cpu_millis(cpu_millis);
  b->set_max_workers(workers);
  (*b->mutable_pools())["database"].set_max_workers(database_max);
  b->set_workspace_max_workers(workspace_max);
}

struct JobParams {
  std::string id;
  std::string workspace;
  std::string action;
  int32_t priority = 0;
  int64_t cpu_millis = 1000;
  int64_t memory_bytes = kGi;
  std::string pool;  // empty = default
  int64_t expected_s = 600;
  int64_t actual_s = 0;  // 0 = same as expected
  int64_t arrival_s = 0;
  bool fails = false;
  std::vector<std::string> depends_on;
};

void AddJob(v1::Workload* w, const JobParams& p) {
  v1::WorkloadJob* job = w->add_jobs();
  v1::JobSpec* s = job->mutable_spec();
  s->set_id(p.id);
  s->set_workspace(p.workspace);
  s->set_action(p.action);
  s->set_image(kImage);
  s->set_priority(p.priority);
  s->mutable_resources()->set_cpu_millis(p.cpu_millis);
  s->mutable_resources()->set_memory_bytes(p.memory_bytes);
  if (!p.pool.empty()) s->set_pool(p.pool);
  s->mutable_expected_duration()->set_seconds(p.expected_s);
  for (const std::string& d : p.depends_on) s->add_depends_on(d);
  s->mutable_created_at()->set_seconds(w->start_time().seconds() + p.arrival_s);
  if (p.arrival_s > 0) job->mutable_arrival_offset()->set_seconds(p.arrival_s);
  if (p.actual_s > 0 && p.actual_s != p.expected_s) {
    job->mutable_actual_duration()->set_seconds(p.actual_s);
  }
  if (p.fails) job->set_fails(true);
}

int64_t ClampSeconds(double s, int64_t lo, int64_t hi) {
  return std::clamp<int64_t>(static_cast<int64_t>(std::llround(s)), lo, hi);
}

}  // namespace

v1::Workload BurstWorkload(uint64_t seed) {
  Rng rng(seed);
  v1::Workload w;
  w.set_description(
      "Highly parallel burst: 3 projects submit 40 jobs of 4 GiB each within "
      "ten minutes, on top of background work of mixed sizes");
  w.mutable_start_time()->set_seconds(UnixSeconds(2026, 11, 23, 9));
  SetBudgets(w.mutable_budgets(), 256 * kGi, 32000, 24, 4, 0);
  // Two background jobs already running.
  for (int i = 0; i < 2; ++i) {
    v1::RunningJob* r = w.add_running();
    v1::JobSpec* s = r->mutable_spec();
    s->set_id(absl::StrCat("bg-running.train-", i + 1));
    s->set_workspace("bg-running");
    s->set_action("train");
    s->set_image(kImage);
    s->set_priority(1);
    s->mutable_resources()->set_cpu_millis(4000);
    s->mutable_resources()->set_memory_bytes(32 * kGi);
    s->mutable_expected_duration()->set_seconds(3600);
    r->mutable_started_at()->set_seconds(w.start_time().seconds() - 1200 * (i + 1));
  }
  std::vector<JobParams> jobs;
  const char* projects[] = {"proj-a", "proj-b", "proj-c"};
  for (int p = 0; p < 3; ++p) {
    for (int i = 0; i < 40; ++i) {
      JobParams j;
      j.id = absl::StrFormat("%s.model-%02d", projects[p], i + 1);
      j.workspace = projects[p];
      j.action = "fit-model";
      j.priority = 1;
      j.cpu_millis = 1000;
      j.memory_bytes = 4 * kGi;
      j.expected_s = 60 * rng.Between(20, 40);
      j.actual_s = ClampSeconds(j.expected_s * rng.LogNormal(1.0, 0.2), 60, 4 * 3600);
      j.arrival_s = p * 300 + i * 2;  // each project's burst within 80 s
      jobs.push_back(j);
    }
  }
  const std::vector<std::pair<int64_t, int>> sizes = {
      {2 * kGi, 4}, {8 * kGi, 3}, {16 * kGi, 3}, {32 * kGi, 2}, {48 * kGi, 1}};
  for (int i = 0; i < 40; ++i) {
    JobParams j;
    j.workspace = absl::StrFormat("bg-%02d", rng.Between(1, 8));
    bool db = rng.Uniform() < 0.15;
    j.action = db ? "db-extract" : "report";
    j.id = absl::StrFormat("%s.%s-%02d", j.workspace, j.action, i + 1);
    j.pool = db ? "database" : "";
    j.priority = static_cast<int32_t>(rng.Between(0, 2));
    j.memory_bytes = rng.Pick(sizes);
    j.cpu_millis = 500 * rng.Between(1, 8);
    j.expected_s = ClampSeconds(rng.LogNormal(1800, 0.6), 120, 4 * 3600);
    j.actual_s = ClampSeconds(j.expected_s * rng.LogNormal(1.0, 0.3), 60, 8 * 3600);
    j.arrival_s = rng.Between(0, 2 * 3600);
    jobs.push_back(j);
  }
  std::stable_sort(jobs.begin(), jobs.end(), [](const JobParams& a, const JobParams& b) {
    return a.arrival_s < b.arrival_s;
  });
  for (const JobParams& j : jobs) AddJob(&w, j);
  return w;
}

v1::Workload MixedWeekWorkload(uint64_t seed, int min_jobs, int workspaces, int days) {
  Rng rng(seed);
  v1::Workload w;
  w.set_description(absl::StrCat(
      days == 7 ? "Mixed week: " : absl::StrCat("Mixed ", days, " days: "), min_jobs,
      "+ jobs from ", workspaces,
      " workspaces, log-normal durations, 10% database pool, dependency "
      "chains"));
  w.mutable_start_time()->set_seconds(UnixSeconds(2026, 11, 23, 0));
  SetBudgets(w.mutable_budgets(), 256 * kGi, 32000, 24, 4, 8);
  const std::vector<std::pair<int64_t, int>> sizes = {
      {512 * kMi, 10}, {kGi, 20}, {2 * kGi, 25}, {4 * kGi, 20},
      {8 * kGi, 13},   {16 * kGi, 8}, {32 * kGi, 3}, {64 * kGi, 1}};
  const std::vector<std::pair<int32_t, int>> priorities = {
      {0, 30}, {1, 45}, {2, 20}, {3, 5}};
  const std::vector<std::pair<std::string, int>> actions = {
      {"cohort-extraction", 5}, {"generate-measures", 4}, {"analysis", 6},
      {"report", 3}};
  struct Request {
    int64_t arrival_s;
    std::vector<JobParams> jobs;
  };
  std::vector<Request> requests;
  int total = 0;
  int counter = 0;
  while (total < min_jobs) {
    // Arrival: a day of the week (weekends quieter), working hours busier.
    int64_t day;
    do {
      day = rng.Between(0, days - 1);
    } while (day % 7 >= 5 && rng.Uniform() > 0.3);
    int64_t second_of_day = rng.Uniform() < 0.8 ? rng.Between(8 * 3600, 18 * 3600 - 1)
                                               : rng.Between(0, 24 * 3600 - 1);
    Request req;
    req.arrival_s = day * 86400 + second_of_day;
    std::string ws = absl::StrFormat("ws-%03d", rng.Between(1, workspaces));
    int length = rng.Uniform() < 0.7 ? 1 : static_cast<int>(rng.Between(2, 5));
    int32_t priority = rng.Pick(priorities);
    for (int k = 0; k < length; ++k) {
      JobParams j;
      j.workspace = ws;
      bool db = rng.Uniform() < 0.1;
      j.pool = db ? "database" : "";
      j.action = db ? "db-query" : rng.Pick(actions);
      j.id = absl::StrFormat("%s.%s-%05d", ws, j.action, ++counter);
      j.priority = priority;
      j.memory_bytes = rng.Pick(sizes);
      j.cpu_millis = 250 * rng.Between(1, 16);
      j.expected_s = ClampSeconds(rng.LogNormal(900, 1.1), 30, 12 * 3600);
      j.actual_s = ClampSeconds(j.expected_s * rng.LogNormal(1.0, 0.35), 10, 24 * 3600);
      j.arrival_s = req.arrival_s;
      j.fails = rng.Uniform() < 0.03;
      if (k > 0) j.depends_on.push_back(req.jobs.back().id);
      req.jobs.push_back(j);
    }
    total += length;
    requests.push_back(std::move(req));
  }
  std::stable_sort(requests.begin(), requests.end(),
                   [](const Request& a, const Request& b) {
                     return a.arrival_s < b.arrival_s;
                   });
  for (const Request& r : requests) {
    for (const JobParams& j : r.jobs) AddJob(&w, j);
  }
  return w;
}

v1::Workload StarvationWorkload(uint64_t seed) {
  Rng rng(seed);
  v1::Workload w;
  w.set_description(
      "Big-job starvation: one job needing 200 of 256 GiB arrives behind 400 "
      "small jobs that keep arriving for four hours");
  w.mutable_start_time()->set_seconds(UnixSeconds(2026, 11, 24, 9));
  SetBudgets(w.mutable_budgets(), 256 * kGi, 32000, 24, 4, 0);
  std::vector<JobParams> jobs;
  for (int i = 0; i < 400; ++i) {
    JobParams j;
    j.workspace = absl::StrFormat("small-%02d", rng.Between(1, 10));
    j.action = "score";
    j.id = absl::StrFormat("%s.score-%03d", j.workspace, i + 1);
    j.priority = 1;
    j.cpu_millis = 1000;
    j.memory_bytes = 4 * kGi;
    j.expected_s = 60 * rng.Between(5, 15);
    j.arrival_s = i * 36 + rng.Between(0, 35);
    jobs.push_back(j);
  }
  JobParams big;
  big.id = "big-model.fit-1";
  big.workspace = "big-model";
  big.action = "fit";
  big.priority = 1;
  big.cpu_millis = 8000;
  big.memory_bytes = 200 * kGi;
  big.expected_s = 2 * 3600;
  big.arrival_s = 600;
  jobs.push_back(big);
  std::stable_sort(jobs.begin(), jobs.end(), [](const JobParams& a, const JobParams& b) {
    return a.arrival_s < b.arrival_s;
  });
  for (const JobParams& j : jobs) AddJob(&w, j);
  return w;
}

absl::StatusOr<std::string> WorkloadToJsonLines(const v1::Workload& workload) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = false;
  auto to_json = [&](const google::protobuf::Message& m) -> absl::StatusOr<std::string> {
    std::string out;
    auto status = google::protobuf::util::MessageToJsonString(m, &out, options);
    if (!status.ok()) {
      return absl::InternalError(absl::StrCat(
          "cannot serialise ", m.GetTypeName(), ": ",
          std::string(status.message().data(), status.message().size())));
    }
    return out;
  };
  // Everything but the jobs on the first lines, then one job per line.
  v1::Workload head = workload;
  head.clear_jobs();
  head.clear_running();
  ASSIGN_OR_RETURN(std::string head_json, to_json(head));
  // head_json is "{...}"; reopen it to append the lists.
  std::string out = head_json.substr(0, head_json.size() - 1);
  auto append_list = [&](const char* name, const auto& list) -> absl::Status {
    if (list.empty()) return absl::OkStatus();
    absl::StrAppend(&out, ",\n\"", name, "\": [");
    bool first = true;
    for (const auto& item : list) {
      ASSIGN_OR_RETURN(std::string line, to_json(item));
      absl::StrAppend(&out, first ? "\n  " : ",\n  ", line);
      first = false;
    }
    absl::StrAppend(&out, "\n]");
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(append_list("running", workload.running()));
  RETURN_IF_ERROR(append_list("jobs", workload.jobs()));
  absl::StrAppend(&out, "\n}\n");
  return out;
}

absl::StatusOr<std::vector<ExampleFile>> ExampleFiles() {
  std::vector<ExampleFile> files;
  ASSIGN_OR_RETURN(std::string burst, WorkloadToJsonLines(BurstWorkload(1)));
  files.push_back({"burst.json", std::move(burst)});
  ASSIGN_OR_RETURN(std::string week,
                   WorkloadToJsonLines(MixedWeekWorkload(2, 2000, 60)));
  files.push_back({"week.json", std::move(week)});
  ASSIGN_OR_RETURN(std::string starvation,
                   WorkloadToJsonLines(StarvationWorkload(3)));
  files.push_back({"starvation.json", std::move(starvation)});
  return files;
}

}  // namespace plan
}  // namespace berth
