#include "server/web/html.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace berth::web {

std::string HtmlEscape(absl::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) {
          out += "\xEF\xBF\xBD";  // U+FFFD
        } else {
          out += ch;
        }
    }
  }
  return out;
}

std::string QueryEscape(absl::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
        c == '-' || c == '_' || c == '.' || c == '~') {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

namespace {
int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::string QueryUnescape(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() &&
               HexValue(text[i + 1]) >= 0 && HexValue(text[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

namespace {

constexpr char kStyle[] = R"css(
body{font-family:sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#23395d;color:#fff;padding:8px 16px;display:flex;gap:16px;align-items:center}
header a{color:#dfe7f5;text-decoration:none}
header a.on{color:#fff;font-weight:bold;text-decoration:underline}
header form{margin-left:auto}
main{padding:12px 16px}
table{border-collapse:collapse;font-size:14px}
th,td{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#eef}
.bar{width:360px;height:14px;background:#e4e4e4;position:relative;display:inline-block;vertical-align:middle}
.bar .p{position:absolute;left:0;top:0;bottom:0;background:#9ec5f0}
.bar .u{position:absolute;left:0;top:0;bottom:0;background:#2f6db5}
.lbl{display:inline-block;width:150px}
.warn{color:#a40000;font-weight:bold}
pre{background:#f0f0f0;padding:8px;white-space:pre-wrap;word-break:break-all;max-width:100%}
.muted{color:#777}
)css";

struct NavItem {
  Nav nav;
  const char* href;
  const char* label;
};
constexpr NavItem kNavItems[] = {
    {Nav::kOverview, "/ui", "Overview"},
    {Nav::kPlan, "/ui/plan", "Plan"},
    {Nav::kJobs, "/ui/jobs", "Jobs"},
    {Nav::kRunning, "/ui/running", "Running"},
    {Nav::kEvents, "/ui/events", "Events"},
    {Nav::kWorkspaces, "/ui/workspaces", "Workspaces"},
    {Nav::kNodes, "/ui/nodes", "Nodes"},
    {Nav::kRightSize, "/ui/rightsize", "Right-sizing"},
    {Nav::kChart, "/ui/chart", "24h chart"},
};

}  // namespace

std::string RenderPage(const PageOptions& options, absl::string_view body) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  if (options.refresh_seconds > 0) {
    absl::StrAppend(&out, "<meta http-equiv=\"refresh\" content=\"", options.refresh_seconds,
                    "\">");
  }
  absl::StrAppend(&out, "<title>", HtmlEscape(options.title), " - Berth</title><style>", kStyle,
                  "</style>");
  if (options.live) out += "<script src=\"/ui/static/live.js\" defer></script>";
  absl::StrAppend(&out, "</head><body><header><b>Berth</b>");
  if (options.logged_in) {
    for (const NavItem& item : kNavItems) {
      absl::StrAppend(&out, "<a href=\"", item.href, "\"",
                      item.nav == options.nav ? " class=\"on\"" : "", ">", item.label, "</a>");
    }
    absl::StrAppend(&out,
                    "<form method=\"post\" action=\"/ui/logout\"><button>Log out</button></form>");
  }
  absl::StrAppend(&out, "</header><main><h1>", HtmlEscape(options.title), "</h1>", body,
                  "</main></body></html>\n");
  return out;
}

std::string RenderBar(absl::string_view label, double used, double planned, double capacity,
                      absl::string_view amounts) {
  auto pct = [capacity](double v) {
    if (capacity <= 0) return 0.0;
    return std::clamp(100.0 * v / capacity, 0.0, 100.0);
  };
  char u[32], p[32];
  std::snprintf(u, sizeof(u), "%.1f", pct(used));
  std::snprintf(p, sizeof(p), "%.1f", pct(std::max(used, planned)));
  return absl::StrCat("<div><span class=\"lbl\">", HtmlEscape(label),
                      "</span> <span class=\"bar\"><span class=\"p\" style=\"width:", p,
                      "%\"></span><span class=\"u\" style=\"width:", u,
                      "%\"></span></span> <span>", HtmlEscape(amounts), "</span></div>\n");
}

}  // namespace berth::web
