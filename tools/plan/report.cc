#include "tools/plan/report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace berth {
namespace plan {
namespace {

std::string FormatDouble(double v) {
  if (!std::isfinite(v)) return "null";
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    return absl::StrCat(static_cast<int64_t>(v));
  }
  // Below 1000, six significant digits keep at least three decimals; above,
  // three decimals (times in seconds to the millisecond: a 0.25 s latency
  // stays visible after day 1), trailing zeros dropped.
  if (std::fabs(v) < 1000) return absl::StrFormat("%.6g", v);
  std::string s = absl::StrFormat("%.3f", v);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string Pad(absl::string_view s, size_t width, bool right) {
  // Widths count bytes; reports are ASCII.
  if (s.size() >= width) return std::string(s);
  std::string pad(width - s.size(), ' ');
  return right ? absl::StrCat(pad, s) : absl::StrCat(s, pad);
}

void RenderTableText(const Table& t, std::string* out) {
  std::vector<size_t> widths(t.columns.size());
  std::vector<bool> right(t.columns.size(), false);
  for (size_t c = 0; c < t.columns.size(); ++c) {
    widths[c] = t.columns[c].title.size();
  }
  for (const auto& row : t.rows) {
    for (size_t c = 0; c < row.size() && c < widths.size(); ++c) {
      widths[c] = std::max(widths[c], row[c].human().size());
      if (row[c].right_aligned()) right[c] = true;
    }
  }
  absl::StrAppend(out, t.title, "\n");
  auto line = [&](auto cell_text) {
    std::string l;
    for (size_t c = 0; c < widths.size(); ++c) {
      if (c > 0) l += "  ";
      l += Pad(cell_text(c), widths[c], right[c]);
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    absl::StrAppend(out, "  ", l, "\n");
  };
  line([&](size_t c) { return t.columns[c].title; });
  line([&](size_t c) { return std::string(widths[c], '-'); });
  for (const auto& row : t.rows) {
    line([&](size_t c) { return c < row.size() ? row[c].human() : ""; });
  }
  if (t.rows.empty()) absl::StrAppend(out, "  (none)\n");
}

}  // namespace

Cell Cell::Str(std::string s) {
  Cell c;
  c.kind_ = Kind::kString;
  c.human_ = s;
  c.string_ = std::move(s);
  return c;
}

Cell Cell::Str(std::string s, std::string human) {
  Cell c = Str(std::move(s));
  c.human_ = std::move(human);
  return c;
}

Cell Cell::Int(int64_t v, std::string human) {
  Cell c;
  c.kind_ = Kind::kInt;
  c.int_ = v;
  c.human_ = human.empty() ? absl::StrCat(v) : std::move(human);
  return c;
}

Cell Cell::Num(double v, std::string human) {
  Cell c;
  c.kind_ = Kind::kDouble;
  c.double_ = v;
  c.human_ = human.empty() ? absl::StrFormat("%.3g", v) : std::move(human);
  return c;
}

Cell Cell::Bool(bool v) {
  Cell c;
  c.kind_ = Kind::kBool;
  c.bool_ = v;
  c.human_ = v ? "yes" : "no";
  return c;
}

Cell Cell::Null(std::string human) {
  Cell c;
  c.kind_ = Kind::kNull;
  c.human_ = std::move(human);
  return c;
}

std::string Cell::Json() const {
  switch (kind_) {
    case Kind::kNull:
      return "null";
    case Kind::kString:
      return JsonQuote(string_);
    case Kind::kInt:
      return absl::StrCat(int_);
    case Kind::kDouble:
      return FormatDouble(double_);
    case Kind::kBool:
      return bool_ ? "true" : "false";
  }
  return "null";
}

std::string Cell::Csv() const {
  switch (kind_) {
    case Kind::kNull:
      return "";
    case Kind::kString:
      return string_;
    case Kind::kInt:
      return absl::StrCat(int_);
    case Kind::kDouble: {
      std::string s = FormatDouble(double_);
      return s == "null" ? "" : s;
    }
    case Kind::kBool:
      return bool_ ? "true" : "false";
  }
  return "";
}

std::string JsonQuote(absl::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += ch;
        }
    }
  }
  out += "\"";
  return out;
}

std::string CsvField(absl::string_view s) {
  if (s.find_first_of(",\"\r\n") == absl::string_view::npos) {
    return std::string(s);
  }
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += "\"";
  return out;
}

std::string Render(const Report& report, OutputFormat format) {
  std::string out;
  switch (format) {
    case OutputFormat::kTable: {
      absl::StrAppend(&out, report.title, "\n");
      size_t width = 0;
      for (const Field& f : report.summary) width = std::max(width, f.label.size());
      for (const Field& f : report.summary) {
        absl::StrAppend(&out, "  ", Pad(absl::StrCat(f.label, ":"), width + 1, false),
                        " ", f.value.human(), "\n");
      }
      for (const Table& t : report.tables) {
        absl::StrAppend(&out, "\n");
        RenderTableText(t, &out);
      }
      if (!report.notes.empty()) absl::StrAppend(&out, "\n");
      for (const std::string& n : report.notes) absl::StrAppend(&out, n, "\n");
      return out;
    }
    case OutputFormat::kCsv: {
      absl::StrAppend(&out, "# summary\nkey,value\n");
      for (const Field& f : report.summary) {
        absl::StrAppend(&out, CsvField(f.key), ",", CsvField(f.value.Csv()), "\n");
      }
      for (const Table& t : report.tables) {
        absl::StrAppend(&out, "\n# ", t.name, "\n");
        std::vector<std::string> keys;
        for (const Column& c : t.columns) keys.push_back(CsvField(c.key));
        absl::StrAppend(&out, absl::StrJoin(keys, ","), "\n");
        for (const auto& row : t.rows) {
          std::vector<std::string> cells;
          for (const Cell& c : row) cells.push_back(CsvField(c.Csv()));
          absl::StrAppend(&out, absl::StrJoin(cells, ","), "\n");
        }
      }
      return out;
    }
    case OutputFormat::kJson: {
      absl::StrAppend(&out, "{\n  \"title\": ", JsonQuote(report.title),
                      ",\n  \"summary\": {");
      for (size_t i = 0; i < report.summary.size(); ++i) {
        const Field& f = report.summary[i];
        absl::StrAppend(&out, i ? "," : "", "\n    ", JsonQuote(f.key), ": ",
                        f.value.Json());
      }
      absl::StrAppend(&out, report.summary.empty() ? "}" : "\n  }",
                      ",\n  \"tables\": {");
      for (size_t i = 0; i < report.tables.size(); ++i) {
        const Table& t = report.tables[i];
        absl::StrAppend(&out, i ? "," : "", "\n    ", JsonQuote(t.name), ": [");
        for (size_t r = 0; r < t.rows.size(); ++r) {
          absl::StrAppend(&out, r ? "," : "", "\n      {");
          for (size_t c = 0; c < t.columns.size() && c < t.rows[r].size(); ++c) {
            absl::StrAppend(&out, c ? ", " : "", JsonQuote(t.columns[c].key), ": ",
                            t.rows[r][c].Json());
          }
          absl::StrAppend(&out, "}");
        }
        absl::StrAppend(&out, t.rows.empty() ? "]" : "\n    ]");
      }
      absl::StrAppend(&out, report.tables.empty() ? "}" : "\n  }",
                      ",\n  \"notes\": [");
      for (size_t i = 0; i < report.notes.size(); ++i) {
        absl::StrAppend(&out, i ? ", " : "", JsonQuote(report.notes[i]));
      }
      absl::StrAppend(&out, "]\n}\n");
      return out;
    }
  }
  return out;
}

}  // namespace plan
}  // namespace berth
