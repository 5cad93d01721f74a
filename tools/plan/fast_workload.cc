#include "tools/plan/fast_workload.h"

#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "berth/v1/files.pb.h"
#include "planner/base/proto_json.h"
#include "tools/plan/memory.h"
#include "planner/convert/convert.h"
#include "tools/base/json_time.h"

namespace berth {
namespace plan {
namespace {

// The DOM API: its parse is the library's, which picks the processor's
// fastest kernel at run time (the on-demand API is compiled into the caller
// for the processor the build targets).
using simdjson::dom::element_type;
using simdjson::dom::object;
using value = simdjson::dom::element;

absl::string_view A(std::string_view s) { return absl::string_view(s.data(), s.size()); }

bool ValidId(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      return false;
    }
  }
  return true;
}

// Marks key `bit` seen in `seen`; false if it was already (a repeated key,
// which the reference reader reports).
bool Once(uint32_t* seen, int bit) {
  const uint32_t m = uint32_t{1} << bit;
  if (*seen & m) return false;
  *seen |= m;
  return true;
}

bool String(value v, std::string_view* out) {
  return v.type() == element_type::STRING && !v.get_string().get(*out);
}

// An integer as a JSON number or a decimal string (the JSON mapping of
// int64 and int32), within [lo, hi].
bool Int(value v, int64_t lo, int64_t hi, int64_t* out) {
  const element_type t = v.type();
  if (t == element_type::STRING) {
    std::string_view s;
    if (v.get_string().get(s)) return false;
    const std::string_view digits = !s.empty() && s[0] == '-' ? s.substr(1) : s;
    if (!IsDecimalDigits(A(digits)) || !absl::SimpleAtoi(A(s), out)) return false;
  } else if (t == element_type::INT64) {
    if (v.get_int64().get(*out)) return false;
  } else {
    return false;
  }
  return *out >= lo && *out <= hi;
}

bool Duration(value v, absl::Duration* out) {
  std::string_view s;
  int64_t seconds = 0;
  int32_t nanos = 0;
  if (!String(v, &s) || !ParseJsonDuration(A(s), &seconds, &nanos)) return false;
  *out = absl::Seconds(seconds) + absl::Nanoseconds(nanos);
  return true;
}

bool Timestamp(value v, absl::Time* out) {
  std::string_view s;
  int64_t seconds = 0;
  int32_t nanos = 0;
  if (!String(v, &s) || !ParseJsonTimestamp(A(s), &seconds, &nanos)) return false;
  *out = absl::FromUnixSeconds(seconds) + absl::Nanoseconds(nanos);
  return true;
}

// Skips an array of strings (argv) or an object of string values (env,
// labels), checking the shape the reference reader accepts.
bool Strings(value v) {
  std::string_view s;
  simdjson::dom::array a;
  if (!v.get_array().get(a)) {
    for (value e : a) {
      if (!String(e, &s)) return false;
    }
    return true;
  }
  object o;
  if (v.get_object().get(o)) return false;
  for (auto [k, fv] : o) {
    if (!String(fv, &s)) return false;
  }
  return true;
}

bool Resources(value v, planner::Resources* r) {
  object o;
  if (v.get_object().get(o)) return false;
  uint32_t seen = 0;
  for (auto [k, fv] : o) {
    if (k == "cpuMillis" && Once(&seen, 0)) {
      if (!Int(fv, 1, std::numeric_limits<int64_t>::max(), &r->cpu_millis)) return false;
    } else if (k == "memoryBytes" && Once(&seen, 1)) {
      if (!Int(fv, 1, std::numeric_limits<int64_t>::max(), &r->memory_bytes)) return false;
    } else {
      return false;
    }
  }
  return r->cpu_millis > 0 && r->memory_bytes > 0;
}

bool Spec(value v, planner::SimJob* job, std::string* action) {
  object o;
  if (v.get_object().get(o)) return false;
  planner::QueuedJob& q = job->job;
  uint32_t seen = 0;
  std::string_view s;
  for (auto [k, fv] : o) {
    if (k == "id" && Once(&seen, 0)) {
      if (!String(fv, &s) || !ValidId(s)) return false;
      q.id.assign(s);
    } else if (k == "workspace" && Once(&seen, 1)) {
      if (!String(fv, &s) || s.empty()) return false;
      q.workspace.assign(s);
    } else if (k == "action" && Once(&seen, 2)) {
      if (!String(fv, &s)) return false;
      action->assign(s);
    } else if (k == "image" && Once(&seen, 3)) {
      if (!String(fv, &s)) return false;
    } else if (k == "argv" && Once(&seen, 4)) {
      if (!Strings(fv)) return false;
    } else if ((k == "env" && Once(&seen, 5)) || (k == "labels" && Once(&seen, 6))) {
      if (!Strings(fv)) return false;
    } else if (k == "priority" && Once(&seen, 7)) {
      int64_t p = 0;
      if (!Int(fv, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), &p)) {
        return false;
      }
      q.priority = static_cast<int32_t>(p);
    } else if (k == "resources" && Once(&seen, 8)) {
      if (!Resources(fv, &q.resources)) return false;
    } else if (k == "pool" && Once(&seen, 9)) {
      if (!String(fv, &s)) return false;
      q.pool = s.empty() ? std::string(planner::kDefaultPool) : std::string(s);
    } else if (k == "expectedDuration" && Once(&seen, 10)) {
      if (!Duration(fv, &q.expected_duration) || q.expected_duration <= absl::ZeroDuration()) {
        return false;
      }
    } else if (k == "maxDuration" && Once(&seen, 11)) {
      if (!Duration(fv, &job->max_duration) || job->max_duration <= absl::ZeroDuration()) {
        return false;
      }
    } else if (k == "dependsOn" && Once(&seen, 12)) {
      simdjson::dom::array a;
      if (fv.get_array().get(a)) return false;
      for (value e : a) {
        if (!String(e, &s)) return false;
        q.depends_on.emplace_back(s);
      }
    } else if (k == "createdAt" && Once(&seen, 13)) {
      if (!Timestamp(fv, &q.created_at)) return false;
    } else {
      return false;
    }
  }
  // Resources are required (> 0); id and workspace valid.
  return (seen & 0b100000011) == 0b100000011;
}

bool Job(value v, planner::SimJob* job, PlanInput::Actual* actual) {
  object o;
  if (v.get_object().get(o)) return false;
  uint32_t seen = 0;
  for (auto [k, fv] : o) {
    if (k == "spec" && Once(&seen, 0)) {
      if (!Spec(fv, job, &actual->action)) return false;
    } else if (k == "arrivalOffset" && Once(&seen, 1)) {
      if (!Duration(fv, &job->arrival_offset) || job->arrival_offset < absl::ZeroDuration()) {
        return false;
      }
    } else if (k == "actualDuration" && Once(&seen, 2)) {
      if (!Duration(fv, &job->actual_duration) || job->actual_duration <= absl::ZeroDuration()) {
        return false;
      }
    } else if (k == "fails" && Once(&seen, 3)) {
      if (fv.get_bool().get(job->fails)) return false;
    } else if (k == "actualPeakMemoryBytes" && Once(&seen, 4)) {
      if (!Int(fv, 0, std::numeric_limits<int64_t>::max(), &actual->peak_memory_bytes)) {
        return false;
      }
    } else if (k == "queuedAt" && Once(&seen, 5)) {
      if (!Timestamp(fv, &job->job.queued_at)) return false;
    } else {
      return false;
    }
  }
  return (seen & 1) != 0;
}

}  // namespace

bool FastLoadWorkload(absl::string_view json, PlanInput* in) {
  // simdjson reads up to SIMDJSON_PADDING bytes past the end: a copy with
  // that room (one pass over the bytes, far below the parse).
  const simdjson::padded_string padded(json.data(), json.size());
  simdjson::dom::parser parser;
  value doc;
  object top;
  if (parser.parse(padded).get(doc) || doc.get_object().get(top)) return false;
  uint32_t seen = 0;
  v1::Workload small;  // budgets and running jobs, through protobuf
  std::string_view s;
  for (auto [k, fv] : top) {
    if (k == "description" && Once(&seen, 0)) {
      if (!String(fv, &s)) return false;
      in->description.assign(s);
    } else if (k == "startTime" && Once(&seen, 1)) {
      if (!Timestamp(fv, &in->sim.start)) return false;
    } else if ((k == "budgets" && Once(&seen, 2)) || (k == "running" && Once(&seen, 3)) ||
               (k == "plannerMemory" && Once(&seen, 5))) {
      if (fv.type() != (k == "running" ? element_type::ARRAY : element_type::OBJECT)) return false;
      v1::Workload part;
      const std::string raw = simdjson::minify(fv);
      if (!ParseJsonMessage(absl::StrCat("{\"", A(k), "\":", raw, "}"), in->path, &part).ok()) {
        return false;
      }
      small.MergeFrom(part);
    } else if (k == "jobs" && Once(&seen, 4)) {
      simdjson::dom::array a;
      if (fv.get_array().get(a)) return false;
      in->sim.jobs.reserve(a.size());
      in->actuals.reserve(a.size());
      for (value e : a) {
        planner::SimJob& job = in->sim.jobs.emplace_back();
        PlanInput::Actual& actual = in->actuals.emplace_back();
        if (!Job(e, &job, &actual)) return false;
      }
    } else {
      return false;
    }
  }
  if (!(seen & (uint32_t{1} << 1))) {  // no startTime: the file's latest time
    in->start_from_file_times = true;
    absl::Time start = absl::UnixEpoch();
    for (const planner::SimJob& j : in->sim.jobs) {
      start = std::max({start, j.job.created_at, j.job.queued_at});
    }
    for (const v1::RunningJob& r : small.running()) {
      if (r.has_started_at()) start = std::max(start, planner::FromProto(r.started_at()));
    }
    in->sim.start = start;
  }
  if (small.has_budgets()) {
    in->has_file_budgets = true;
    in->file_budgets = planner::FromProto(small.budgets());
  }
  for (const v1::RunningJob& r : small.running()) {
    const v1::JobSpec& spec = r.spec();
    if (!ValidId(spec.id()) || spec.workspace().empty() || spec.resources().cpu_millis() <= 0 ||
        spec.resources().memory_bytes() <= 0 ||
        (spec.has_expected_duration() &&
         planner::FromProto(spec.expected_duration()) <= absl::ZeroDuration()) ||
        (spec.has_max_duration() &&
         planner::FromProto(spec.max_duration()) <= absl::ZeroDuration())) {
      return false;
    }
    const absl::Time started =
        r.has_started_at() ? planner::FromProto(r.started_at()) : in->sim.start;
    in->sim.running.push_back(planner::ToRunningJob(spec, started));
    in->sim.running.back().node = r.node();
  }
  if (in->sim.jobs.empty() && in->sim.running.empty()) return false;
  for (const planner::SimJob& j : in->sim.jobs) {
    if (j.job.queued_at > in->sim.start + j.arrival_offset) return false;
  }
  if (small.has_planner_memory()) {
    std::vector<std::string> bad;
    MemoryFromProto(small.planner_memory(), in->sim, &in->sim.memory, &bad);
    if (!bad.empty()) return false;
  }
  // Unique ids across running and queued jobs.
  absl::flat_hash_set<std::string_view> ids;
  ids.reserve(in->sim.jobs.size() + in->sim.running.size());
  for (const planner::RunningJob& r : in->sim.running) {
    if (!ids.insert(r.id).second) return false;
  }
  for (const planner::SimJob& j : in->sim.jobs) {
    if (!ids.insert(j.job.id).second) return false;
  }
  return true;
}

}  // namespace plan
}  // namespace berth
