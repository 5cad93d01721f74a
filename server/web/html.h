// HTML for berthd's dashboard (/ui): escaping and the page layout every page
// shares. Every string that comes from a job (ids, workspaces, pools,
// messages, log lines) or from an operator (pause and maintenance reasons)
// goes through HtmlEscape (text and attribute values) or QueryEscape (inside
// a link's query string, then HtmlEscape'd with the rest of the attribute).
//
// Pages are self-contained: inline CSS, nothing fetched from elsewhere; most
// refresh themselves with <meta http-equiv="refresh">. Pages with live
// parts load berthd's one script, /ui/static/live.js, and no other.
//
// Thread-safe: pure functions.
#ifndef BERTH_SERVER_WEB_HTML_H_
#define BERTH_SERVER_WEB_HTML_H_

#include <string>

#include "absl/strings/string_view.h"

namespace berth::web {

// & < > " ' as entities; other bytes as they are, except control characters
// other than tab and newline, which become U+FFFD (a log's terminal escapes
// are shown as text, never interpreted).
std::string HtmlEscape(absl::string_view text);

// Percent-encodes every byte except A-Z a-z 0-9 - _ . ~ (a query parameter's
// value, or a cookie's).
std::string QueryEscape(absl::string_view text);

// Decodes QueryEscape's form ('+' is a space); an invalid "%" sequence is
// kept as it is.
std::string QueryUnescape(absl::string_view text);

// The dashboard's pages, for the navigation bar.
enum class Nav {
  kNone, kOverview, kPlan, kJobs, kRunning, kEvents, kWorkspaces, kNodes, kRightSize, kChart
};

struct PageOptions {
  std::string title;         // plain text; escaped here
  Nav nav = Nav::kNone;      // highlighted in the navigation bar
  int refresh_seconds = 0;   // 0: the page does not refresh itself
  bool logged_in = true;     // shows the navigation bar and "log out"
  // Loads /ui/static/live.js (the page has data-live parts; live_js.h).
  bool live = false;
};

// A whole HTML document around `body` (already HTML).
std::string RenderPage(const PageOptions& options, absl::string_view body);

// A horizontal bar: `used` of `capacity` ("6 GiB of 16 GiB"), with `planned`
// (used plus what this plan admits) drawn lighter. `label` and the amounts
// are plain text. capacity <= 0 draws an empty bar marked "unlimited".
std::string RenderBar(absl::string_view label, double used, double planned,
                      double capacity, absl::string_view amounts);

}  // namespace berth::web

#endif  // BERTH_SERVER_WEB_HTML_H_
