// The dashboard's routes over what the store keeps (dashboard.h): the jobs
// list, the events (and their live stream), the workspaces, right-sizing,
// and the job page's history.
#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/web/dashboard.h"
#include "server/web/dashboard_http.h"
#include "server/web/html.h"
#include "server/web/list_pages.h"
#include "server/web/live_js.h"

namespace berth::web {
namespace {

// Rows of /ui/jobs.csv rendered per chunk sent.
constexpr size_t kCsvChunkRows = 1000;

std::function<std::string(const char*)> Getter(const httplib::Request& req) {
  return [&req](const char* name) { return Param(req, name); };
}

const char* DecisionName(DecisionKind k) {
  switch (k) {
    case DecisionKind::kAdmit: return "admit";
    case DecisionKind::kCancel: return "cancel";
    case DecisionKind::kRequeue: return "requeue";
    case DecisionKind::kReject: return "reject";
    case DecisionKind::kTimeout: return "time out";
  }
  return "?";
}

}  // namespace

void Dashboard::Jobs(const httplib::Request& req, httplib::Response& res) const {
  if (!Check(req, res, kPageMethod)) return;
  absl::StatusOr<JobListFilter> f = ParseJobListFilter(Getter(req));
  if (!f.ok()) return SendError(res, f.status());
  PageOptions po;
  po.title = "Jobs";
  po.nav = Nav::kJobs;
  SendHtml(res, 200,
           RenderPage(po, JobsBody(SelectJobs(store_, *std::move(f), options_.jobs_page_size))));
}

void Dashboard::JobsCsv(const httplib::Request& req, httplib::Response& res) const {
  if (!Check(req, res, kPageMethod)) return;
  absl::StatusOr<JobListFilter> f = ParseJobListFilter(Getter(req));
  if (!f.ok()) return SendError(res, f.status());
  // Every match, in the list's order, written kCsvChunkRows rows at a time
  // (HTTP chunked): what is held while it is sent is one shared record per
  // match, not the file (~100 bytes a row: 100 MB at a million jobs).
  JobListData counts;
  auto records = std::make_shared<std::vector<JobRecord>>(
      SelectAllJobs(store_, *f, std::numeric_limits<size_t>::max(), &counts));
  SetSafetyHeaders(res, false);
  res.set_header("Content-Disposition", "attachment; filename=\"berth-jobs.csv\"");
  res.set_chunked_content_provider(
      "text/csv; charset=utf-8",
      [records, next = size_t{0}, header = true](size_t, httplib::DataSink& sink) mutable {
        std::string chunk;
        if (header) chunk = JobsCsvHeader();
        header = false;
        chunk += JobsCsvLines(*records, &next, kCsvChunkRows);
        if (!chunk.empty() && !sink.write(chunk.data(), chunk.size())) return false;
        if (next == records->size()) sink.done();
        return true;
      });
}

void Dashboard::JobHistory(const std::string& id, JobPageData* data) const {
  const ExecutorCore::Revisions r = core_.CurrentRevisions();
  uint64_t after = r.oldest > 0 ? r.oldest - 1 : 0;
  const uint64_t searched = static_cast<uint64_t>(options_.events_searched);
  if (r.current > searched && r.current - searched > after) {
    after = r.current - searched;
    data->events_cut = true;
  }
  while (after < r.current) {
    absl::StatusOr<EventPage> page = core_.ReadEvents(after, 10000);
    if (!page.ok() || page->events.empty()) break;  // trimmed meanwhile: what was read
    // (Read before the events are moved out.)
    const uint64_t last = page->events.back().revision();
    for (v1::Event& e : page->events) {
      if (e.revision() > r.current) break;
      if (e.job_id() == id) data->events.push_back(std::move(e));
    }
    after = last;
  }
  absl::StatusOr<std::vector<Decision>> decisions = store_.DecisionsForJob(id);
  if (decisions.ok()) {
    for (const Decision& d : *decisions) {
      data->decisions.push_back({d.time, DecisionName(d.kind), d.reason});
    }
  }
}

void Dashboard::Events(const httplib::Request& req, httplib::Response& res) const {
  if (!Check(req, res, kPageMethod)) return;
  absl::StatusOr<EventFilter> f = ParseEventFilter(Getter(req));
  if (!f.ok()) return SendError(res, f.status());
  EventsPageData data;
  data.filter = *std::move(f);
  const ExecutorCore::Revisions r = core_.CurrentRevisions();
  data.current_revision = r.current;
  uint64_t after = r.oldest > 0 ? r.oldest - 1 : 0;
  const uint64_t searched = static_cast<uint64_t>(options_.events_searched);
  if (r.current > searched) after = std::max(after, r.current - searched);
  std::vector<v1::Event> matching;
  while (after < r.current) {
    absl::StatusOr<EventPage> page = core_.ReadEvents(after, 10000);
    if (!page.ok() || page->events.empty()) break;
    const uint64_t last = page->events.back().revision();
    for (v1::Event& e : page->events) {
      if (e.revision() > r.current) break;
      ++data.searched;
      if (EventMatches(data.filter, e)) matching.push_back(std::move(e));
    }
    after = last;
  }
  const size_t shown = std::min(matching.size(), static_cast<size_t>(options_.events_shown));
  for (size_t i = 0; i < shown; ++i) data.events.push_back(matching[matching.size() - 1 - i]);
  PageOptions po;
  po.title = "Events";
  po.nav = Nav::kEvents;
  po.live = true;
  SendHtml(res, 200, RenderPage(po, EventsBody(data)), true);
}

void Dashboard::LiveEvents(const httplib::Request& req, httplib::Response& res) const {
  if (!Check(req, res, kPageMethod)) return;
  absl::StatusOr<EventFilter> f = ParseEventFilter(Getter(req));
  if (!f.ok()) return SendError(res, f.status());
  uint64_t after = 0;
  std::string from = req.get_header_value("Last-Event-ID");
  if (from.empty()) from = Param(req, "after");
  if (!absl::SimpleAtoi(from, &after)) {
    return SendError(res, absl::InvalidArgumentError("after: must be an event revision"));
  }
  if (!OpenLive(res)) return;
  const Dashboard* self = this;
  const absl::Duration lifetime = options_.live_duration;
  res.set_chunked_content_provider(
      "text/event-stream",
      [self, filter = *std::move(f), after, lifetime](size_t, httplib::DataSink& sink) mutable {
        const absl::Time until = absl::Now() + lifetime;
        const std::string retry = "retry: 1000\n\n";
        sink.write(retry.data(), retry.size());
        while (!self->stopping_.load() && sink.is_writable() && absl::Now() < until) {
          if (!self->core_.AwaitRevision(after, absl::Milliseconds(500))) continue;
          absl::StatusOr<EventPage> page = self->core_.ReadEvents(after, 1000);
          if (!page.ok()) {
            // Trimmed past where the browser was: it reloads the page.
            const std::string m = absl::StrCat(
                SseMessage("", JsonStrings({"", "", "", "", "", "",
                                            "[events were trimmed: reload the page]"})),
                SseMessage("", "", "end"));
            sink.write(m.data(), m.size());
            break;
          }
          for (const v1::Event& e : page->events) {
            after = e.revision();
            if (!EventMatches(filter, e)) continue;
            const std::string m = SseMessage(absl::StrCat(after), JsonStrings(EventCells(e)));
            if (!sink.write(m.data(), m.size())) break;
          }
        }
        sink.done();
        return true;
      },
      [self](bool) { self->ReleaseLive(); });
}

void Dashboard::Workspaces(const httplib::Request& req, httplib::Response& res) const {
  if (!Check(req, res, kPageMethod)) return;
  WorkspacesPageData data;
  data.now = absl::Now();
  absl::StatusOr<v1::Budgets> budgets = core_.GetBudgets();
  if (!budgets.ok()) return SendError(res, budgets.status());
  data.budgets = *std::move(budgets);
  data.rows = SelectWorkspaces(store_, data.now);
  PageOptions po;
  po.title = "Workspaces";
  po.nav = Nav::kWorkspaces;
  po.refresh_seconds = options_.refresh_seconds;
  SendHtml(res, 200, RenderPage(po, WorkspacesBody(data)));
}

void Dashboard::RightSize(const httplib::Request& req, httplib::Response& res) const {
  if (!Check(req, res, kPageMethod)) return;
  RightSizePageData data;
  data.workspace = Param(req, "workspace");
  v1::RightSizeRequest r;
  r.set_workspace(data.workspace);
  r.set_limit(100);
  absl::StatusOr<v1::RightSizeResponse> answer = core_.RightSize(r);
  if (!answer.ok()) return SendError(res, answer.status());
  data.answer = *std::move(answer);
  PageOptions po;
  po.title = "Right-sizing";
  po.nav = Nav::kRightSize;
  SendHtml(res, 200, RenderPage(po, RightSizeBody(data)));
}

}  // namespace berth::web
