#include "tools/plan/input.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/util/json_util.h"
#include "planner/convert/convert.h"
#include "planner/base/status_macros.h"
#include "planner/base/proto_json.h"
#include "tools/base/large_document.h"
#include "tools/base/large_json.h"
#include "tools/plan/fast_workload.h"
#include "tools/plan/looks_like_snapshot.h"
#include "tools/plan/memory.h"

namespace berth {
namespace plan {
namespace {

constexpr size_t kMaxProblems = 10;

bool ValidId(absl::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

std::string Where(const std::string& list, int index, const std::string& id) {
  if (id.empty()) return absl::StrCat(list, "[", index, "]: ");
  return absl::StrCat("job '", id, "' (", list, "[", index, "]): ");
}

// Where(list, index, id), written only when a problem is reported (a million
// jobs need no million strings).
struct JobAt {
  const char* list;
  int index;
  const std::string* id;
  std::string Text() const { return Where(list, index, *id); }
};

class Problems {
 public:
  explicit Problems(std::string path) : path_(std::move(path)) {}
  void Add(std::string where, std::string what) {
    ++count_;
    if (lines_.size() < kMaxProblems) {
      lines_.push_back(absl::StrCat(path_, ": ", where, what));
    }
  }
  void Add(const JobAt& where, std::string what) {
    Add(where.Text(), std::move(what));
  }
  absl::Status status() const {
    if (count_ == 0) return absl::OkStatus();
    std::string msg = absl::StrJoin(lines_, "\n");
    if (count_ > lines_.size()) {
      absl::StrAppend(&msg, "\n", path_, ": ... and ", count_ - lines_.size(),
                      " more problems");
    }
    return absl::InvalidArgumentError(msg);
  }

 private:
  std::string path_;
  std::vector<std::string> lines_;
  size_t count_ = 0;
};

// Checks one spec; `field_prefix` is "spec." for workload jobs.
void CheckSpec(const v1::JobSpec& s, const JobAt& where,
               const std::string& prefix, Problems& p) {
  if (!ValidId(s.id())) {
    p.Add(where, absl::StrCat(prefix, "id \"", s.id(),
                              "\" must be 1-128 characters of [A-Za-z0-9._-]"));
  }
  if (s.workspace().empty()) p.Add(where, absl::StrCat(prefix, "workspace is empty"));
  if (s.resources().cpu_millis() <= 0) {
    p.Add(where, absl::StrCat(prefix, "resources.cpuMillis must be > 0, got ",
                              s.resources().cpu_millis()));
  }
  if (s.resources().memory_bytes() <= 0) {
    p.Add(where, absl::StrCat(prefix, "resources.memoryBytes must be > 0, got ",
                              s.resources().memory_bytes()));
  }
  if (s.has_expected_duration() &&
      planner::FromProto(s.expected_duration()) <= absl::ZeroDuration()) {
    p.Add(where, absl::StrCat(prefix, "expectedDuration must be > 0 when set"));
  }
  if (s.has_max_duration() &&
      planner::FromProto(s.max_duration()) <= absl::ZeroDuration()) {
    p.Add(where, absl::StrCat(prefix, "maxDuration must be > 0 when set"));
  }
}

// Dependencies: known ids (of the file's jobs or its running jobs), no
// cycles.
void CheckDependencies(const PlanInput& in, Problems& problems) {
  const bool any_dependency = std::any_of(in.sim.jobs.begin(), in.sim.jobs.end(),
                                          [](const planner::SimJob& j) {
                                            return !j.job.depends_on.empty();
                                          });
  if (!any_dependency) return;
  absl::flat_hash_set<absl::string_view> running;
  for (const planner::RunningJob& r : in.sim.running) running.insert(r.id);
  absl::flat_hash_map<absl::string_view, size_t> index;
  index.reserve(in.sim.jobs.size());
  for (size_t i = 0; i < in.sim.jobs.size(); ++i) index.emplace(in.sim.jobs[i].job.id, i);
  const std::string list = "jobs";
  for (size_t i = 0; i < in.sim.jobs.size(); ++i) {
    const planner::QueuedJob& q = in.sim.jobs[i].job;
    for (const std::string& d : q.depends_on) {
      if (!index.contains(d) && !running.contains(d)) {
        problems.Add(Where(list, static_cast<int>(i), q.id),
                     absl::StrCat("dependsOn '", d, "' is not a job of this file"));
      }
    }
  }
  // Cycle detection: iterative colouring DFS.
  std::vector<uint8_t> colour(in.sim.jobs.size(), 0);
  for (size_t root = 0; root < in.sim.jobs.size(); ++root) {
    if (colour[root]) continue;
    std::vector<std::pair<size_t, size_t>> stack = {{root, 0}};
    colour[root] = 1;
    while (!stack.empty()) {
      auto& [i, k] = stack.back();
      const auto& deps = in.sim.jobs[i].job.depends_on;
      if (k == deps.size()) {
        colour[i] = 2;
        stack.pop_back();
        continue;
      }
      auto it = index.find(deps[k++]);
      if (it == index.end()) continue;
      if (colour[it->second] == 1) {
        problems.Add(Where(list, static_cast<int>(i), in.sim.jobs[i].job.id),
                     absl::StrCat("dependsOn '", in.sim.jobs[it->second].job.id,
                                  "' forms a dependency cycle"));
      } else if (colour[it->second] == 0) {
        colour[it->second] = 1;
        stack.push_back({it->second, 0});
      }
    }
  }
}

absl::Duration MaxDuration(const v1::JobSpec& s) {
  return s.has_max_duration() ? planner::FromProto(s.max_duration()) : absl::ZeroDuration();
}

}  // namespace

absl::StatusOr<PlanInput> LoadPlanInput(const std::string& path, bool fast_reader) {
  // Mapped, not copied, and parsed onto one arena of huge pages: a million
  // jobs are ~200 MB of JSON and ~5M messages (docs/BENCHMARKS.md).
  ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> file, MappedFile::Open(path));
  const absl::string_view json = file->contents();
  if (fast_reader) {
    // Plain, valid workloads straight into the planner's jobs; anything
    // else (and any problem) is read below, which names it. The fast reader
    // takes no snapshot (it refuses a snapshot's top-level keys and a job
    // without "spec"), so the scan below is left to the files it declines.
    PlanInput fast;
    fast.path = path;
    if (FastLoadWorkload(json, &fast)) {
      Problems problems(path);
      CheckDependencies(fast, problems);
      if (problems.status().ok()) return fast;
    }
  }
  const bool is_snapshot = LooksLikeSnapshot(json);
  const std::unique_ptr<google::protobuf::Arena> arena = NewLargeDocumentArena();
  PlanInput in;
  in.path = path;
  std::vector<const v1::JobSpec*> specs;
  std::vector<std::string> list_names;
  v1::Workload& workload = *google::protobuf::Arena::CreateMessage<v1::Workload>(arena.get());
  v1::Snapshot& snapshot = *google::protobuf::Arena::CreateMessage<v1::Snapshot>(arena.get());
  if (is_snapshot) {
    in.is_snapshot = true;
    if (absl::Status parsed = ParseLargeJsonMessage(json, path, LargeJsonOptions(), &snapshot);
        !parsed.ok()) {
      // A workload whose jobs were written as a snapshot's reads as a
      // snapshot, whose only complaint is then a workload's own top-level
      // field: say which format was read and where the formats differ.
      bool workload_field = false;
      for (absl::string_view key : {"budgets", "running", "startTime", "start_time",
                                    "description", "plannerMemory", "planner_memory"}) {
        workload_field |= absl::StrContains(
            parsed.message(), absl::StrCat(path, ": ", key, ": Cannot find field"));
      }
      if (!workload_field) return parsed;
      return absl::InvalidArgumentError(absl::StrCat(
          parsed.message(),
          " (read as a snapshot, since its jobs carry \"id\" themselves; a snapshot has "
          "\"generation\" and \"jobs\" only, while a workload's jobs are {\"spec\": {...}} "
          "beside \"budgets\", \"running\", \"startTime\")"));
    }
    absl::Time start = absl::UnixEpoch();
    for (const v1::JobSpec& s : snapshot.jobs()) {
      if (s.has_created_at()) start = std::max(start, planner::FromProto(s.created_at()));
    }
    in.sim.start = start;
    in.description = absl::StrCat("snapshot generation ", snapshot.generation());
  } else {
    RETURN_IF_ERROR(ParseLargeJsonMessage(json, path, LargeJsonOptions(), &workload));
    if (workload.has_start_time()) {
      in.sim.start = planner::FromProto(workload.start_time());
    } else {
      in.start_from_file_times = true;
      absl::Time start = absl::UnixEpoch();
      for (const v1::WorkloadJob& j : workload.jobs()) {
        if (j.spec().has_created_at()) {
          start = std::max(start, planner::FromProto(j.spec().created_at()));
        }
        if (j.has_queued_at()) start = std::max(start, planner::FromProto(j.queued_at()));
      }
      for (const v1::RunningJob& r : workload.running()) {
        if (r.has_started_at()) start = std::max(start, planner::FromProto(r.started_at()));
      }
      in.sim.start = start;
    }
    in.description = workload.description();
    if (workload.has_budgets()) {
      in.has_file_budgets = true;
      in.file_budgets = planner::FromProto(workload.budgets());
    }
  }

  Problems problems(path);
  // id -> where it is first used (the ids live in the parsed message).
  absl::flat_hash_map<absl::string_view, JobAt> seen;
  seen.reserve(static_cast<size_t>(workload.jobs_size() + workload.running_size() +
                                   snapshot.jobs_size()));
  auto check_unique = [&](const std::string& id, const JobAt& where) {
    if (id.empty()) return;
    auto [it, inserted] = seen.emplace(id, where);
    if (!inserted) {
      const std::string first = it->second.Text();
      problems.Add(where, absl::StrCat("duplicate id (first used at ",
                                       first.substr(0, first.size() - 2), ")"));
    }
  };
  in.sim.jobs.reserve(static_cast<size_t>(workload.jobs_size() + snapshot.jobs_size()));
  in.actuals.reserve(in.sim.jobs.capacity());
  if (in.is_snapshot) {
    for (int i = 0; i < snapshot.jobs_size(); ++i) {
      const v1::JobSpec& s = snapshot.jobs(i);
      const JobAt where{"jobs", i, &s.id()};
      CheckSpec(s, where, "", problems);
      check_unique(s.id(), where);
      planner::SimJob job;
      job.job = planner::ToQueuedJob(s);
      job.max_duration = MaxDuration(s);
      in.actuals.push_back({s.action(), 0});
      in.sim.jobs.push_back(std::move(job));
    }
  } else {
    for (int i = 0; i < workload.running_size(); ++i) {
      const v1::RunningJob& r = workload.running(i);
      const JobAt where{"running", i, &r.spec().id()};
      CheckSpec(r.spec(), where, "spec.", problems);
      check_unique(r.spec().id(), where);
      absl::Time started =
          r.has_started_at() ? planner::FromProto(r.started_at()) : in.sim.start;
      in.sim.running.push_back(planner::ToRunningJob(r.spec(), started));
      in.sim.running.back().node = r.node();
    }
    for (int i = 0; i < workload.jobs_size(); ++i) {
      const v1::WorkloadJob& j = workload.jobs(i);
      const JobAt where{"jobs", i, &j.spec().id()};
      CheckSpec(j.spec(), where, "spec.", problems);
      check_unique(j.spec().id(), where);
      planner::SimJob job;
      job.job = planner::ToQueuedJob(j.spec());
      job.max_duration = MaxDuration(j.spec());
      job.arrival_offset = planner::FromProto(j.arrival_offset());
      if (job.arrival_offset < absl::ZeroDuration()) {
        problems.Add(where, "arrivalOffset must not be negative");
      }
      if (j.has_actual_duration()) {
        job.actual_duration = planner::FromProto(j.actual_duration());
        if (job.actual_duration <= absl::ZeroDuration()) {
          problems.Add(where, "actualDuration must be > 0 when set");
        }
      }
      job.fails = j.fails();
      if (j.actual_peak_memory_bytes() < 0) {
        problems.Add(where, "actualPeakMemoryBytes must not be negative");
      }
      if (j.has_queued_at()) {
        job.job.queued_at = planner::FromProto(j.queued_at());
        if (job.job.queued_at > in.sim.start + job.arrival_offset) {
          problems.Add(where, absl::StrCat("queuedAt ", absl::FormatTime(job.job.queued_at),
                                           " is after its arrival (startTime + arrivalOffset)"));
        }
      }
      in.actuals.push_back({j.spec().action(), j.actual_peak_memory_bytes()});
      in.sim.jobs.push_back(std::move(job));
    }
    if (workload.has_planner_memory()) {
      std::vector<std::string> bad;
      MemoryFromProto(workload.planner_memory(), in.sim, &in.sim.memory, &bad);
      for (std::string& b : bad) problems.Add("", std::move(b));
    }
  }
  if (in.sim.jobs.empty() && in.sim.running.empty()) {
    problems.Add("", "no jobs: the file has neither \"jobs\" nor \"running\"");
  }
  CheckDependencies(in, problems);
  RETURN_IF_ERROR(problems.status());
  return in;
}

absl::Status ValidateBudgets(const planner::Budgets& b, absl::string_view source) {
  std::vector<std::string> bad;
  if (b.memory_bytes <= 0) bad.push_back(absl::StrCat("memory must be > 0, got ", b.memory_bytes));
  if (b.cpu_millis <= 0) bad.push_back(absl::StrCat("cpu must be > 0, got ", b.cpu_millis, "m"));
  if (b.max_workers <= 0) {
    bad.push_back(absl::StrCat("max workers must be > 0, got ", b.max_workers));
  }
  if (b.workspace_max_workers < 0) {
    bad.push_back(absl::StrCat("workspace max must be >= 0, got ", b.workspace_max_workers));
  }
  std::vector<std::string> pools;
  for (const auto& [name, max] : b.pool_max_workers) {
    if (max < 0) pools.push_back(absl::StrCat("pool '", name, "' max must be >= 0, got ", max));
  }
  std::sort(pools.begin(), pools.end());
  bad.insert(bad.end(), pools.begin(), pools.end());
  if (bad.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(source, ": budgets: ", absl::StrJoin(bad, "; ")));
}

absl::Status CheckPoolsKnown(const PlanInput& in, const planner::Budgets& b) {
  Problems problems(in.path);
  auto known = [&](const std::string& pool) {
    return pool == planner::kDefaultPool || b.pool_max_workers.contains(pool);
  };
  auto hint = [&](const std::string& pool) {
    return absl::StrCat("pool '", pool, "' has no budget; add --pool-max ", pool, "=N");
  };
  for (size_t i = 0; i < in.sim.running.size(); ++i) {
    const auto& r = in.sim.running[i];
    if (!known(r.pool)) problems.Add(Where("running", static_cast<int>(i), r.id), hint(r.pool));
  }
  for (size_t i = 0; i < in.sim.jobs.size(); ++i) {
    const auto& q = in.sim.jobs[i].job;
    if (!known(q.pool)) problems.Add(Where("jobs", static_cast<int>(i), q.id), hint(q.pool));
  }
  return problems.status();
}

}  // namespace plan
}  // namespace berth
