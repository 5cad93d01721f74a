// How long the dashboard's pages take with a large queue ("a page
// answers in <= 200 ms with 100k jobs queued"; the jobs, events, workspaces
// and right-sizing pages the same at 100k jobs kept): an ExecutorCore over a
// MemoryStore holding --jobs jobs (executor/reconcile/testing/bench_queue.h: 20 workspaces,
// 7 actions, priorities 0-3, 1 h estimates, 8 of them running, --finished
// of them finished, the rest queued), the Dashboard on a real httplib server
// on 127.0.0.1, and an HTTP client sending a reader's Bearer token. Each
// page is fetched --runs times; the plan is made first (as the reconciler
// does), the first fetch of the first page readies it — forecast and
// position index, as the first page after berthd's start does (reported
// apart) — the others use the ready plan, as between two syncs. Then --runs changes (a budget set, then the
// reconciler's replan), each followed by the first fetch of the overview,
// the plan page and a job page, and how long until the changed plan is
// shown; for comparison, after another change, ExplainJob of the latest
// plan (what the job page asked before it used the ready plan). Last, how
// long the dashboard's Stop() takes with a background forecast running
// (berthd's shutdown), and the process's resident memory before any page
// and after (a bounded number of plans, ready_plans.h). A bounded tool, not
// a test:
//   bazel run --config=bench //server/web:dashboard_benchmark -- --jobs=100000 --runs=7
//   (--finished=30000: 70k queued and 30k finished; --only=/ui/jobs: those
//   pages and the floors only, without the changes)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "executor/logs/job_log_reader.h"
#include "executor/logs/log_archive.h"
#include "executor/reconcile/plan_snapshot.h"
#include "executor/runtime/fake_runtime.h"
#include "executor/store/memory_store.h"
#include "httplib.h"
#include "planner/base/simulated_clock.h"
#include "server/api/auth.h"
#include "executor/reconcile/testing/bench_queue.h"
#include "server/core/executor_core.h"
#include "server/web/dashboard.h"

ABSL_FLAG(int, jobs, 100000, "queued jobs");
ABSL_FLAG(int, runs, 7, "fetches of each page (median reported)");
ABSL_FLAG(int, finished, 0, "of the jobs, this many have run and finished (every 4th failed)");
ABSL_FLAG(std::string, only, "",
          "fetch only the pages whose path starts with this (e.g. /ui/jobs); skips the "
          "changes and the shutdown");

namespace berth {
namespace {

constexpr char kToken[] = "reader-token-for-the-dashboard-benchmark";

double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

// A "VmRSS:"-style field of /proc/self/status, in MiB (-1 if unreadable).
double StatusMiB(const char* field) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  double kib = -1;
  const size_t n = std::strlen(field);
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, field, n) == 0) kib = std::atof(line + n);
  }
  std::fclose(f);
  return kib < 0 ? -1 : kib / 1024;
}

void PrintMedianMax(const char* what, std::vector<double> v) {
  if (v.empty()) return;
  std::sort(v.begin(), v.end());
  std::printf("%-48s median %.1f ms (max %.1f) over %zu\n", what, v[v.size() / 2], v.back(),
              v.size());
}

int Run() {
  const int n = absl::GetFlag(FLAGS_jobs);
  SimulatedClock clock;
  MemoryStore store;
  std::vector<std::string> ids;
  if (!FillBenchQueue(store, {n, 8, absl::GetFlag(FLAGS_finished)}, clock.Now(), &ids).ok()) {
    return 1;
  }
  v1::Budgets budgets = BenchBudgets();
  absl::Mutex admission;
  ExecutorCoreOptions options;
  options.image_allowed = [](absl::string_view) { return true; };
  PlanCache plans(store, clock, budgets, planner::Policy());
  ExecutorCore core(store, plans, clock, admission, options);
  absl::StatusOr<std::unique_ptr<LogArchive>> archive =
      LogArchive::Open({absl::StrCat(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp",
                                     "/dashboard_benchmark_logs"), int64_t{1} << 20});
  if (!archive.ok()) return 1;
  FakeRuntime runtime;
  JobLogReader logs(store, **archive, runtime);
  absl::StatusOr<Authenticator> auth =
      Authenticator::FromString(absl::StrCat("reader bench ", kToken, "\n"), "benchmark");
  if (!auth.ok()) return 1;
  web::UsageRing ring;
  for (int i = 0; i < 24 * 60; ++i) {
    web::UsageSample s;
    s.time = absl::Now() - absl::Minutes(24 * 60 - i);
    s.memory_budget = int64_t{256} << 30;
    s.memory_reserved = (int64_t{1} << 30) * (i % 200);
    s.queued = n - i;
    ring.Add(s);
  }
  // Without the dashboard: the store and the reconciler's plan.
  if (!plans.Refresh().ok()) return 1;
  const double rss_without = StatusMiB("VmRSS:");
  web::Dashboard dashboard(*auth, core, store, plans, logs, ring, {});
  std::printf("%d jobs kept: %zu queued, %d finished\n", n,
              store.JobsInState(v1::JOB_STATE_QUEUED).size(),
              static_cast<int>(store.JobsInState(v1::JOB_STATE_SUCCEEDED).size() +
                               store.JobsInState(v1::JOB_STATE_FAILED).size()));
  httplib::Server server;
  dashboard.Register(server);
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { server.listen_after_bind(); });
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(300, 0);  // the first page at 1M readies the plan: seconds
  const httplib::Headers headers = {{"Authorization", absl::StrCat("Bearer ", kToken)}};
  const std::string mid = ids[static_cast<size_t>(n / 2)];
  const std::vector<std::string> pages = {
      "/ui",  "/ui/plan", "/ui/plan?page=500", "/ui/plan?workspace=ws7&verdict=wait&page=20",
      absl::StrCat("/ui/job?id=", mid), "/ui/running", "/ui/nodes", "/ui/chart",
      // Every kept job: the newest first; filtered and deep; by action
      // (each record's bytes read); by id prefix; finished ones by end.
      "/ui/jobs", "/ui/jobs?state=queued&workspace=ws7&sort=priority&page=40",
      "/ui/jobs?action=act3&sort=oldest", "/ui/jobs?id=ws3.job-1&sort=id",
      "/ui/jobs?state=failed&sort=finished", "/ui/jobs.csv?state=failed", "/ui/jobs.csv",
      "/ui/events", "/ui/events?state=failed",
      "/ui/workspaces", "/ui/rightsize"};
  int status = 0;
  const std::string only = absl::GetFlag(FLAGS_only);
  for (size_t p = 0; p < pages.size(); ++p) {
    if (!only.empty() && pages[p].rfind(only, 0) != 0) continue;
    std::vector<double> ms;
    size_t bytes = 0;
    for (int r = 0; r < absl::GetFlag(FLAGS_runs) + (p == 0 ? 1 : 0); ++r) {
      absl::Time a = absl::Now();
      auto res = client.Get(pages[p].c_str(), headers);
      const double took = Ms(absl::Now() - a);
      if (p == 0 && r == 0) {
        // The first page after start: at once "being prepared" (503, the
        // page reloads itself) while the plan is readied in the background,
        // for queues a page does not ready itself (server/web/ready_plans.h).
        double until_ready = took;
        while (res && res->status == 503) {
          absl::SleepFor(absl::Milliseconds(20));
          res = client.Get(pages[p].c_str(), headers);
          until_ready = Ms(absl::Now() - a);
        }
        std::printf("%-48s first fetch: answered in %.1f ms; the plan shown after %.1f ms\n",
                    pages[p].c_str(), took, until_ready);
        if (!res || res->status != 200) {
          std::fprintf(stderr, "%s: %d\n", pages[p].c_str(), res ? res->status : -1);
          status = 1;
          break;
        }
        continue;
      }
      if (!res || res->status != 200) {
        std::fprintf(stderr, "%s: %d\n", pages[p].c_str(), res ? res->status : -1);
        status = 1;
        break;
      }
      bytes = res->body.size();
      ms.push_back(took);
    }
    if (ms.empty()) continue;
    std::sort(ms.begin(), ms.end());
    std::printf("%-48s median %.1f ms (min %.1f, max %.1f) over %zu; %zu bytes\n",
                pages[p].c_str(), ms[ms.size() / 2], ms.front(), ms.back(), ms.size(), bytes);
  }
  // The floors of the jobs and workspaces pages, in the same run: the
  // store's ListJobs of one page (100 rows in id order, every state); one
  // visit of every kept job's record in the store's index, reading its
  // workspace (what a page that counts or filters every job cannot do
  // without: the floor the pages are measured against); and, for
  // comparison, the same pass over copies of the index (JobsInState, how
  // the pages read before).
  {
    std::vector<double> list_ms, pass_ms, visit_ms;
    for (int r = 0; r < absl::GetFlag(FLAGS_runs); ++r) {
      JobFilter jf;
      jf.page_size = 100;
      absl::Time a = absl::Now();
      absl::StatusOr<JobPage> page = store.ListJobs(jf);
      list_ms.push_back(Ms(absl::Now() - a));
      if (!page.ok()) return 1;
      a = absl::Now();
      size_t kept = 0, named = 0;
      for (int st = v1::JOB_STATE_QUEUED; st <= v1::JOB_STATE_REJECTED; ++st) {
        for (const JobRecord& j : store.JobsInState(static_cast<v1::JobState>(st))) {
          ++kept;
          named += j->workspace().size();
        }
      }
      pass_ms.push_back(Ms(absl::Now() - a));
      if (kept != static_cast<size_t>(n) || named == 0) return 1;
      a = absl::Now();
      kept = named = 0;
      for (int st = v1::JOB_STATE_QUEUED; st <= v1::JOB_STATE_REJECTED; ++st) {
        store.VisitJobsInState(static_cast<v1::JobState>(st), [&](const JobRecord& j) {
          ++kept;
          named += j->workspace().size();
        });
      }
      visit_ms.push_back(Ms(absl::Now() - a));
      if (kept != static_cast<size_t>(n) || named == 0) return 1;
    }
    PrintMedianMax("floor: store ListJobs, 100 rows", list_ms);
    PrintMedianMax("floor: one visit of every kept record (in place)", visit_ms);
    PrintMedianMax("compare: one pass over copies of the index", pass_ms);
  }
  // Every page viewed, the plan ready (forecast, index), nothing changed.
  const double rss_viewed = StatusMiB("VmRSS:");
  // After a change: the reconciler has planned (not timed: its pass, not the
  // page's), then the overview and the first plan page are fetched. They show
  // the newest plan whose forecast is complete (server/web/ready_plans.h);
  // `shown after` is how long until the changed plan itself is shown (its
  // forecast completed in the background).
  std::vector<double> overview_ms, plan_ms, job_ms, shown_ms, explain_ms;
  int workers = 24;
  auto change = [&]() -> bool {  // a budget set, then the reconciler's replan
    workers = workers == 24 ? 25 : 24;
    budgets.set_max_workers(workers);
    return store.SetBudgets(budgets, clock.Now()).ok() && plans.Refresh().ok();
  };
  const std::string job_page = absl::StrCat("/ui/job?id=", mid);
  for (int r = 0; r < absl::GetFlag(FLAGS_runs) && status == 0 && only.empty(); ++r) {
    if (!change()) return 1;
    const std::string revision = absl::StrCat("plan revision ", store.CurrentRevision(), ",");
    const absl::Time changed = absl::Now();
    for (std::vector<double>* v : {&overview_ms, &plan_ms, &job_ms}) {
      const std::string& page = v == &overview_ms ? pages[0] : v == &plan_ms ? pages[1] : job_page;
      absl::Time a = absl::Now();
      auto res = client.Get(page.c_str(), headers);
      if (!res || res->status != 200) return 1;
      v->push_back(Ms(absl::Now() - a));
      if (v == &job_ms && res->body.find("id=\"planof\"") == std::string::npos) {
        std::fprintf(stderr, "the job page does not name its plan\n");
        return 1;
      }
    }
    for (;;) {  // until the page shows the changed plan (a condition)
      auto res = client.Get("/ui", headers);
      if (!res || res->status != 200) return 1;
      if (res->body.find(revision) != std::string::npos) break;
      absl::SleepFor(absl::Milliseconds(5));
    }
    shown_ms.push_back(Ms(absl::Now() - changed));
    // Before: ExplainJob of the latest plan, which builds its position
    // index and forecasts as far as the job needs.
    if (!change()) return 1;
    absl::Time a = absl::Now();
    if (!core.ExplainJob(mid).ok()) return 1;
    explain_ms.push_back(Ms(absl::Now() - a));
  }
  PrintMedianMax("after a change: /ui", overview_ms);
  PrintMedianMax("after a change: /ui/plan", plan_ms);
  PrintMedianMax("after a change: /ui/job (first fetch)", job_ms);
  PrintMedianMax("after a change: new plan shown after", shown_ms);
  PrintMedianMax("before: ExplainJob of the latest plan", explain_ms);
  // berthd's shutdown with a background forecast running: a change, a page
  // (which schedules the changed plan's forecast), then Stop().
  if (status == 0 && only.empty()) {
    if (!change()) return 1;
    std::shared_ptr<const PlanSnapshot> changed = plans.Latest();
    auto res = client.Get("/ui", headers);
    if (!res || res->status != 200) return 1;
    absl::Time a = absl::Now();
    dashboard.Stop();
    const double stop_ms = Ms(absl::Now() - a);
    const planner::StartEstimateTable* t = changed->estimates_if_computed();
    std::printf("%-48s %.1f ms (the forecast was %s)\n", "Stop() during a background forecast",
                stop_ms, t != nullptr && t->complete() ? "complete" : "cancelled");
  }
  std::printf("resident memory: %.0f MiB without the dashboard (store + one plan), %.0f MiB "
              "with every page viewed, %.0f MiB after the changes (and the ExplainJob "
              "comparison; peak %.0f MiB)\n",
              rss_without, rss_viewed, StatusMiB("VmRSS:"), StatusMiB("VmHWM:"));
  server.stop();
  serving.join();
  return status;
}

}  // namespace
}  // namespace berth

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each figure as it is measured
  return berth::Run();
}
