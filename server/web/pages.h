// The dashboard's pages as pure functions of what berthd's APIs answer
// (the data is gathered by Dashboard, dashboard.h), so that each page is
// unit-tested with hostile strings. Each returns the page's HTML body
// (RenderPage adds the document around it). Wording and units are
// berthctl's: "6 GiB", "1.5 cores", verdicts and reasons by their API names
// in lower case.
//
// Thread-safe: pure functions.
#ifndef BERTH_SERVER_WEB_PAGES_H_
#define BERTH_SERVER_WEB_PAGES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "berth/v1/event.pb.h"
#include "berth/v1/job.pb.h"
#include "berth/v1/plan.pb.h"

namespace berth::web {

// ---- Overview (/ui) ----
struct OverviewData {
  v1::Plan plan;  // GetPlan's answer; its decisions are not used
  // When the last queued job with an estimate is expected to start
  // (planner/forecast/eta.h); unset if no queued job has one.
  std::optional<absl::Time> last_start;
  int64_t without_estimate = 0;  // queued jobs whose ETA is unknown
  // Queued jobs the forecast did not reach (EtaKind::kBeyondForecast): the
  // last start is then only known to be after `last_start` (the instant the
  // forecast covers).
  int64_t beyond_forecast = 0;
};
std::string OverviewBody(const OverviewData& data);

// ---- Plan (/ui/plan) ----
struct PlanFilter {
  std::string workspace;  // "" = any
  std::string pool;       // "" = any
  std::string verdict;    // "", "admit", "wait" or "reject"
  int page = 1;           // 1-based
};
struct PlanRow {
  v1::PlanDecision decision;  // with its summary
  std::string workspace;
  std::string pool;
  int32_t priority = 0;
};
struct PlanPageData {
  PlanFilter filter;
  int page_size = 100;
  std::vector<PlanRow> rows;  // this page's
  int64_t matching = 0;       // rows matching the filter, all pages
  int64_t queued = 0;         // the plan's queued jobs
  uint64_t revision = 0;
  absl::Time computed_at;     // when the plan shown was made
};
std::string PlanBody(const PlanPageData& data);

// ---- A job (/ui/job?id=) ----
struct JobPageData {
  v1::Job job;
  // ExplainJob's answer (every job has one: a queued job's verdict, or why
  // a job is no longer queued).
  std::optional<v1::Explanation> explanation;
  // Set when the explanation is a plan's (a queued job): when that plan was
  // made (its revision is explanation->revision()).
  std::optional<absl::Time> plan_made;
  bool full_log_allowed = false;  // the caller may read the full log
  // The caller may see environment values (operators); else only names.
  bool env_values_allowed = false;
  // berthd --log_cap: a kept stream larger was cut (0: unknown).
  int64_t log_cap_bytes = 0;
  // The job's events among the most recent ones (oldest first), and
  // whether older events were not searched.
  std::vector<v1::Event> events;
  bool events_cut = false;
  // Its decision log (the store's audit: admit, requeue, cancel, ...).
  struct Decision {
    absl::Time time;
    std::string kind;    // "admit", "requeue", ...
    std::string reason;
  };
  std::vector<Decision> decisions;
};
std::string JobBody(const JobPageData& data);
// Parts of the job page (job_detail.cc).
std::string JobSpecSection(const JobPageData& data);
std::string AttemptsSection(const JobPageData& data);
std::string JobHistorySection(const JobPageData& data);
// One event as the events page's cells: revision, time, type, job,
// workspace, change ("queued -> admitted"), detail.
std::vector<std::string> EventCells(const v1::Event& e);

// ---- A job's full log (/ui/log?id=) ----
struct LogPageData {
  std::string job_id;
  int attempt = 0;      // 0: the latest
  bool tail = false;    // the tail of each stream, else the head
  std::string text;     // the head: stdout then stderr; the tail: stdout's
  std::string err_text; // the tail: stderr's
  bool truncated = false;  // more follows (head) or precedes (tail)
};
std::string LogBody(const LogPageData& data);

// ---- Running jobs (/ui/running) ----
struct RunningPageData {
  std::vector<v1::Job> jobs;  // RUNNING and ADMITTED, with live observed usage
  bool more = false;          // more than shown
  absl::Time now;
};
std::string RunningBody(const RunningPageData& data);

// ---- Nodes (/ui/nodes) ----
struct NodesPageData {
  v1::Budgets budgets;        // with the runtime's nodes (empty on one host)
  std::vector<v1::Job> jobs;  // RUNNING and ADMITTED
  bool more = false;
};
std::string NodesBody(const NodesPageData& data);

// Enum names as berthctl prints them: "wait", "waiting_for_memory",
// "if_estimates_hold", "running".
std::string VerdictText(v1::Verdict v);
std::string ReasonText(v1::WaitReason r);
std::string EtaText(const v1::PlanDecision& d);
std::string StateText(v1::JobState s);

}  // namespace berth::web

#endif  // BERTH_SERVER_WEB_PAGES_H_
