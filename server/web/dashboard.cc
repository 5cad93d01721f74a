#include "server/web/dashboard.h"

#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/web/dashboard_http.h"
#include "server/web/html.h"
#include "server/web/live_js.h"
#include "server/web/pages.h"
#include "server/web/plan_rows.h"
#include "server/web/web_auth.h"

namespace berth::web {

Dashboard::Dashboard(const Authenticator& auth, ExecutorCore& core, const Store& store,
                     PlanCache& plans, const JobLogReader& logs, const UsageRing& ring,
                     DashboardOptions options)
    : auth_(auth),
      core_(core),
      store_(store),
      plans_(plans),
      ready_(std::make_unique<ReadyPlans>(plans)),
      logs_(logs),
      ring_(ring),
      options_(std::move(options)),
      sessions_(std::make_unique<WebSessions>(
          options_.clock != nullptr ? *options_.clock : *Clock::Real(),
          WebSessions::Options{options_.session_lifetime})) {}

void Dashboard::Register(httplib::Server& server) const {
  if (options_.plaintext_refused) {
    auto refuse = [](const httplib::Request&, httplib::Response& res) {
      SendError(res, absl::PermissionDeniedError(
                         "the dashboard is not served in plaintext on a non-loopback address: "
                         "bind --metrics_listen to 127.0.0.1 (and reach it through an SSH "
                         "tunnel or a TLS proxy), or start berthd with --allow_plaintext_remote"));
    };
    server.Get(R"(/ui(/.*)?)", refuse);
    server.Post(R"(/ui(/.*)?)", refuse);
    return;
  }
  const Dashboard* self = this;
  server.Get("/ui", [self](const auto& req, auto& res) { self->Overview(req, res); });
  server.Get("/ui/", [self](const auto& req, auto& res) { self->Overview(req, res); });
  server.Get("/ui/plan", [self](const auto& req, auto& res) { self->Plan(req, res); });
  server.Get("/ui/job", [self](const auto& req, auto& res) { self->Job(req, res); });
  server.Get("/ui/running", [self](const auto& req, auto& res) { self->Running(req, res); });
  server.Get("/ui/nodes", [self](const auto& req, auto& res) { self->Nodes(req, res); });
  server.Get("/ui/chart", [self](const auto& req, auto& res) { self->Chart(req, res); });
  server.Get("/ui/log", [self](const auto& req, auto& res) { self->Log(req, res); });
  server.Get("/ui/log/download",
             [self](const auto& req, auto& res) { self->LogDownload(req, res); });
  server.Get("/ui/log/live", [self](const auto& req, auto& res) { self->LiveLog(req, res); });
  server.Get("/ui/jobs", [self](const auto& req, auto& res) { self->Jobs(req, res); });
  server.Get("/ui/jobs.csv", [self](const auto& req, auto& res) { self->JobsCsv(req, res); });
  server.Get("/ui/events", [self](const auto& req, auto& res) { self->Events(req, res); });
  server.Get("/ui/events/live",
             [self](const auto& req, auto& res) { self->LiveEvents(req, res); });
  server.Get("/ui/workspaces",
             [self](const auto& req, auto& res) { self->Workspaces(req, res); });
  server.Get("/ui/rightsize", [self](const auto& req, auto& res) { self->RightSize(req, res); });
  server.Get("/ui/static/live.js", [](const httplib::Request&, httplib::Response& res) {
    SetSafetyHeaders(res, false);
    res.set_content(kLiveJs, "text/javascript; charset=utf-8");
  });
  server.Get("/ui/login", [](const httplib::Request&, httplib::Response& res) {
    PageOptions po;
    po.title = "Log in";
    po.logged_in = false;
    SendHtml(res, 200, RenderPage(po, LoginBody("")));
  });
  server.Post("/ui/login", [self](const auto& req, auto& res) { self->Login(req, res); });
  server.Post("/ui/logout", [self](const httplib::Request& req, httplib::Response& res) {
    self->sessions_->End(SessionIdOf(req.get_header_value("Cookie")));
    res.set_header("Set-Cookie", ExpiredSessionCookie(self->options_.secure));
    res.set_redirect("/ui/login", 303);
  });
}

std::string Dashboard::AuthorizationOf(const httplib::Request& req,
                                       std::string* from_session) const {
  from_session->clear();
  std::string header = req.get_header_value("Authorization");
  if (!header.empty()) return header;
  std::string id = SessionIdOf(req.get_header_value("Cookie"));
  if (id.empty()) return "";
  std::optional<std::string> token = sessions_->TokenOf(id);
  if (!token.has_value()) return "";
  *from_session = std::move(id);
  return absl::StrCat("Bearer ", *token);
}

std::optional<Principal> Dashboard::Check(const httplib::Request& req, httplib::Response& res,
                                          const char* method) const {
  std::string session;
  const std::string authorization = AuthorizationOf(req, &session);
  absl::StatusOr<Principal> who = auth_.Authorize(method, authorization);
  if (who.ok()) return *std::move(who);
  if (who.status().code() == absl::StatusCode::kUnauthenticated) {
    // A session whose token was removed (--token_file reloaded) ends here.
    if (!session.empty()) sessions_->End(session);
    const char* why = "";
    if (!req.get_header_value("Authorization").empty()) {
      why = "That token is not valid.";
    } else if (!SessionIdOf(req.get_header_value("Cookie")).empty()) {
      why = "Your session has ended: log in again.";
    }
    PageOptions po;
    po.title = "Log in";
    po.logged_in = false;
    SendHtml(res, 401, RenderPage(po, LoginBody(why)));
  } else {
    SendError(res, who.status());
  }
  return std::nullopt;
}

void Dashboard::Login(const httplib::Request& req, httplib::Response& res) const {
  const std::string token = Param(req, "token");
  absl::StatusOr<Principal> who = auth_.Authorize(kPageMethod, absl::StrCat("Bearer ", token));
  if (!who.ok()) {
    PageOptions po;
    po.title = "Log in";
    po.logged_in = false;
    SendHtml(res, 401, RenderPage(po, LoginBody("That token is not valid.")));
    return;
  }
  res.set_header("Set-Cookie", SessionCookie(sessions_->Create(token),
                                             options_.session_lifetime, options_.secure));
  res.set_redirect("/ui", 303);
}

void Dashboard::Overview(const httplib::Request& req, httplib::Response& res) const {
  if (!Check(req, res, kPageMethod)) return;
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> snap = ready_->Get();
  if (!snap.ok()) return SendError(res, snap.status());
  OverviewData data;
  data.plan = ToProtoPlan(**snap, 1);
  data.plan.clear_decisions();
  ForecastDrain(**snap, &data);
  PageOptions po;
  po.title = "Overview";
  po.nav = Nav::kOverview;
  po.refresh_seconds = options_.refresh_seconds;
  SendHtml(res, 200, RenderPage(po, OverviewBody(data)));
}

void Dashboard::Plan(const httplib::Request& req, httplib::Response& res) const {
  if (!Check(req, res, kPageMethod)) return;
  PlanFilter f;
  f.workspace = Param(req, "workspace");
  f.pool = Param(req, "pool");
  f.verdict = Param(req, "verdict");
  if (f.verdict != "" && f.verdict != "admit" && f.verdict != "wait" && f.verdict != "reject") {
    return SendError(res, absl::InvalidArgumentError(
                              "verdict: must be admit, wait or reject (or empty for any)"));
  }
  const std::string page = Param(req, "page");
  if (!page.empty() && (!absl::SimpleAtoi(page, &f.page) || f.page < 1)) {
    return SendError(res, absl::InvalidArgumentError("page: must be a number >= 1"));
  }
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> snap = ready_->Get();
  if (!snap.ok()) return SendError(res, snap.status());
  PageOptions po;
  po.title = "Plan";
  po.nav = Nav::kPlan;
  po.refresh_seconds = options_.refresh_seconds;
  SendHtml(res, 200,
           RenderPage(po, PlanBody(SelectPlanRows(**snap, std::move(f), options_.page_size))));
}

void Dashboard::Job(const httplib::Request& req, httplib::Response& res) const {
  std::optional<Principal> who = Check(req, res, kPageMethod);
  if (!who) return;
  const std::string id = Param(req, "id");
  absl::StatusOr<v1::Job> job = core_.GetJob(id);
  if (!job.ok()) return SendError(res, job.status());
  JobPageData data;
  data.job = *std::move(job);
  if (data.job.state() == v1::JOB_STATE_QUEUED) {
    // From the plan the other pages show: ready, so no forecast or index
    // is made here.
    absl::StatusOr<std::shared_ptr<const PlanSnapshot>> snap = ready_->Get();
    if (!snap.ok()) return SendError(res, snap.status());
    absl::StatusOr<v1::Explanation> e = core_.ExplainJob(id, **snap);
    if (e.ok()) {
      // Admitted meanwhile, the answer is the store's, not the plan's.
      if (e->state() == v1::JOB_STATE_QUEUED) data.plan_made = (*snap)->now;
      data.explanation = *std::move(e);
    }
  } else {
    absl::StatusOr<v1::Explanation> e = core_.ExplainJob(id);
    if (e.ok()) data.explanation = *std::move(e);
  }
  std::string session;
  const std::string authorization = AuthorizationOf(req, &session);
  data.full_log_allowed = auth_.Authorize(kFullLogMethod, authorization).ok();
  data.env_values_allowed = auth_.Authorize(kOperatorMethod, authorization).ok();
  data.log_cap_bytes = options_.log_cap_bytes;
  JobHistory(id, &data);
  const bool live = data.full_log_allowed && (data.job.state() == v1::JOB_STATE_RUNNING ||
                                               data.job.state() == v1::JOB_STATE_ADMITTED);
  PageOptions po;
  po.title = absl::StrCat("Job ", id);
  // A live log is not reloaded away; the rest of the page is then as of
  // its load.
  po.refresh_seconds = live ? 0 : options_.refresh_seconds;
  po.live = live;
  SendHtml(res, 200, RenderPage(po, JobBody(data)), live);
}

absl::StatusOr<std::vector<v1::Job>> Dashboard::HoldingJobs(bool* more) const {
  std::vector<v1::Job> jobs;
  v1::ListJobsRequest req;
  req.add_states(v1::JOB_STATE_RUNNING);
  req.add_states(v1::JOB_STATE_ADMITTED);
  req.set_page_size(500);
  *more = false;
  do {
    absl::StatusOr<v1::ListJobsResponse> page = core_.ListJobs(req);
    if (!page.ok()) return page.status();
    for (v1::Job& j : *page->mutable_jobs()) {
      if (static_cast<int>(jobs.size()) >= options_.max_listed_jobs) {
        *more = true;
        return jobs;
      }
      jobs.push_back(std::move(j));
    }
    req.set_page_token(page->next_page_token());
  } while (!req.page_token().empty());
  return jobs;
}

void Dashboard::Running(const httplib::Request& req, httplib::Response& res) const {
  if (!Check(req, res, kPageMethod)) return;
  RunningPageData data;
  absl::StatusOr<std::vector<v1::Job>> jobs = HoldingJobs(&data.more);
  if (!jobs.ok()) return SendError(res, jobs.status());
  data.jobs = *std::move(jobs);
  data.now = absl::Now();
  PageOptions po;
  po.title = "Running";
  po.nav = Nav::kRunning;
  po.refresh_seconds = options_.refresh_seconds;
  SendHtml(res, 200, RenderPage(po, RunningBody(data)));
}

void Dashboard::Nodes(const httplib::Request& req, httplib::Response& res) const {
  if (!Check(req, res, kPageMethod)) return;
  NodesPageData data;
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> snap = plans_.Get();
  if (!snap.ok()) return SendError(res, snap.status());
  data.budgets = (*snap)->budgets;
  absl::StatusOr<std::vector<v1::Job>> jobs = HoldingJobs(&data.more);
  if (!jobs.ok()) return SendError(res, jobs.status());
  data.jobs = *std::move(jobs);
  PageOptions po;
  po.title = "Nodes";
  po.nav = Nav::kNodes;
  po.refresh_seconds = options_.refresh_seconds;
  SendHtml(res, 200, RenderPage(po, NodesBody(data)));
}

void Dashboard::Chart(const httplib::Request& req, httplib::Response& res) const {
  if (!Check(req, res, kPageMethod)) return;
  PageOptions po;
  po.title = "Last 24 hours";
  po.nav = Nav::kChart;
  po.refresh_seconds = 60;
  SendHtml(res, 200, RenderPage(po, ChartBody(ring_.Samples(), absl::Now())));
}

}  // namespace berth::web
