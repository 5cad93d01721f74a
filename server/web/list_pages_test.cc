// The list pages (jobs, events, workspaces, right-sizing) show every
// job-provided string as text, keep each filter in their links, and the
// live parts' framing cannot be broken by what a job writes.
#include "server/web/list_pages.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/store/memory_store.h"
#include "gtest/gtest.h"
#include "planner/base/simulated_clock.h"
#include "planner/base/units.h"
#include "server/web/live_js.h"
#include "server/web/pages.h"

namespace berth::web {
namespace {

constexpr char kHostile[] = "x<script>document.title='pwned'</script>\"'><img src=x onerror=1>";
constexpr char kEscaped[] =
    "x&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;&quot;&#39;&gt;&lt;img src=x "
    "onerror=1&gt;";
constexpr char kQuery[] = "x%3Cscript%3Edocument.title%3D%27pwned%27";

void ExpectNoMarkupFrom(const std::string& html) {
  EXPECT_EQ(html.find("<script"), std::string::npos) << html;
  EXPECT_EQ(html.find("<img"), std::string::npos) << html;
  EXPECT_NE(html.find(kEscaped), std::string::npos) << html;
}

TEST(JobsBody, EscapesRowsAndKeepsFiltersInLinks) {
  JobListData d;
  d.filter.state = v1::JOB_STATE_FAILED;
  d.filter.workspace = kHostile;
  d.filter.action = kHostile;
  d.filter.id_prefix = kHostile;
  d.filter.priority = 3;
  d.filter.sort = JobSort::kFinished;
  d.filter.page = 2;
  d.page_size = 1;
  d.matching = 3;
  d.kept = 10;
  JobListRow r;
  r.id = kHostile;
  r.state = v1::JOB_STATE_FAILED;
  r.workspace = kHostile;
  r.pool = kHostile;
  r.action = kHostile;
  r.memory_bytes = int64_t{2} << 30;
  r.cpu_millis = 500;
  r.finished_at = absl::FromUnixSeconds(1'800'000'000);
  r.has_exit_code = true;
  r.exit_code = 3;
  d.rows.push_back(r);
  const std::string html = JobsBody(d);
  ExpectNoMarkupFrom(html);
  EXPECT_NE(html.find("3 of 10 kept jobs match; page 2 of 3, sorted by finished"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find(absl::StrCat("href=\"/ui/job?id=", kQuery)), std::string::npos);
  // The next page keeps every filter and the order.
  EXPECT_NE(html.find(absl::StrCat("id=\"next\" href=\"/ui/jobs?state=failed&amp;workspace=",
                                   kQuery)),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("sort=finished&amp;page=3"), std::string::npos) << html;
  EXPECT_NE(html.find("<option value=\"failed\" selected>"), std::string::npos);
  EXPECT_NE(html.find("<td>3</td></tr>"), std::string::npos);
  EXPECT_NE(html.find("2 GiB, 0.5 cores"), std::string::npos);
}

TEST(JobsBody, LinksTheCsvOfTheSameFiltersWithoutThePage) {
  JobListData d;
  d.filter.state = v1::JOB_STATE_FAILED;
  d.filter.workspace = kHostile;
  d.filter.sort = JobSort::kOldest;
  d.filter.page = 4;
  const std::string html = JobsBody(d);
  ExpectNoMarkupFrom(html);
  EXPECT_NE(html.find(absl::StrCat("id=\"csv\" href=\"/ui/jobs.csv?state=failed&amp;workspace=",
                                   kQuery)),
            std::string::npos)
      << html;
  const size_t csv = html.find("id=\"csv\"");
  const std::string link = html.substr(csv, html.find('>', csv) - csv);
  EXPECT_NE(link.find("sort=oldest"), std::string::npos) << link;
  EXPECT_EQ(link.find("page="), std::string::npos) << link;
}

TEST(CsvCell, DefusesFormulasAndQuotes) {
  EXPECT_EQ(CsvCell("plain.job-1"), "plain.job-1");
  EXPECT_EQ(CsvCell(""), "");
  EXPECT_EQ(CsvCell("=HYPERLINK(\"http://x\")"), "\"'=HYPERLINK(\"\"http://x\"\")\"");
  EXPECT_EQ(CsvCell("+1"), "'+1");
  EXPECT_EQ(CsvCell("-2+3"), "'-2+3");
  EXPECT_EQ(CsvCell("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(CsvCell("\tx"), "'\tx");
  EXPECT_EQ(CsvCell("\rx"), "\"'\rx\"");
  EXPECT_EQ(CsvCell("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvCell("line\nbreak"), "\"line\nbreak\"");
  EXPECT_EQ(CsvCell("a=b"), "a=b");  // only a leading sign starts a formula
}

TEST(JobsCsvLines, ChunksTogetherAreTheWholeExport) {
  SimulatedClock clock;
  MemoryStore store;
  SnapshotRequest snap;
  snap.generation = 1;
  for (int i = 0; i < 25; ++i) {
    v1::JobSpec j;
    j.set_id(absl::StrCat("ws", i % 3, ".job-", i));
    j.set_workspace(absl::StrCat("ws", i % 3));
    j.set_action(i % 2 ? "=act" : "act, \"two\"");
    j.set_image("berth-test/busybox:1");
    j.add_argv("true");
    j.set_priority(i % 4);
    j.mutable_resources()->set_memory_bytes(int64_t{1} << 20);
    j.mutable_resources()->set_cpu_millis(100);
    j.mutable_created_at()->set_seconds(1'800'000'000 + i);
    snap.jobs.push_back(j);
  }
  ASSERT_TRUE(store.ApplySnapshot(snap, clock.Now()).ok());
  JobListFilter f;
  f.sort = JobSort::kPriority;
  JobListData counts;
  const std::vector<JobRecord> records =
      SelectAllJobs(store, f, std::numeric_limits<size_t>::max(), &counts);
  ASSERT_EQ(records.size(), 25u);
  std::string chunked = JobsCsvHeader();
  size_t next = 0;
  std::vector<size_t> lines_per_chunk;
  for (std::string chunk; !(chunk = JobsCsvLines(records, &next, 7)).empty();) {
    lines_per_chunk.push_back(static_cast<size_t>(std::count(chunk.begin(), chunk.end(), '\n')));
    chunked += chunk;
  }
  EXPECT_EQ(next, 25u);
  EXPECT_EQ(lines_per_chunk, (std::vector<size_t>{7, 7, 7, 4}));
  EXPECT_EQ(chunked, JobsCsv(SelectJobs(store, f, 1000)));
  EXPECT_NE(chunked.find(",'=act,"), std::string::npos) << chunked;
}

TEST(JobsCsv, OneLinePerRowWithEveryTextCellDefused) {
  JobListData d;
  JobListRow r;
  r.id = "ws1.job-7";
  r.state = v1::JOB_STATE_FAILED;
  r.workspace = "=cmd|' /C calc'!A0";
  r.pool = "";
  r.action = "say \"hi\", then <b>";
  r.priority = -1;
  r.memory_bytes = 1024;
  r.cpu_millis = 500;
  r.created_at = absl::FromUnixSeconds(1'800'000'000);
  r.finished_at = absl::FromUnixSeconds(1'800'000'060);
  r.has_exit_code = true;
  r.exit_code = 3;
  d.rows.push_back(r);
  r.id = "ws1.job-8";
  r.state = v1::JOB_STATE_QUEUED;
  r.workspace = "ws1";
  r.pool = "gpu";
  r.action = "@import";
  r.finished_at.reset();
  r.has_exit_code = false;
  d.rows.push_back(r);
  const std::string csv = JobsCsv(d);
  EXPECT_EQ(csv,
            "id,state,workspace,pool,action,priority,memory_bytes,cpu_millis,created,finished,"
            "exit_code\r\n"
            "ws1.job-7,failed,'=cmd|' /C calc'!A0,default,\"say \"\"hi\"\", then <b>\","
            "-1,1024,500," +
                FormatTimeUtc(absl::FromUnixSeconds(1'800'000'000)) + "," +
                FormatTimeUtc(absl::FromUnixSeconds(1'800'000'060)) +
                ",3\r\n"
                "ws1.job-8,queued,ws1,gpu,'@import,-1,1024,500," +
                FormatTimeUtc(absl::FromUnixSeconds(1'800'000'000)) + ",,\r\n");
}

TEST(JobListFilter, ParsesAndRejectsWithTheField) {
  auto from = [](std::map<std::string, std::string> m) {
    return ParseJobListFilter([m](const char* n) {
      auto it = m.find(n);
      return it == m.end() ? std::string() : it->second;
    });
  };
  absl::StatusOr<JobListFilter> f =
      from({{"state", "Succeeded"}, {"priority", "-2"}, {"sort", "id"}, {"page", "4"}});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->state, v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(f->priority, -2);
  EXPECT_EQ(f->sort, JobSort::kId);
  EXPECT_EQ(f->page, 4);
  EXPECT_EQ(JobListQuery(*f, true), "state=succeeded&priority=-2&sort=id&page=4");
  for (auto [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"state", "done"}, {"priority", "high"}, {"sort", "size"}, {"page", "0"}}) {
    absl::StatusOr<JobListFilter> bad = from({{name, value}});
    ASSERT_FALSE(bad.ok()) << name;
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(bad.status().message().find(name + ":"), std::string::npos) << bad.status();
  }
}

TEST(EventsBody, EscapesEventsAndStreamsWithTheFilter) {
  EventsPageData d;
  d.filter.job_prefix = kHostile;
  d.filter.type = "job_state_changed";
  d.current_revision = 41;
  d.searched = 5;
  v1::Event e;
  e.set_revision(40);
  e.set_type(v1::EVENT_TYPE_JOB_STATE_CHANGED);
  e.set_job_id(kHostile);
  e.set_workspace(kHostile);
  e.set_message(kHostile);
  e.set_previous_state(v1::JOB_STATE_RUNNING);
  e.set_state(v1::JOB_STATE_FAILED);
  d.events.push_back(e);
  const std::string html = EventsBody(d);
  ExpectNoMarkupFrom(html);
  EXPECT_NE(html.find("running -&gt; failed"), std::string::npos);
  EXPECT_NE(html.find(absl::StrCat("data-live=\"/ui/events/live?type=job_state_changed&amp;job=",
                                   kQuery)),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("after=41\""), std::string::npos);
  // The live rows link their job column (EventCells' 4th cell, the job id)
  // to the job's page, like the rows written here.
  EXPECT_NE(html.find("<table id=\"events\" data-link-col=\"3\" data-live="), std::string::npos);
  EXPECT_EQ(EventCells(e)[3], kHostile);
  EXPECT_TRUE(EventMatches(d.filter, e));
  EventFilter other = d.filter;
  other.state = "succeeded";
  EXPECT_FALSE(EventMatches(other, e));
  other = d.filter;
  other.job_prefix = "y";
  EXPECT_FALSE(EventMatches(other, e));
  auto none = [](const char*) { return std::string(); };
  EXPECT_TRUE(ParseEventFilter(none).ok());
  EXPECT_FALSE(ParseEventFilter([](const char* n) {
                 return std::string(n) == "type" ? "nonsense" : "";
               }).ok());
}

TEST(WorkspacesBody, CountsWaitsAndShares) {
  WorkspacesPageData d;
  d.budgets.set_memory_bytes(int64_t{10} << 30);
  d.budgets.set_cpu_millis(10000);
  WorkspaceStats a;
  a.workspace = kHostile;
  a.queued = 4;
  a.running = 1;
  a.succeeded = 7;
  a.memory_bytes = int64_t{6} << 30;
  a.cpu_millis = 1000;
  a.median_wait = absl::Minutes(90);
  WorkspaceStats b;
  b.workspace = "quiet";
  b.queued = 1;
  d.rows = {a, b};
  const std::string html = WorkspacesBody(d);
  ExpectNoMarkupFrom(html);
  // Two with work: 50% each; the first holds 60% of the memory, over it.
  EXPECT_NE(html.find("fair share of 50.0% each"), std::string::npos) << html;
  EXPECT_NE(html.find("class=\"warn\">60.0% / 50.0%"), std::string::npos) << html;
  EXPECT_NE(html.find("1h30m"), std::string::npos);
  EXPECT_NE(html.find(absl::StrCat("href=\"/ui/jobs?workspace=", kQuery)), std::string::npos);
}

TEST(RightSizeBody, EscapesActions) {
  RightSizePageData d;
  d.workspace = kHostile;
  d.answer.set_total_wasted_gib_hours(12.5);
  v1::ActionUsage* a = d.answer.add_actions();
  a->set_workspace(kHostile);
  a->set_action(kHostile);
  a->set_runs(9);
  a->set_succeeded(8);
  a->set_asked_memory_bytes(int64_t{16} << 30);
  a->set_suggested_memory_bytes(int64_t{4} << 30);
  a->set_wasted_gib_hours(12.5);
  const std::string html = RightSizeBody(d);
  ExpectNoMarkupFrom(html);
  EXPECT_NE(html.find("12.5 GiB-hours"), std::string::npos);
  EXPECT_NE(html.find("<td>9 (8, 0)</td><td>16 GiB</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td>4 GiB</td>"), std::string::npos);
}

// What a job writes cannot end an SSE message early or add fields: each
// line becomes its own "data:" line, and '\r' (a line end to SSE) is dropped.
TEST(LiveJs, SseFramingAndJsonCells) {
  EXPECT_EQ(SseMessage("1.2.3", "a\nb\r\n\ndata: x"),
            "id: 1.2.3\ndata: a\ndata: b\ndata: \ndata: data: x\n\n");
  EXPECT_EQ(SseMessage("", "", "end"), "event: end\ndata: \n\n");
  EXPECT_EQ(JsonStrings({"a\"b\\c", "\n<x>"}), "[\"a\\\"b\\\\c\",\"\\u000a<x>\"]");
  EXPECT_NE(std::string(kLiveJs).find("textContent"), std::string::npos);
  EXPECT_EQ(std::string(kLiveJs).find("innerHTML"), std::string::npos);
}

}  // namespace
}  // namespace berth::web
