// The dashboard's pages over what the store keeps (as pages.h: pure
// functions returning a page's HTML body, unit-tested with hostile
// strings): the jobs list, the events timeline, the workspaces and the
// right-sizing table.
//
// Thread-safe: pure functions.
#ifndef BERTH_SERVER_WEB_LIST_PAGES_H_
#define BERTH_SERVER_WEB_LIST_PAGES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/status/statusor.h"
#include "berth/v1/budgets.pb.h"
#include "berth/v1/event.pb.h"
#include "berth/v1/executor.pb.h"
#include "server/web/job_list.h"

namespace berth::web {

// ---- Jobs (/ui/jobs) ----
std::string JobsBody(const JobListData& data);
// The same selection as CSV (/ui/jobs.csv, every matching row in the
// list's order; RFC 4180): a header line, then one line per row. Text
// cells (id, workspace, pool, action) go through CsvCell.
std::string JobsCsv(const JobListData& data);
// Its parts, for an export written a chunk at a time: the header line and
// one row's line (each ending in CRLF).
std::string JobsCsvHeader();
std::string JobsCsvLine(const JobListRow& row);
// The lines of records[*next, *next + max_rows) (fewer at the end), each
// parsed as JobListRowOf; advances *next past them. An export's chunk.
std::string JobsCsvLines(const std::vector<JobRecord>& records, size_t* next,
                         size_t max_rows);
// One CSV cell of text a job's submitter chose: a cell starting with = + -
// @, a tab or a carriage return gets a leading ' so that a spreadsheet
// takes it as text, not a formula (CSV injection); a cell holding a quote,
// comma or line break is quoted, its quotes doubled.
std::string CsvCell(absl::string_view text);

// ---- Events (/ui/events) ----
struct EventFilter {
  std::string type;        // "" or an EventType in lower case without its prefix
  std::string job_prefix;  // "" = any
  std::string workspace;   // "" = any
  std::string state;       // "" or the state a job event moved to ("failed")
};
// From the query parameters type, job, workspace, state; INVALID_ARGUMENT
// naming the field for an unknown type or state.
absl::StatusOr<EventFilter> ParseEventFilter(
    const std::function<std::string(const char*)>& get);
bool EventMatches(const EventFilter& f, const v1::Event& e);
// As a query string (empty fields left out).
std::string EventQuery(const EventFilter& f);
struct EventsPageData {
  EventFilter filter;
  std::vector<v1::Event> events;  // matching, newest first
  int64_t searched = 0;           // the most recent events looked at
  uint64_t current_revision = 0;  // the live part adds events after it
};
std::string EventsBody(const EventsPageData& data);

// ---- Workspaces (/ui/workspaces) ----
struct WorkspacesPageData {
  std::vector<WorkspaceStats> rows;  // by name
  v1::Budgets budgets;               // for the shares
  absl::Time now;
};
std::string WorkspacesBody(const WorkspacesPageData& data);

// ---- Right-sizing (/ui/rightsize) ----
struct RightSizePageData {
  std::string workspace;  // the filter ("" = every workspace)
  v1::RightSizeResponse answer;
};
std::string RightSizeBody(const RightSizePageData& data);

}  // namespace berth::web

#endif  // BERTH_SERVER_WEB_LIST_PAGES_H_
