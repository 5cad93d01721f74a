#include "tools/plan/report.h"

#include "gtest/gtest.h"

namespace berth::plan {
namespace {

Report Sample() {
  Report r;
  r.title = "Simulation of \"burst\"";
  r.summary.push_back({"makespan_s", "makespan", Cell::Int(5400, "1h30m")});
  r.summary.push_back({"ok", "all done", Cell::Bool(true)});
  Table t;
  t.name = "by_priority";
  t.title = "Waits by priority";
  t.columns = {{"priority", "priority"}, {"jobs", "jobs"}, {"p95_wait_s", "p95 wait"}};
  t.rows.push_back({Cell::Int(2), Cell::Int(10), Cell::Num(90.5, "1m30s")});
  t.rows.push_back({Cell::Str("a,b"), Cell::Int(120), Cell::Null()});
  r.tables.push_back(t);
  r.notes.push_back("note: x");
  return r;
}

TEST(Render, HumanTableAlignsColumnsAndShowsUnits) {
  EXPECT_EQ(Render(Sample(), OutputFormat::kTable),
            "Simulation of \"burst\"\n"
            "  makespan: 1h30m\n"
            "  all done: yes\n"
            "\n"
            "Waits by priority\n"
            "  priority  jobs  p95 wait\n"
            "  --------  ----  --------\n"
            "         2    10     1m30s\n"
            "       a,b   120         -\n"
            "\n"
            "note: x\n");
}

TEST(Render, CsvQuotesAndUsesMachineValues) {
  EXPECT_EQ(Render(Sample(), OutputFormat::kCsv),
            "# summary\n"
            "key,value\n"
            "makespan_s,5400\n"
            "ok,true\n"
            "\n"
            "# by_priority\n"
            "priority,jobs,p95_wait_s\n"
            "2,10,90.5\n"
            "\"a,b\",120,\n");
}

TEST(Render, JsonIsStructuredAndEscaped) {
  EXPECT_EQ(Render(Sample(), OutputFormat::kJson),
            "{\n"
            "  \"title\": \"Simulation of \\\"burst\\\"\",\n"
            "  \"summary\": {\n"
            "    \"makespan_s\": 5400,\n"
            "    \"ok\": true\n"
            "  },\n"
            "  \"tables\": {\n"
            "    \"by_priority\": [\n"
            "      {\"priority\": 2, \"jobs\": 10, \"p95_wait_s\": 90.5},\n"
            "      {\"priority\": \"a,b\", \"jobs\": 120, \"p95_wait_s\": null}\n"
            "    ]\n"
            "  },\n"
            "  \"notes\": [\"note: x\"]\n"
            "}\n");
}

TEST(Quote, ControlCharactersAndQuotes) {
  EXPECT_EQ(JsonQuote("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
}

}  // namespace
}  // namespace berth::plan
