#include "server/web/live_js.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace berth::web {

const char kLiveJs[] = R"js(// berthd dashboard: live parts (server/web/live_js.h)
"use strict";
(function () {
  function open(el) {
    var status = document.getElementById(el.id + "-status");
    var say = function (t) { if (status) status.textContent = t; };
    var es = new EventSource(el.getAttribute("data-live"));
    es.onopen = function () { say("live"); };
    es.onmessage = function (m) {
      if (el.tagName === "TABLE") {
        var tr = document.createElement("tr");
        // data-link-col: the column holding a job id, shown as a link to
        // the job's page like the rows the server wrote (text, never markup).
        var linkCol = el.getAttribute("data-link-col");
        JSON.parse(m.data).forEach(function (c, i) {
          var td = document.createElement("td");
          if (linkCol !== null && String(i) === linkCol && c !== "") {
            var a = document.createElement("a");
            a.href = "/ui/job?id=" + encodeURIComponent(c);
            a.textContent = c;
            td.appendChild(a);
          } else {
            td.textContent = c;
          }
          tr.appendChild(td);
        });
        var head = el.querySelector("tr");
        if (head && head.nextSibling) head.parentNode.insertBefore(tr, head.nextSibling);
        else (head ? head.parentNode : el).appendChild(tr);
      } else {
        el.appendChild(document.createTextNode(m.data));
      }
    };
    es.addEventListener("end", function () { es.close(); say("ended"); });
    es.onerror = function () {
      if (es.readyState === EventSource.CLOSED) {
        say("reconnecting");
        setTimeout(function () { open(el); }, 3000);
      } else {
        say("reconnecting");
      }
    };
  }
  document.querySelectorAll("[data-live]").forEach(open);
})();
)js";

std::string SseMessage(absl::string_view id, absl::string_view data, absl::string_view event) {
  std::string out;
  if (!event.empty()) absl::StrAppend(&out, "event: ", event, "\n");
  if (!id.empty()) absl::StrAppend(&out, "id: ", id, "\n");
  for (absl::string_view line : absl::StrSplit(data, '\n')) {
    absl::StrAppend(&out, "data: ");
    for (char c : line) {
      if (c != '\r') out += c;
    }
    out += '\n';
  }
  out += '\n';
  return out;
}

std::string JsonStrings(const std::vector<std::string>& cells) {
  std::string out = "[";
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) out += ',';
    out += '"';
    for (unsigned char c : cells[i]) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20 || c == 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += static_cast<char>(c);
      }
    }
    out += '"';
  }
  out += ']';
  return out;
}

}  // namespace berth::web
