#include "server/web/job_list.h"

#include <algorithm>
#include <cstddef>
#include <limits>
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

bool ActionIs(const StoredRecord& record, absl::string_view want) {
  // As ActionOf, but the action's bytes are compared where they lie: no
  // string is made for each of the jobs a filter looks at.
  const absl::string_view v = record.value();
  if (v.size() < 2) return want.empty();
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(v.data()) + 1,
                                            static_cast<int>(v.size() - 1));
  bool in_spec = false;
  for (;;) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) return want.empty();
    const uint32_t number = WireFormatLite::GetTagFieldNumber(tag);
    const bool delimited =
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
    if (!in_spec && number == 1 && delimited) {
      uint32_t length = 0;
      if (!in.ReadVarint32(&length)) return want.empty();
      in.PushLimit(static_cast<int>(length));
      in_spec = true;
      continue;
    }
    if (in_spec && number == 3 && delimited) {
      uint32_t length = 0;
      if (!in.ReadVarint32(&length) || length != want.size()) return false;
      const void* data = nullptr;
      int size = 0;
      if (!in.GetDirectBufferPointer(&data, &size) || size < static_cast<int>(length)) {
        return false;
      }
      return absl::string_view(static_cast<const char*>(data), length) == want;
    }
    if (!WireFormatLite::SkipField(&in, tag)) return want.empty();
  }
}

std::string ActionOf(const StoredRecord& record) {
  // One byte of stop intent, then the serialized Job (job_record.h); the
  // spec is Job field 1, the action JobSpec field 3. The spec is read in
  // place (a limit on the stream), not copied.
  const absl::string_view v = record.value();
  if (v.size() < 2) return "";
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(v.data()) + 1,
                                            static_cast<int>(v.size() - 1));
  for (;;) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) return "";
    if (WireFormatLite::GetTagFieldNumber(tag) == 1 &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t length = 0;
      if (!in.ReadVarint32(&length)) return "";
      in.PushLimit(static_cast<int>(length));
      return StringField(&in, 3).value_or("");
    }
    if (!WireFormatLite::SkipField(&in, tag)) return "";
  }
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

namespace {

struct Match {
  int64_t key;  // the sort's, smaller first
  JobRecord record;
};

// The list's order: the sort's key, ties broken by id so that pages never
// overlap.
bool Before(const Match& a, const Match& b) {
  if (a.key != b.key) return a.key < b.key;
  return a.record->id() < b.record->id();
}

// The first `limit` matches of `filter` in the list's order (all of them
// if there are fewer), visiting the records where the store's index holds
// them: only the records kept among the first `limit` so far are shared
// (a reference count each), and the kept ones are a bounded heap, not a
// sort of every match. Sets data->kept and data->matching.
std::vector<Match> FirstMatches(const Store& store, const JobListFilter& filter, size_t limit,
                                JobListData* data) {
  const bool default_pool = filter.pool == "default";
  std::vector<Match> heap;  // a max-heap by Before: its top is the last kept
  for (v1::JobState s : kStates) {
    if (filter.state.has_value() && *filter.state != s) {
      data->kept += static_cast<int64_t>(store.CountJobsInState(s));
      continue;
    }
    store.VisitJobsInState(s, [&](const JobRecord& record) {
      const StoredRecord& r = *record;
      ++data->kept;
      if (!filter.workspace.empty() && r.workspace() != filter.workspace) return;
      if (!filter.pool.empty()) {
        if (default_pool ? !r.pool().empty() && r.pool() != "default"
                         : r.pool() != filter.pool) {
          return;
        }
      }
      if (filter.priority.has_value() && r.priority() != *filter.priority) return;
      if (!filter.id_prefix.empty() && !absl::StartsWith(r.id(), filter.id_prefix)) return;
      // Last: the only test that reads the record's bytes.
      if (!filter.action.empty() && !ActionIs(r, filter.action)) return;
      ++data->matching;
      if (limit == 0) return;
      int64_t key = 0;
      switch (filter.sort) {
        case JobSort::kId: break;
        case JobSort::kNewest: key = -absl::ToUnixMicros(r.created_at()); break;
        case JobSort::kOldest: key = absl::ToUnixMicros(r.created_at()); break;
        case JobSort::kFinished:  // the latest finished first; unfinished last
          key = Terminal(r.state()) ? -absl::ToUnixMicros(r.finished_at())
                                    : std::numeric_limits<int64_t>::max();
          break;
        case JobSort::kPriority: key = -static_cast<int64_t>(r.priority()); break;
        case JobSort::kState: key = static_cast<int64_t>(r.state()); break;
      }
      if (heap.size() == limit) {
        const Match& last = heap.front();
        if (key > last.key || (key == last.key && !(r.id() < last.record->id()))) return;
        std::pop_heap(heap.begin(), heap.end(), Before);
        heap.back() = Match{key, record};
      } else {
        heap.push_back(Match{key, record});
      }
      std::push_heap(heap.begin(), heap.end(), Before);
    });
  }
  std::sort_heap(heap.begin(), heap.end(), Before);
  return heap;
}

}  // namespace

JobListRow JobListRowOf(const StoredRecord& r) {
  const StoredJob job = r.Decode();
  JobListRow row;
  row.id = std::string(r.id());
  row.state = r.state();
  row.workspace = std::string(r.workspace());
  row.pool = std::string(r.pool());
  row.action = job.job.spec().action();
  row.priority = r.priority();
  row.memory_bytes = r.effective_memory_bytes();
  row.cpu_millis = r.cpu_millis();
  row.created_at = r.created_at();
  if (Terminal(r.state())) row.finished_at = r.finished_at();
  row.exit_code = job.job.exit_code();
  row.has_exit_code = job.job.has_exit_code();
  return row;
}

JobListData SelectJobs(const Store& store, JobListFilter filter, int page_size) {
  JobListData data;
  data.page_size = page_size;
  const int64_t first = static_cast<int64_t>(filter.page - 1) * page_size;
  const int64_t end = first + page_size;
  const std::vector<Match> matches =
      FirstMatches(store, filter, static_cast<size_t>(std::max<int64_t>(0, end)), &data);
  for (int64_t i = first; i < static_cast<int64_t>(matches.size()); ++i) {
    data.rows.push_back(JobListRowOf(*matches[static_cast<size_t>(i)].record));
  }
  data.filter = std::move(filter);
  return data;
}

std::vector<JobRecord> SelectAllJobs(const Store& store, const JobListFilter& filter,
                                     size_t limit, JobListData* counts) {
  std::vector<Match> matches = FirstMatches(store, filter, limit, counts);
  std::vector<JobRecord> out;
  out.reserve(matches.size());
  for (Match& m : matches) out.push_back(std::move(m.record));
  return out;
}

std::vector<WorkspaceStats> SelectWorkspaces(const Store& store, absl::Time now) {
  struct Acc {
    WorkspaceStats stats;
    // Microseconds: plain integers to gather and select among.
    std::vector<int64_t> waits, queued_since;
  };
  const int64_t now_us = absl::ToUnixMicros(now);
  std::map<std::string, Acc> by_name;
  for (v1::JobState s : kStates) {
    // Jobs of one workspace mostly come in runs (the index is in id order,
    // ids often start with the workspace): one lookup per run.
    Acc* acc = nullptr;
    const std::string* name = nullptr;
    store.VisitJobsInState(s, [&](const JobRecord& r) {
      if (name == nullptr || *name != r->workspace()) {
        auto it = by_name.try_emplace(std::string(r->workspace())).first;
        acc = &it->second;
        name = &it->first;
      }
      WorkspaceStats& w = acc->stats;
      switch (s) {
        case v1::JOB_STATE_QUEUED:
          ++w.queued;
          acc->queued_since.push_back(absl::ToUnixMicros(r->created_at()));
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
        acc->waits.push_back(std::max<int64_t>(
            0, absl::ToUnixMicros(r->active_since()) - absl::ToUnixMicros(r->created_at())));
      }
    });
  }
  // The element at size/2 in ascending order.
  auto median = [](std::vector<int64_t>& v) -> std::optional<int64_t> {
    if (v.empty()) return std::nullopt;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  std::vector<WorkspaceStats> out;
  for (auto& [name, acc] : by_name) {
    acc.stats.workspace = name;
    if (std::optional<int64_t> w = median(acc.waits)) {
      acc.stats.median_wait = absl::Microseconds(*w);
    }
    // The median of now - created is now - the median creation time (the
    // element at size/2 of the waits ascending is the one at size-1-size/2
    // of the creation times ascending).
    std::vector<int64_t>& since = acc.queued_since;
    if (!since.empty()) {
      const size_t k = since.size() - 1 - since.size() / 2;
      std::nth_element(since.begin(), since.begin() + static_cast<std::ptrdiff_t>(k), since.end());
      acc.stats.median_queued_for = absl::Microseconds(now_us - since[k]);
    }
    out.push_back(std::move(acc.stats));
  }
  return out;
}

}  // namespace berth::web
