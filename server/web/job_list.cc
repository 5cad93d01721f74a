#include "server/web/job_list.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "server/web/html.h"
#include "server/web/pages.h"

namespace berth::web {
namespace {

using google::protobuf::internal::WireFormatLite;

constexpr v1::JobState kStates[] = {
    v1::JOB_STATE_QUEUED,    v1::JOB_STATE_ADMITTED,  v1::JOB_STATE_RUNNING,
    v1::JOB_STATE_SUCCEEDED, v1::JOB_STATE_FAILED,    v1::JOB_STATE_CANCELLED,
    v1::JOB_STATE_REJECTED};

constexpr JobSort kSorts[] = {JobSort::kId,       JobSort::kNewest,   JobSort::kOldest,
                              JobSort::kFinished, JobSort::kPriority, JobSort::kState};

bool Terminal(v1::JobState s) {
  return s == v1::JOB_STATE_SUCCEEDED || s == v1::JOB_STATE_FAILED ||
         s == v1::JOB_STATE_CANCELLED || s == v1::JOB_STATE_REJECTED;
}

// Field `number` (length-delimited) of the message in `in`, or nullopt.
std::optional<std::string> StringField(google::protobuf::io::CodedInputStream* in,
                                       uint32_t number) {
  for (;;) {
    const uint32_t tag = in->ReadTag();
    if (tag == 0) return std::nullopt;
    if (static_cast<uint32_t>(WireFormatLite::GetTagFieldNumber(tag)) == number &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      std::string out;
      if (!WireFormatLite::ReadString(in, &out)) return std::nullopt;
      return out;
    }
    if (!WireFormatLite::SkipField(in, tag)) return std::nullopt;
  }
}

}  // namespace

const char* JobSortName(JobSort s) {
  switch (s) {
    case JobSort::kId: return "id";
    case JobSort::kNewest: return "newest";
    case JobSort::kOldest: return "oldest";
    case JobSort::kFinished: return "finished";
    case JobSort::kPriority: return "priority";
    case JobSort::kState: return "state";
  }
  return "newest";
}

std::string ActionOf(const StoredRecord& record) {
  // One byte of stop intent, then the serialized Job (job_record.h); the
  // spec is Job field 1, the action JobSpec field 3.
  const std::string& v = record.value();
  if (v.size() < 2) return "";
  google::protobuf::io::CodedInputStream job(reinterpret_cast<const uint8_t*>(v.data()) + 1,
                                             static_cast<int>(v.size() - 1));
  std::optional<std::string> spec = StringField(&job, 1);
  if (!spec.has_value()) return "";
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(spec->data()),
                                            static_cast<int>(spec->size()));
  return StringField(&in, 3).value_or("");
}

absl::StatusOr<JobListFilter> ParseJobListFilter(
    const std::function<std::string(const char*)>& get) {
  JobListFilter f;
  const std::string state = absl::AsciiStrToLower(get("state"));
  if (!state.empty()) {
    for (v1::JobState s : kStates) {
      if (StateText(s) == state) f.state = s;
    }
    if (!f.state.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "state: unknown state '", state,
          "' (queued, admitted, running, succeeded, failed, cancelled or rejected)"));
    }
  }
  f.workspace = get("workspace");
  f.pool = get("pool");
  f.action = get("action");
  f.id_prefix = get("id");
  const std::string priority = get("priority");
  if (!priority.empty()) {
    int32_t p = 0;
    if (!absl::SimpleAtoi(priority, &p)) {
      return absl::InvalidArgumentError("priority: must be a whole number");
    }
    f.priority = p;
  }
  const std::string sort = get("sort");
  if (!sort.empty()) {
    bool known = false;
    for (JobSort s : kSorts) {
      if (sort == JobSortName(s)) {
        f.sort = s;
        known = true;
      }
    }
    if (!known) {
      return absl::InvalidArgumentError(
          "sort: must be id, newest, oldest, finished, priority or state");
    }
  }
  const std::string page = get("page");
  if (!page.empty() && (!absl::SimpleAtoi(page, &f.page) || f.page < 1)) {
    return absl::InvalidArgumentError("page: must be a number >= 1");
  }
  return f;
}

std::string JobListQuery(const JobListFilter& f, bool with_page) {
  std::string out;
  auto add = [&out](absl::string_view name, absl::string_view value) {
    if (value.empty()) return;
    absl::StrAppend(&out, out.empty() ? "" : "&", name, "=", QueryEscape(value));
  };
  if (f.state.has_value()) add("state", StateText(*f.state));
  add("workspace", f.workspace);
  add("pool", f.pool);
  add("action", f.action);
  if (f.priority.has_value()) add("priority", absl::StrCat(*f.priority));
  add("id", f.id_prefix);
  if (f.sort != JobSort::kNewest) add("sort", JobSortName(f.sort));
  if (with_page && f.page > 1) add("page", absl::StrCat(f.page));
  return out;
}

JobListData SelectJobs(const Store& store, JobListFilter filter, int page_size) {
  JobListData data;
  data.page_size = page_size;
  const bool default_pool = filter.pool == "default";
  std::vector<JobRecord> matching;
  for (v1::JobState s : kStates) {
    std::vector<JobRecord> in_state = store.JobsInState(s);
    data.kept += static_cast<int64_t>(in_state.size());
    if (filter.state.has_value() && *filter.state != s) continue;
    for (JobRecord& r : in_state) {
      if (!filter.workspace.empty() && r->workspace() != filter.workspace) continue;
      if (!filter.pool.empty()) {
        if (default_pool ? !r->pool().empty() && r->pool() != "default"
                         : r->pool() != filter.pool) {
          continue;
        }
      }
      if (filter.priority.has_value() && r->priority() != *filter.priority) continue;
      if (!filter.id_prefix.empty() && !absl::StartsWith(r->id(), filter.id_prefix)) continue;
      // Last: the only test that reads the record's bytes.
      if (!filter.action.empty() && ActionOf(*r) != filter.action) continue;
      matching.push_back(std::move(r));
    }
  }
  data.matching = static_cast<int64_t>(matching.size());
  // Ties are broken by id, so that pages never overlap.
  auto by = [&](auto key, bool descending) {
    return [key, descending](const JobRecord& a, const JobRecord& b) {
      const auto ka = key(*a), kb = key(*b);
      if (ka != kb) return descending ? kb < ka : ka < kb;
      return a->id() < b->id();
    };
  };
  std::function<bool(const JobRecord&, const JobRecord&)> less;
  switch (filter.sort) {
    case JobSort::kId:
      less = [](const JobRecord& a, const JobRecord& b) { return a->id() < b->id(); };
      break;
    case JobSort::kNewest:
      less = by([](const StoredRecord& r) { return r.created_at(); }, true);
      break;
    case JobSort::kOldest:
      less = by([](const StoredRecord& r) { return r.created_at(); }, false);
      break;
    case JobSort::kFinished:  // the latest finished first; unfinished last
      less = by([](const StoredRecord& r) {
        return Terminal(r.state()) ? r.finished_at() : absl::InfinitePast();
      }, true);
      break;
    case JobSort::kPriority:
      less = by([](const StoredRecord& r) { return r.priority(); }, true);
      break;
    case JobSort::kState:
      less = by([](const StoredRecord& r) { return static_cast<int>(r.state()); }, false);
      break;
  }
  const int64_t first = static_cast<int64_t>(filter.page - 1) * page_size;
  const int64_t last = std::min<int64_t>(first + page_size, data.matching);
  if (first < last) {
    // Only the rows up to the page's end need their order.
    std::partial_sort(matching.begin(), matching.begin() + last, matching.end(), less);
    for (int64_t i = first; i < last; ++i) {
      const StoredRecord& r = *matching[static_cast<size_t>(i)];
      const StoredJob job = r.Decode();
      JobListRow row;
      row.id = r.id();
      row.state = r.state();
      row.workspace = r.workspace();
      row.pool = r.pool();
      row.action = job.job.spec().action();
      row.priority = r.priority();
      row.memory_bytes = r.effective_memory_bytes();
      row.cpu_millis = r.cpu_millis();
      row.created_at = r.created_at();
      if (Terminal(r.state())) row.finished_at = r.finished_at();
      row.exit_code = job.job.exit_code();
      row.has_exit_code = job.job.has_exit_code();
      data.rows.push_back(std::move(row));
    }
  }
  data.filter = std::move(filter);
  return data;
}

std::vector<WorkspaceStats> SelectWorkspaces(const Store& store, absl::Time now) {
  std::map<std::string, WorkspaceStats> by_name;
  std::map<std::string, std::vector<absl::Duration>> waits, queued_for;
  for (v1::JobState s : kStates) {
    for (const JobRecord& r : store.JobsInState(s)) {
      WorkspaceStats& w = by_name[r->workspace()];
      switch (s) {
        case v1::JOB_STATE_QUEUED:
          ++w.queued;
          queued_for[r->workspace()].push_back(now - r->created_at());
          break;
        case v1::JOB_STATE_ADMITTED:
        case v1::JOB_STATE_RUNNING:
          ++w.running;
          w.memory_bytes += r->effective_memory_bytes();
          w.cpu_millis += r->cpu_millis();
          break;
        case v1::JOB_STATE_SUCCEEDED: ++w.succeeded; break;
        case v1::JOB_STATE_FAILED: ++w.failed; break;
        default: ++w.other_ended; break;
      }
      // active_since is the admission when there was one (job_record.h).
      if (s != v1::JOB_STATE_QUEUED && r->active_since() != absl::InfiniteFuture()) {
        waits[r->workspace()].push_back(
            std::max(absl::ZeroDuration(), r->active_since() - r->created_at()));
      }
    }
  }
  auto median = [](std::vector<absl::Duration>& v) -> std::optional<absl::Duration> {
    if (v.empty()) return std::nullopt;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  std::vector<WorkspaceStats> out;
  for (auto& [name, w] : by_name) {
    w.workspace = name;
    w.median_wait = median(waits[name]);
    w.median_queued_for = median(queued_for[name]);
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace berth::web
