#include "tools/plan/report.h"

#include <algorithm>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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

// --- tables whose rows are made on demand ------------------------------------

// `held` with its rows made on demand (from a copy) instead of held; counts
// the rows made in `*made`.
Table Streamed(const Table& held, std::vector<size_t>* made) {
  Table t = held;
  t.rows.clear();
  t.row_count = held.rows.size();
  t.make_row = [rows = held.rows, made](size_t i) {
    made->push_back(i);
    return rows.at(i);
  };
  return t;
}

// Tables that exercise what a streamed rendering could get wrong: a cell
// wider than its column's title only in the last row (the width is known
// late), right-aligned numbers, quoting, a row of nulls, an empty table.
std::vector<Table> Tables() {
  Table wide;
  wide.name = "decisions";
  wide.title = "Queued jobs";
  wide.columns = {{"position", "#"}, {"job", "job"}, {"eta_s", "ETA"}, {"why", "why"}};
  for (int i = 1; i <= 30; ++i) {
    wide.rows.push_back({Cell::Int(i), Cell::Str(absl::StrCat("j", i)),
                         Cell::Num(i * 1.5, absl::StrCat("~+", i, "m")), Cell::Str("fits")});
  }
  wide.rows.push_back({Cell::Int(1000000), Cell::Str("a-much-longer-job-id-at-the-end"),
                       Cell::Null(), Cell::Str("say \"hi\", twice\nthen\tstop")});
  wide.rows.push_back({Cell::Null(""), Cell::Null(""), Cell::Null(""), Cell::Null("")});
  Table empty;
  empty.name = "shortfalls";
  empty.title = "Binding dimension";
  empty.columns = {{"job", "job"}, {"needed", "needs"}};
  Table quoting;
  quoting.name = "q";
  quoting.title = "Quoting";
  quoting.columns = {{"k,ey", "key"}, {"flag", "flag"}};
  quoting.rows.push_back({Cell::Str("a,b"), Cell::Bool(true)});
  quoting.rows.push_back({Cell::Str("\"q\""), Cell::Bool(false)});
  quoting.rows.push_back({Cell::Str("two\r\nlines"), Cell::Num(-0.25)});
  return {wide, empty, quoting};
}

Report WithTables(std::vector<Table> tables) {
  Report r = Sample();
  r.tables = std::move(tables);
  return r;
}

TEST(StreamedTable, RendersExactlyAsTheSameRowsHeld) {
  const std::vector<Table> held = Tables();
  for (OutputFormat format : {OutputFormat::kTable, OutputFormat::kCsv, OutputFormat::kJson}) {
    // Each table alone, and all of them together (one streamed, the others
    // held, and all streamed).
    for (size_t which = 0; which <= held.size(); ++which) {
      std::vector<Table> reference = which < held.size() ? std::vector<Table>{held[which]} : held;
      std::vector<size_t> made;
      std::vector<Table> streamed;
      for (const Table& t : reference) streamed.push_back(Streamed(t, &made));
      const std::string want = Render(WithTables(reference), format);
      EXPECT_EQ(Render(WithTables(streamed), format), want)
          << "format " << static_cast<int>(format) << ", tables " << which;
      // Rows are asked for in order: twice (widths, lines) for a human
      // table, once for CSV and JSON.
      std::vector<size_t> expected;
      for (const Table& t : reference) {
        for (int pass = 0; pass < (format == OutputFormat::kTable ? 2 : 1); ++pass) {
          for (size_t i = 0; i < t.rows.size(); ++i) expected.push_back(i);
        }
      }
      EXPECT_EQ(made, expected) << "format " << static_cast<int>(format);
    }
  }
}

TEST(StreamedTable, ALateWideCellSetsTheColumnWidthOfEveryLine) {
  Table t;
  t.name = "t";
  t.title = "T";
  t.columns = {{"n", "n"}, {"id", "id"}};
  const std::vector<std::vector<Cell>> rows = {
      {Cell::Int(7), Cell::Str("a")}, {Cell::Int(12345), Cell::Str("longest-id")}};
  t.row_count = rows.size();
  t.make_row = [&rows](size_t i) { return rows[i]; };
  Report r;
  r.title = "R";
  r.tables.push_back(t);
  EXPECT_EQ(Render(r, OutputFormat::kTable),
            "R\n"
            "\n"
            "T\n"
            "      n  id\n"
            "  -----  ----------\n"
            "      7  a\n"
            "  12345  longest-id\n");
  EXPECT_EQ(Render(r, OutputFormat::kCsv),
            "# summary\nkey,value\n\n# t\nn,id\n7,a\n12345,longest-id\n");
}

TEST(StreamedTable, EmptyStreamedTableSaysNone) {
  Table t;
  t.name = "t";
  t.title = "T";
  t.columns = {{"job", "job"}};
  t.make_row = [](size_t) -> std::vector<Cell> {
    ADD_FAILURE() << "no row exists";
    return {};
  };
  Report r;
  r.title = "R";
  r.tables.push_back(t);
  EXPECT_EQ(Render(r, OutputFormat::kTable), "R\n\nT\n  job\n  ---\n  (none)\n");
  EXPECT_EQ(Render(r, OutputFormat::kJson),
            "{\n  \"title\": \"R\",\n  \"summary\": {},\n  \"tables\": {\n"
            "    \"t\": []\n  },\n  \"notes\": []\n}\n");
}

// Records the size of every write the renderer makes.
class RecordingBuf : public std::streambuf {
 public:
  std::string text;
  size_t largest_write = 0;
  size_t writes = 0;

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    text.append(s, static_cast<size_t>(n));
    largest_write = std::max(largest_write, static_cast<size_t>(n));
    ++writes;
    return n;
  }
  int_type overflow(int_type c) override {
    if (c != traits_type::eof()) xsputn(reinterpret_cast<const char*>(&c), 1);
    return c;
  }
};

TEST(StreamedTable, ALargeTableIsWrittenInChunks) {
  Table t;
  t.name = "rows";
  t.title = "Rows";
  t.columns = {{"i", "#"}, {"text", "text"}};
  t.row_count = 100000;
  t.make_row = [](size_t i) {
    return std::vector<Cell>{Cell::Int(static_cast<int64_t>(i)),
                             Cell::Str(std::string(i % 50, 'x'))};
  };
  Report r;
  r.title = "Big";
  r.tables.push_back(t);
  for (OutputFormat format : {OutputFormat::kTable, OutputFormat::kCsv, OutputFormat::kJson}) {
    RecordingBuf buf;
    std::ostream os(&buf);
    Render(r, format, &os);
    ASSERT_TRUE(os.good());
    EXPECT_EQ(buf.text, Render(r, format));
    EXPECT_GT(buf.text.size(), size_t{2'000'000});
    // Never the whole output at once: chunks of ~64 KiB (plus one row).
    EXPECT_LE(buf.largest_write, size_t{80 * 1024});
    EXPECT_GE(buf.writes, buf.text.size() / (80 * 1024));
  }
}

TEST(Quote, ControlCharactersAndQuotes) {
  EXPECT_EQ(JsonQuote("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
}

}  // namespace
}  // namespace berth::plan
