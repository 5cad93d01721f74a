#include "tools/plan/report.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

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

// Collects output and hands it to the stream in chunks, so neither a
// character-at-a-time stream nor one string of the whole output.
class Sink {
 public:
  explicit Sink(std::ostream* out) : out_(out) { buffer_.reserve(kChunk + 4096); }
  ~Sink() { Flush(); }
  Sink(const Sink&) = delete;
  Sink& operator=(const Sink&) = delete;

  template <typename... Pieces>
  void Append(const Pieces&... pieces) {
    absl::StrAppend(&buffer_, pieces...);
    if (buffer_.size() >= kChunk) Flush();
  }
  void Flush() {
    out_->write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
  }

 private:
  static constexpr size_t kChunk = 64 * 1024;
  std::ostream* out_;
  std::string buffer_;
};

// Calls f(row) for every row of `t` in order, held or made on demand.
template <typename F>
void ForEachRow(const Table& t, F f) {
  if (t.make_row) {
    for (size_t r = 0; r < t.row_count; ++r) f(r, t.make_row(r));
  } else {
    for (size_t r = 0; r < t.rows.size(); ++r) f(r, t.rows[r]);
  }
}

void RenderTableText(const Table& t, Sink* out) {
  // First pass: the columns' widths and alignment from every row.
  std::vector<size_t> widths(t.columns.size());
  std::vector<bool> right(t.columns.size(), false);
  for (size_t c = 0; c < t.columns.size(); ++c) {
    widths[c] = t.columns[c].title.size();
  }
  ForEachRow(t, [&](size_t, const std::vector<Cell>& row) {
    for (size_t c = 0; c < row.size() && c < widths.size(); ++c) {
      widths[c] = std::max(widths[c], row[c].human().size());
      if (row[c].right_aligned()) right[c] = true;
    }
  });
  // Second pass: the lines.
  out->Append(t.title, "\n");
  std::string l;
  auto line = [&](auto cell_text) {
    l.clear();
    for (size_t c = 0; c < widths.size(); ++c) {
      if (c > 0) l += "  ";
      l += Pad(cell_text(c), widths[c], right[c]);
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out->Append("  ", l, "\n");
  };
  line([&](size_t c) { return t.columns[c].title; });
  line([&](size_t c) { return std::string(widths[c], '-'); });
  ForEachRow(t, [&](size_t, const std::vector<Cell>& row) {
    line([&](size_t c) { return c < row.size() ? row[c].human() : ""; });
  });
  if (t.size() == 0) out->Append("  (none)\n");
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

void Render(const Report& report, OutputFormat format, std::ostream* stream) {
  Sink out(stream);
  switch (format) {
    case OutputFormat::kTable: {
      out.Append(report.title, "\n");
      size_t width = 0;
      for (const Field& f : report.summary) width = std::max(width, f.label.size());
      for (const Field& f : report.summary) {
        out.Append("  ", Pad(absl::StrCat(f.label, ":"), width + 1, false), " ",
                   f.value.human(), "\n");
      }
      for (const Table& t : report.tables) {
        out.Append("\n");
        RenderTableText(t, &out);
      }
      if (!report.notes.empty()) out.Append("\n");
      for (const std::string& n : report.notes) out.Append(n, "\n");
      return;
    }
    case OutputFormat::kCsv: {
      out.Append("# summary\nkey,value\n");
      for (const Field& f : report.summary) {
        out.Append(CsvField(f.key), ",", CsvField(f.value.Csv()), "\n");
      }
      for (const Table& t : report.tables) {
        out.Append("\n# ", t.name, "\n");
        std::vector<std::string> keys;
        for (const Column& c : t.columns) keys.push_back(CsvField(c.key));
        out.Append(absl::StrJoin(keys, ","), "\n");
        ForEachRow(t, [&](size_t, const std::vector<Cell>& row) {
          for (size_t c = 0; c < row.size(); ++c) {
            out.Append(c ? "," : "", CsvField(row[c].Csv()));
          }
          out.Append("\n");
        });
      }
      return;
    }
    case OutputFormat::kJson: {
      out.Append("{\n  \"title\": ", JsonQuote(report.title), ",\n  \"summary\": {");
      for (size_t i = 0; i < report.summary.size(); ++i) {
        const Field& f = report.summary[i];
        out.Append(i ? "," : "", "\n    ", JsonQuote(f.key), ": ", f.value.Json());
      }
      out.Append(report.summary.empty() ? "}" : "\n  }", ",\n  \"tables\": {");
      for (size_t i = 0; i < report.tables.size(); ++i) {
        const Table& t = report.tables[i];
        out.Append(i ? "," : "", "\n    ", JsonQuote(t.name), ": [");
        ForEachRow(t, [&](size_t r, const std::vector<Cell>& row) {
          out.Append(r ? "," : "", "\n      {");
          for (size_t c = 0; c < t.columns.size() && c < row.size(); ++c) {
            out.Append(c ? ", " : "", JsonQuote(t.columns[c].key), ": ", row[c].Json());
          }
          out.Append("}");
        });
        out.Append(t.size() == 0 ? "]" : "\n    ]");
      }
      out.Append(report.tables.empty() ? "}" : "\n  }", ",\n  \"notes\": [");
      for (size_t i = 0; i < report.notes.size(); ++i) {
        out.Append(i ? ", " : "", JsonQuote(report.notes[i]));
      }
      out.Append("]\n}\n");
      return;
    }
  }
}

std::string Render(const Report& report, OutputFormat format) {
  std::ostringstream out;
  Render(report, format, &out);
  return out.str();
}

}  // namespace plan
}  // namespace berth
