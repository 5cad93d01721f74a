// The dashboard's one script (/ui/static/live.js) and the Server-Sent
// Events framing its streams use.
//
// The script fills each element that has data-live="<url>" from that
// event stream: a <pre> gets each message's text appended, a <table> gets
// each message (a JSON array of strings) as a row under its head row,
// newest first; a table with data-link-col="<n>" shows column n (a job id)
// as a link to /ui/job?id=<the id, URI-encoded>, like its server-written
// rows. Text only (textContent): nothing a job wrote is ever parsed
// as markup. An "end" event closes the stream; a dropped stream reconnects
// (the browser sends Last-Event-ID, so nothing is sent twice). The
// element's status (id "<element id>-status") says "live", "ended" or
// "reconnecting".
#ifndef BERTH_SERVER_WEB_LIVE_JS_H_
#define BERTH_SERVER_WEB_LIVE_JS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace berth::web {

extern const char kLiveJs[];

// One SSE message: "id: <id>\n" (if not empty), a "data: " line per line of
// `data` ('\r' dropped: SSE would take it as a line end), then "\n".
std::string SseMessage(absl::string_view id, absl::string_view data,
                       absl::string_view event = "");

// `cells` as a JSON array of strings (for a live table's row).
std::string JsonStrings(const std::vector<std::string>& cells);

}  // namespace berth::web

#endif  // BERTH_SERVER_WEB_LIVE_JS_H_
