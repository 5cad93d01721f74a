// Reports of berth-plan: a title, summary fields and named tables, rendered
// for humans (aligned text tables), as CSV or as JSON. Every cell carries a
// machine value (number, string, bool or null) for CSV/JSON and a human text
// (with units) for the table, so scripts never parse "256 GiB".
//
// A table holds its rows, or makes them on demand (Table::make_row) so that a
// table of a million rows is rendered without holding its cells: CSV and
// JSON row by row, the human table in two passes (column widths, then the
// lines). Rendering writes to a stream in chunks; the rendered text is not
// held whole either.
//
// Rendering is deterministic. Thread-compatible value types.
#ifndef BERTH_TOOLS_PLAN_REPORT_H_
#define BERTH_TOOLS_PLAN_REPORT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace berth {
namespace plan {

enum class OutputFormat { kTable, kCsv, kJson };

class Cell {
 public:
  enum class Kind { kNull, kString, kInt, kDouble, kBool };
  // A string shown as itself.
  static Cell Str(std::string s);
  // A string value shown differently to humans (e.g. key "p95_wait_s"
  // shown as "p95 wait").
  static Cell Str(std::string s, std::string human);
  // An integer; `human` defaults to the number itself.
  static Cell Int(int64_t v, std::string human = "");
  // A real number; `human` defaults to %.3g-ish formatting.
  static Cell Num(double v, std::string human = "");
  static Cell Bool(bool v);
  // No value: null in JSON, empty in CSV, `human` (default "-") in tables.
  static Cell Null(std::string human = "-");

  Kind kind() const { return kind_; }
  const std::string& human() const { return human_; }
  // The machine value as JSON (a number, "string", true/false or null).
  std::string Json() const;
  // The machine value for CSV (unquoted; quoting is the writer's job).
  std::string Csv() const;
  bool right_aligned() const {
    return kind_ == Kind::kInt || kind_ == Kind::kDouble;
  }

 private:
  Kind kind_ = Kind::kNull;
  std::string string_;
  int64_t int_ = 0;
  double double_ = 0;
  bool bool_ = false;
  std::string human_;
};

struct Column {
  std::string key;    // machine name, e.g. "p95_wait_s"
  std::string title;  // human header, e.g. "p95 wait"
};

struct Table {
  std::string name;   // machine name, e.g. "by_priority"
  std::string title;  // human title, e.g. "Waits by priority"
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;  // each row has columns.size() cells
  // Rows made on demand instead of held: when make_row is set, the table
  // has row_count rows and row i is make_row(i) (columns.size() cells);
  // REQUIRES: `rows` is empty. The renderer asks for rows 0, 1, .. in order,
  // twice for a human table (once to size the columns, once to print them),
  // so make_row must give the same row every time it is asked; it must stay
  // valid until the report is rendered. It renders exactly as the same rows
  // held in `rows`.
  size_t row_count = 0;
  std::function<std::vector<Cell>(size_t)> make_row;

  // The number of rows, held or made.
  size_t size() const { return make_row ? row_count : rows.size(); }
};

struct Field {
  std::string key;    // machine name
  std::string label;  // human label
  Cell value;
};

struct Report {
  std::string title;
  std::vector<Field> summary;
  std::vector<Table> tables;
  // Free-text lines printed after the tables (JSON: "notes").
  std::vector<std::string> notes;
};

// Human: title, "label: value" lines, then each table under its title.
// CSV: for each of "summary" (columns key,value) and every table, a line
//   "# <name>", the header row of keys and the rows, sections separated by a
//   blank line (RFC 4180 quoting).
// JSON: {"title":..,"summary":{key:value},"tables":{name:[{key:value}]},
//   "notes":[..]} with a trailing newline.
// Writes to `out` in chunks of at most ~64 KiB; check out->good() after.
void Render(const Report& report, OutputFormat format, std::ostream* out);
// The same, as one string (small reports, tests).
std::string Render(const Report& report, OutputFormat format);

// JSON string literal with escapes ("a\"b").
std::string JsonQuote(absl::string_view s);
// A CSV field, quoted if it contains a comma, quote, CR or LF.
std::string CsvField(absl::string_view s);

}  // namespace plan
}  // namespace berth

#endif  // BERTH_TOOLS_PLAN_REPORT_H_
