// The jobs page's selection (/ui/jobs): every job the store keeps, in any
// state, filtered, sorted and cut to one page. Served from the store's
// index in place (Store::VisitJobsInState: no record copied, shared or
// parsed whole while filtering; the states a filter leaves out only
// counted): the cost is one visit of each candidate job, a bounded heap of
// the matches up to the page's end (not a sort of every match) and a parse
// of the page's rows, so that a page answers in well under 200 ms with
// 100k jobs kept (server/web/dashboard_benchmark.cc).
//
// Thread-safe: pure functions of the store's (thread-safe) reads.
#ifndef BERTH_SERVER_WEB_JOB_LIST_H_
#define BERTH_SERVER_WEB_JOB_LIST_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "berth/v1/job.pb.h"
#include "executor/store/job_record.h"
#include "executor/store/store.h"

namespace berth::web {

// How the list is ordered.
enum class JobSort { kId, kNewest, kOldest, kFinished, kPriority, kState };

struct JobListFilter {
  std::optional<v1::JobState> state;  // unset: every state
  std::string workspace;              // "" = any (exact)
  std::string pool;                   // "" = any; "default" = the default pool
  std::string action;                 // "" = any (exact)
  std::optional<int32_t> priority;    // unset: any
  std::string id_prefix;              // "" = any
  JobSort sort = JobSort::kNewest;
  int page = 1;                       // 1-based
};

// Parses the page's query parameters (state, workspace, pool, action,
// priority, id, sort, page); INVALID_ARGUMENT naming the field otherwise.
// `get` answers a parameter's value ("" if absent).
absl::StatusOr<JobListFilter> ParseJobListFilter(
    const std::function<std::string(const char*)>& get);
// The filter as a query string ("state=failed&sort=newest"), without page
// unless `with_page`; the default sort and empty fields are left out.
std::string JobListQuery(const JobListFilter& f, bool with_page);
// The names ParseJobListFilter takes for the sorts and states.
const char* JobSortName(JobSort s);

struct JobListRow {
  std::string id;
  v1::JobState state = v1::JOB_STATE_UNSPECIFIED;
  std::string workspace;
  std::string pool;  // "" for the default pool
  std::string action;
  int32_t priority = 0;
  int64_t memory_bytes = 0;  // reserved (a raise included)
  int64_t cpu_millis = 0;
  absl::Time created_at;
  std::optional<absl::Time> finished_at;  // terminal jobs
  int32_t exit_code = 0;
  bool has_exit_code = false;
};

struct JobListData {
  JobListFilter filter;
  int page_size = 100;
  std::vector<JobListRow> rows;  // this page's
  int64_t matching = 0;          // all pages
  int64_t kept = 0;              // every job the store keeps
};

// The page `filter` asks for.
JobListData SelectJobs(const Store& store, JobListFilter filter, int page_size);
// Every match of `filter` (its page ignored) in the list's order, at most
// the first `limit`, as shared records: for an export that renders its
// rows a chunk at a time (JobListRowOf). Sets counts->kept and
// counts->matching (all matches, also past `limit`).
std::vector<JobRecord> SelectAllJobs(const Store& store, const JobListFilter& filter,
                                     size_t limit, JobListData* counts);
// One row of the list, parsed from the record.
JobListRow JobListRowOf(const StoredRecord& record);

// One workspace's jobs as the store keeps them (the workspaces page).
struct WorkspaceStats {
  std::string workspace;
  int64_t queued = 0;
  int64_t running = 0;  // ADMITTED or RUNNING
  int64_t succeeded = 0;
  int64_t failed = 0;     // FAILED
  int64_t other_ended = 0;  // CANCELLED or REJECTED
  // Waits from creation (JobSpec.created_at, else when first queued) to
  // admission: the median over its kept jobs that were admitted; and the
  // median time its queued jobs have waited so far (unset: none).
  std::optional<absl::Duration> median_wait;
  std::optional<absl::Duration> median_queued_for;
  // What its ADMITTED and RUNNING jobs reserve.
  int64_t memory_bytes = 0;
  int64_t cpu_millis = 0;
};
// Every workspace with a kept job, by name, as of `now`.
std::vector<WorkspaceStats> SelectWorkspaces(const Store& store, absl::Time now);

// The action of a stored job (JobSpec.action), read from its persisted
// bytes without parsing the rest.
std::string ActionOf(const StoredRecord& record);
// ActionOf(record) == want, without copying the action.
bool ActionIs(const StoredRecord& record, absl::string_view want);

}  // namespace berth::web

#endif  // BERTH_SERVER_WEB_JOB_LIST_H_
