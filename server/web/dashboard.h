// Dashboard: berthd's read-only web pages at /ui on its HTTP (metrics) port.
//
//   GET  /ui                 overview: budgets, paused/maintenance, queue, drain forecast
//   GET  /ui/plan            the plan, ?workspace=&pool=&verdict=&page=
//   GET  /ui/jobs            every kept job, ?state=&workspace=&pool=&action=&priority=
//                            &id=(prefix)&sort=&page= (job_list.h)
//   GET  /ui/job?id=         a job: spec, state, explanation with ETA, attempts, log tail,
//                            its events, and (ReadJobLog's roles) its live log
//   GET  /ui/log?id=&attempt=&part=head|tail
//                            an attempt's kept log, its head or its tail (ReadJobLog's
//                            roles only; so are the two below)
//   GET  /ui/log/download?id=&attempt=
//                            the whole kept log of an attempt, as a text file
//   GET  /ui/log/live?id=    a job's log as it is written (Server-Sent Events)
//   GET  /ui/events          recent events, ?type=&job=(prefix)&workspace=&state=;
//   GET  /ui/events/live     ... and the new ones as they happen (Server-Sent Events)
//   GET  /ui/workspaces      per workspace: jobs by state, waits, use against fair share
//   GET  /ui/rightsize       RightSize's answer, ?workspace=
//   GET  /ui/static/live.js  the script of the live parts (live_js.h)
//   GET  /ui/running         jobs holding resources: reserved vs observed, time vs estimate
//   GET  /ui/nodes           a swarm's nodes: free memory/CPU and their jobs
//   GET  /ui/chart           24 hours of reserved/observed use against the budgets, and the
//                            queue (SVG from the UsageRing berthd fills)
//   GET  /ui/login           the login form; POST /ui/login starts a session (its cookie)
//   POST /ui/logout          ends the session and expires its cookie
//
// An event stream lasts at most `live_seconds` (the browser reconnects
// where it was, Last-Event-ID) and at most `max_live_streams` are open at
// once (more answer 503): each holds one of the HTTP server's threads,
// which also serve /metrics.
//
// Every page but the login form (and live.js) needs a token of any role (web_auth.h),
// from the Authorization header or the session cookie; without one it
// answers 401 with the login form, with a token whose role may not see it
// 403. Nothing here changes berthd's state: the only POSTs start or end a
// browser's session. When `plaintext_refused` (an HTTP port on a
// non-loopback address without TLS: berthd's rule for gRPC), every /ui
// request answers 403 saying so, and no token is ever read.
//
// Thread-safe: handlers run on httplib's worker threads; everything they
// use is thread-safe.
#ifndef BERTH_SERVER_WEB_DASHBOARD_H_
#define BERTH_SERVER_WEB_DASHBOARD_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "executor/logs/job_log_reader.h"
#include "executor/reconcile/plan_snapshot.h"
#include "executor/store/store.h"
#include "httplib.h"
#include "server/api/auth.h"
#include "server/core/executor_core.h"
#include "server/web/pages.h"
#include "server/web/ready_plans.h"
#include "server/web/usage_ring.h"
#include "server/web/web_auth.h"

namespace berth::web {

struct DashboardOptions {
  // Decisions on one plan page.
  int page_size = 100;
  // Pages refresh themselves this often (0: never).
  int refresh_seconds = 10;
  // The full-log page shows at most this much.
  int64_t max_log_bytes = int64_t{1} << 20;
  // The running and nodes pages list at most this many jobs.
  int max_listed_jobs = 2000;
  // The cookie gets "Secure" (the port is served over TLS).
  bool secure = false;
  // A browser session's lifetime from login (web_auth.h WebSessions).
  absl::Duration session_lifetime = absl::Hours(12);
  // Times the sessions; null: Clock::Real().
  Clock* clock = nullptr;
  // See above.
  bool plaintext_refused = false;
  // Event streams (see above).
  absl::Duration live_duration = absl::Seconds(30);
  int max_live_streams = 4;
  // The jobs page's rows per page; the events page's most recent events
  // searched and shown.
  int jobs_page_size = 100;
  int events_searched = 5000;
  int events_shown = 200;
  // berthd --log_cap (the job page marks larger kept logs as cut; 0: it
  // does not).
  int64_t log_cap_bytes = 0;
};

class Dashboard {
 public:
  // Every reference must outlive the dashboard and the server it is
  // registered with.
  Dashboard(const Authenticator& auth, ExecutorCore& core, const Store& store,
            PlanCache& plans, const JobLogReader& logs, const UsageRing& ring,
            DashboardOptions options);

  // Adds the routes above to `server` (before it listens).
  void Register(httplib::Server& server) const;

  // Cancels the plan forecasts in progress (ReadyPlans::Stop()) so that
  // stopping the server waits for no page's forecast; pages that need a
  // plan answer 503 from then on. Call before stopping the server.
  void Stop() {
    stopping_ = true;
    ready_->Stop();
  }

 private:
  // The caller's principal if it may call `method`; else fills `res` (401
  // with the login form, or 403) and returns nullopt.
  std::optional<Principal> Check(const httplib::Request& req, httplib::Response& res,
                                 const char* method) const;
  // The "authorization" to check: the Authorization header if the request
  // has one, else "Bearer <token>" of its live session, else "".
  // `*from_session` says which session it came from ("" if none).
  std::string AuthorizationOf(const httplib::Request& req, std::string* from_session) const;
  void Overview(const httplib::Request& req, httplib::Response& res) const;
  void Plan(const httplib::Request& req, httplib::Response& res) const;
  void Job(const httplib::Request& req, httplib::Response& res) const;
  void Log(const httplib::Request& req, httplib::Response& res) const;
  void LogDownload(const httplib::Request& req, httplib::Response& res) const;
  void LiveLog(const httplib::Request& req, httplib::Response& res) const;
  void Jobs(const httplib::Request& req, httplib::Response& res) const;
  void JobsCsv(const httplib::Request& req, httplib::Response& res) const;
  void Events(const httplib::Request& req, httplib::Response& res) const;
  void LiveEvents(const httplib::Request& req, httplib::Response& res) const;
  void Workspaces(const httplib::Request& req, httplib::Response& res) const;
  void RightSize(const httplib::Request& req, httplib::Response& res) const;
  // Fills the job page's events (among the most recent events_searched)
  // and decisions.
  void JobHistory(const std::string& id, JobPageData* data) const;
  // Opens a live stream's answer: takes one of max_live_streams and sets
  // the stream's safety headers; false (503 sent) when all are taken.
  // ReleaseLive() gives the slot back.
  bool OpenLive(httplib::Response& res) const;
  void ReleaseLive() const;
  void Running(const httplib::Request& req, httplib::Response& res) const;
  void Nodes(const httplib::Request& req, httplib::Response& res) const;
  void Chart(const httplib::Request& req, httplib::Response& res) const;
  // RUNNING and ADMITTED jobs, at most max_listed_jobs; `more` if cut.
  absl::StatusOr<std::vector<v1::Job>> HoldingJobs(bool* more) const;
  void Login(const httplib::Request& req, httplib::Response& res) const;

  const Authenticator& auth_;
  ExecutorCore& core_;
  const Store& store_;
  PlanCache& plans_;
  // The plan the overview, plan and job pages show (its forecast complete,
  // its positions built).
  const std::unique_ptr<ReadyPlans> ready_;
  const JobLogReader& logs_;
  const UsageRing& ring_;
  const DashboardOptions options_;
  const std::unique_ptr<WebSessions> sessions_;
  // Event streams open, and Stop() called (streams end).
  mutable std::atomic<int> live_streams_{0};
  std::atomic<bool> stopping_{false};
};

}  // namespace berth::web

#endif  // BERTH_SERVER_WEB_DASHBOARD_H_
