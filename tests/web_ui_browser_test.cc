// berthd's dashboard (/ui) in a real browser: Debian's headless
// chromium, driven by tests/web_ui_browser.py through chromedriver, against
// a live berthd running real containers. Checks the login (cookie HttpOnly,
// SameSite=Strict), every page's content, that hostile strings from jobs
// (an action and log lines with <script> / onerror markup) are shown as text
// and never run, the reader/operator split of the full log; keeps a
// screenshot of each page in TEST_UNDECLARED_OUTPUTS_DIR. Fails (never
// skips) when chromium, chromedriver or python3-selenium is missing.
// Also checks the Bearer header (as curl sends it) over plain HTTP. Then
// what an operator or researcher asks: a finished job found by search and
// opened, its attempt's log read (tail, download), a running job's log
// watched as it grows, the events filtered and followed live.
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "tests/berthd_process.h"
#include "tools/base/subprocess.h"

namespace berth {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
// Valid as an action (<= 128 characters); sets the title if it ever runs.
constexpr char kHostileAction[] = "<script>document.title='pwned'</script>";
// Echoed by the job: adds a <pwned> element if it ever runs.
constexpr char kHostileLog[] =
    "<img src=x onerror=\"document.body.append(document.createElement(`pwned`))\">";

class WebUiBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BerthdProcessOptions o;
    o.memory = "1Gi";
    o.cpus = "2";
    o.tick = "200ms";
    o.stop_grace = "1s";
    absl::StatusOr<std::unique_ptr<BerthdProcess>> b = BerthdProcess::Start(o);
    ASSERT_TRUE(b.ok()) << b.status();
    b_ = *std::move(b);
    prefix_ = UniqueJobPrefix();
  }
  bool WaitState(const std::string& id, v1::JobState state) {
    std::unique_ptr<BerthClient> c = b_->Client(Role::kReader);
    return WaitFor(
        [&] {
          absl::StatusOr<v1::Job> j = c->GetJob(id);
          return j.ok() && j->state() == state;
        },
        absl::Seconds(60));
  }
  std::unique_ptr<BerthdProcess> b_;
  std::string prefix_;
};

TEST_F(WebUiBrowserTest, EveryPageInHeadlessChromium) {
  const std::string running = prefix_ + "running";
  const std::string done = prefix_ + "done";
  const std::string waiting = prefix_ + "waiting";
  const std::string growing = prefix_ + "growing";
  const std::string finisher = prefix_ + "finisher";
  const std::string workspace = "ws-web";
  const std::string echo = absl::StrCat("echo '", kHostileLog, "'; echo 'second line'");
  v1::Snapshot s;
  s.set_generation(1);
  *s.add_jobs() = BusyboxJob(running, "ws-run", 64 * kMiB, "sleep 300");
  *s.add_jobs() = BusyboxJob(done, "ws-done", 64 * kMiB, echo);
  *s.add_jobs() = BusyboxJob(growing, "ws-run", 64 * kMiB,
                             "i=0; while true; do echo tick-$i; i=$((i+1)); sleep 1; done");
  // Ends while the browser watches the events page (its first page).
  *s.add_jobs() = BusyboxJob(finisher, "ws-run", 64 * kMiB, "sleep 60");
  absl::StatusOr<v1::SyncSnapshotResponse> r = b_->Client(Role::kPusher)->Sync(s);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(WaitState(running, v1::JOB_STATE_RUNNING)) << b_->Log();
  ASSERT_TRUE(WaitState(done, v1::JOB_STATE_SUCCEEDED)) << b_->Log();
  ASSERT_TRUE(WaitState(growing, v1::JOB_STATE_RUNNING)) << b_->Log();
  ASSERT_TRUE(WaitState(finisher, v1::JOB_STATE_RUNNING)) << b_->Log();
  // Then a job that waits for memory (1000 MiB; 960 MiB are free).
  s.set_generation(2);
  v1::JobSpec big = BusyboxJob(waiting, workspace, 1000 * kMiB, "true");
  big.set_action(kHostileAction);
  *s.add_jobs() = big;
  r = b_->Client(Role::kPusher)->Sync(s);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(WaitState(waiting, v1::JOB_STATE_QUEUED)) << b_->Log();
  // The plan page shows the last plan: one made before the job arrived does
  // not list it, by contract.
  ASSERT_TRUE(WaitPlanned(*b_->Client(Role::kReader), waiting, absl::Seconds(60)).ok())
      << b_->Log();

  // curl's way in: the Bearer header; none (or a bad one) gets the login form.
  httplib::Client http("127.0.0.1", b_->metrics_port());
  auto none = http.Get("/ui/plan");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(none->body.find(waiting), std::string::npos);
  auto bad = http.Get("/ui/plan", {{"Authorization", "Bearer wrong-token-0123456789"}});
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 401);
  auto ok = http.Get("/ui/plan", {{"Authorization", "Bearer " + TokenFor(Role::kReader)}});
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_NE(ok->body.find(waiting), std::string::npos);
  EXPECT_NE(ok->get_header_value("Content-Security-Policy").find("default-src 'none'"),
            std::string::npos);
  const httplib::Headers reader = {{"Authorization", "Bearer " + TokenFor(Role::kReader)}};
  for (const std::string& path :
       {absl::StrCat("/ui/log?id=", done), absl::StrCat("/ui/log?id=", done, "&part=tail"),
        absl::StrCat("/ui/log/download?id=", done, "&attempt=1"),
        absl::StrCat("/ui/log/live?id=", growing)}) {
    auto denied = http.Get(path, reader);
    ASSERT_TRUE(denied) << path;
    EXPECT_EQ(denied->status, 403) << path;
    EXPECT_EQ(denied->body.find("second line"), std::string::npos) << path;
  }
  // Bad filters: a clear error naming the field.
  auto bad_state = http.Get("/ui/jobs?state=finished", reader);
  ASSERT_TRUE(bad_state);
  EXPECT_EQ(bad_state->status, 400);
  EXPECT_NE(bad_state->body.find("state: unknown state"), std::string::npos) << bad_state->body;
  auto bad_csv = http.Get("/ui/jobs.csv?priority=high", reader);
  ASSERT_TRUE(bad_csv);
  EXPECT_EQ(bad_csv->status, 400);
  EXPECT_NE(bad_csv->body.find("priority:"), std::string::npos) << bad_csv->body;
  auto no_token_csv = http.Get("/ui/jobs.csv");
  ASSERT_TRUE(no_token_csv);
  EXPECT_NE(no_token_csv->status, 200);
  EXPECT_EQ(no_token_csv->body.find(waiting), std::string::npos);
  // The CSV of one workspace: its jobs, as a file never sniffed as a page.
  auto csv = http.Get(absl::StrCat("/ui/jobs.csv?workspace=", workspace), reader);
  ASSERT_TRUE(csv);
  EXPECT_EQ(csv->status, 200);
  EXPECT_EQ(csv->get_header_value("Content-Type"), "text/csv; charset=utf-8");
  EXPECT_EQ(csv->get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_NE(csv->body.find(absl::StrCat("\r\n", waiting, ",queued,", workspace, ",")),
            std::string::npos)
      << csv->body;
  EXPECT_EQ(csv->body.find(done), std::string::npos) << csv->body;
  auto bad_type = http.Get("/ui/events?type=nonsense", reader);
  ASSERT_TRUE(bad_type);
  EXPECT_EQ(bad_type->status, 400);
  // Pages without live parts allow no script at all; the live ones only
  // berthd's own file, which is the only script served.
  auto jobs = http.Get("/ui/jobs", reader);
  ASSERT_TRUE(jobs);
  EXPECT_EQ(jobs->status, 200);
  EXPECT_EQ(jobs->get_header_value("Content-Security-Policy").find("script-src"),
            std::string::npos);
  auto events = http.Get("/ui/events", reader);
  ASSERT_TRUE(events);
  EXPECT_NE(events->get_header_value("Content-Security-Policy").find("script-src 'self'"),
            std::string::npos);
  const std::string csp = events->get_header_value("Content-Security-Policy");
  EXPECT_EQ(csp.find("'unsafe-inline'"), csp.rfind("'unsafe-inline'")) << csp;  // styles only
  EXPECT_NE(csp.find("style-src 'unsafe-inline'"), std::string::npos) << csp;
  auto js = http.Get("/ui/static/live.js");
  ASSERT_TRUE(js);
  EXPECT_EQ(js->status, 200);
  EXPECT_NE(js->get_header_value("Content-Type").find("javascript"), std::string::npos);

  const char* outputs = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  const std::string outdir = outputs != nullptr ? outputs : TmpDir() + "/web_ui_screenshots";
  ProcessResult p = RunProcess(
      {"/usr/bin/python3", "tests/web_ui_browser.py",
       "--base", absl::StrCat("http://127.0.0.1:", b_->metrics_port()),
       "--reader", TokenFor(Role::kReader), "--operator", TokenFor(Role::kOperator),
       "--outdir", outdir, "--running", running, "--waiting", waiting, "--done", done,
       "--workspace", workspace, "--hostile-action", kHostileAction,
       "--hostile-log", kHostileLog, "--memory-budget", "1 GiB", "--growing", growing,
       "--finisher", finisher},
      {{"HOME", TmpDir()}}, absl::Minutes(3));
  EXPECT_EQ(p.exit_code, 0) << "stdout:\n" << p.out << "\nstderr:\n" << p.err;
  EXPECT_NE(p.out.find("all checks passed"), std::string::npos) << p.out;
}

}  // namespace
}  // namespace berth
