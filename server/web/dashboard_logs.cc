// The dashboard's log routes (dashboard.h): an attempt's head or tail, the
// download of a whole kept log, and the live log as Server-Sent Events.
// All need a token ReadJobLog's policy allows.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "server/web/dashboard.h"
#include "server/web/dashboard_http.h"
#include "server/web/html.h"
#include "server/web/live_js.h"
#include "server/web/pages.h"

namespace berth::web {
namespace {

// The tail page shows this much of each stream.
constexpr int64_t kTailBytes = 64 << 10;

absl::StatusOr<int> AttemptParam(const httplib::Request& req) {
  const std::string a = Param(req, "attempt");
  int attempt = 0;
  if (!a.empty() && (!absl::SimpleAtoi(a, &attempt) || attempt < 0)) {
    return absl::InvalidArgumentError("attempt: must be a number >= 0 (0: the latest)");
  }
  return attempt;
}

// A file name for the download: the id's bytes outside [A-Za-z0-9._-]
// as '_' (the header is then safe whatever the id holds).
std::string FileName(const std::string& id, int attempt) {
  std::string out;
  for (char c : id) {
    out += (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ||
            c == '_')
               ? c
               : '_';
  }
  return absl::StrCat(out, attempt > 0 ? absl::StrCat("-attempt", attempt) : "", ".log");
}

// Keeps the last `cap` bytes appended.
void AppendTail(std::string* s, absl::string_view data, int64_t cap, bool* cut) {
  s->append(data.data(), data.size());
  if (static_cast<int64_t>(s->size()) > cap) {
    s->erase(0, s->size() - static_cast<size_t>(cap));
    *cut = true;
  }
}

}  // namespace

void Dashboard::Log(const httplib::Request& req, httplib::Response& res) const {
  if (!Check(req, res, kFullLogMethod)) return;
  LogPageData data;
  data.job_id = Param(req, "id");
  absl::StatusOr<int> attempt = AttemptParam(req);
  if (!attempt.ok()) return SendError(res, attempt.status());
  data.attempt = *attempt;
  const std::string part = Param(req, "part");
  if (part != "" && part != "head" && part != "tail") {
    return SendError(res, absl::InvalidArgumentError("part: must be head or tail"));
  }
  data.tail = part == "tail";
  JobLogRequest r;
  r.job_id = data.job_id;
  r.attempt = data.attempt;
  absl::Status s;
  if (data.tail) {
    // A kept attempt's sizes are in its record: read from there; else (the
    // running one) read it all, keeping the end.
    absl::StatusOr<v1::Job> job = core_.GetJob(data.job_id);
    if (!job.ok()) return SendError(res, job.status());
    for (const v1::Attempt& a : job->attempts()) {
      if (a.number() == data.attempt && a.log_kept()) {
        r.stdout_offset = std::max<int64_t>(0, a.stdout_log_bytes() - kTailBytes);
        r.stderr_offset = std::max<int64_t>(0, a.stderr_log_bytes() - kTailBytes);
        data.truncated = r.stdout_offset > 0 || r.stderr_offset > 0;
      }
    }
    s = logs_.Read(
        r,
        [&](const JobLogPiece& piece) {
          AppendTail(piece.stream == LogStream::kStdout ? &data.text : &data.err_text,
                     piece.data, kTailBytes, &data.truncated);
          return true;
        },
        nullptr);
  } else {
    const int64_t cap = options_.max_log_bytes;
    s = logs_.Read(
        r,
        [&](const JobLogPiece& piece) {
          const int64_t room = cap - static_cast<int64_t>(data.text.size());
          if (static_cast<int64_t>(piece.data.size()) > room) {
            data.text.append(piece.data.data(),
                             static_cast<size_t>(std::max<int64_t>(room, 0)));
            data.truncated = true;
            return false;
          }
          data.text.append(piece.data.data(), piece.data.size());
          return true;
        },
        nullptr);
  }
  if (!s.ok()) return SendError(res, s);
  PageOptions po;
  po.title = absl::StrCat("Log of ", data.job_id);
  SendHtml(res, 200, RenderPage(po, LogBody(data)));
}

void Dashboard::LogDownload(const httplib::Request& req, httplib::Response& res) const {
  if (!Check(req, res, kFullLogMethod)) return;
  const std::string id = Param(req, "id");
  absl::StatusOr<int> attempt = AttemptParam(req);
  if (!attempt.ok()) return SendError(res, attempt.status());
  // Checked before the answer starts, so that an unknown job or attempt is
  // an error page, not an empty file.
  JobLogRequest probe;
  probe.job_id = id;
  probe.attempt = *attempt;
  absl::Status s = logs_.Read(probe, [](const JobLogPiece&) { return false; }, nullptr);
  if (!s.ok()) return SendError(res, s);
  SetSafetyHeaders(res, false);
  res.set_header("Content-Disposition",
                 absl::StrCat("attachment; filename=\"", FileName(id, *attempt), "\""));
  const JobLogReader* logs = &logs_;
  const int n = *attempt;
  res.set_chunked_content_provider(
      "text/plain; charset=utf-8", [logs, id, n](size_t, httplib::DataSink& sink) {
        JobLogRequest r;
        r.job_id = id;
        r.attempt = n;
        absl::Status read = logs->Read(
            r,
            [&](const JobLogPiece& piece) {
              return sink.is_writable() && sink.write(piece.data.data(), piece.data.size());
            },
            nullptr);
        // An error after the first byte can only cut the file short: the
        // status line is sent. Say so at its end.
        if (!read.ok()) {
          const std::string note = absl::StrCat("\n[berth: the log could not be read to its end: ",
                                                read.ToString(), "]\n");
          sink.write(note.data(), note.size());
        }
        sink.done();
        return true;
      });
}

bool Dashboard::OpenLive(httplib::Response& res) const {
  int n = live_streams_.load();
  do {
    if (n >= options_.max_live_streams) {
      SendError(res, absl::ResourceExhaustedError(
                         "too many live streams are open: try again in a moment"));
      return false;
    }
  } while (!live_streams_.compare_exchange_weak(n, n + 1));
  SetSafetyHeaders(res, false);
  return true;
}

void Dashboard::ReleaseLive() const { live_streams_.fetch_sub(1); }

void Dashboard::LiveLog(const httplib::Request& req, httplib::Response& res) const {
  if (!Check(req, res, kFullLogMethod)) return;
  JobLogRequest r;
  r.job_id = Param(req, "id");
  r.follow = true;
  // Where the browser was (our ids: "<attempt>.<stdout bytes>.<stderr bytes>").
  const std::string last = req.get_header_value("Last-Event-ID");
  if (!last.empty()) {
    std::vector<std::string> parts = absl::StrSplit(last, '.');
    if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &r.attempt) ||
        !absl::SimpleAtoi(parts[1], &r.stdout_offset) ||
        !absl::SimpleAtoi(parts[2], &r.stderr_offset) || r.attempt < 1 ||
        r.stdout_offset < 0 || r.stderr_offset < 0) {
      return SendError(res, absl::InvalidArgumentError("Last-Event-ID: not one of ours"));
    }
  }
  if (absl::StatusOr<v1::Job> job = core_.GetJob(r.job_id); !job.ok()) {
    return SendError(res, job.status());
  }
  if (!OpenLive(res)) return;
  const Dashboard* self = this;
  const absl::Duration lifetime = options_.live_duration;
  res.set_chunked_content_provider(
      "text/event-stream",
      [self, r, lifetime](size_t, httplib::DataSink& sink) {
        const absl::Time until = absl::Now() + lifetime;
        int attempt = r.attempt;
        int64_t out = r.stdout_offset, err = r.stderr_offset;
        auto gone = [&] {
          return self->stopping_.load() || !sink.is_writable() || absl::Now() >= until;
        };
        const std::string retry = "retry: 1000\n\n";
        sink.write(retry.data(), retry.size());
        absl::Status s = self->logs_.Read(
            r,
            [&](const JobLogPiece& piece) {
              if (piece.attempt != attempt) {
                attempt = piece.attempt;
                out = err = 0;
              }
              int64_t& at = piece.stream == LogStream::kStdout ? out : err;
              at = piece.offset + static_cast<int64_t>(piece.data.size());
              if (!piece.data.empty()) {
                const std::string m =
                    SseMessage(absl::StrCat(attempt, ".", out, ".", err), piece.data);
                if (!sink.write(m.data(), m.size())) return false;
              }
              return !gone();
            },
            gone);
        // The job has finished and all is sent: the browser stops asking.
        if (s.ok() && !gone()) {
          const std::string end = SseMessage("", "", "end");
          sink.write(end.data(), end.size());
        } else if (!s.ok() && sink.is_writable()) {
          // Asking again would fail again.
          const std::string m = absl::StrCat(
              SseMessage("", absl::StrCat("[berth: ", s.ToString(), "]\n")),
              SseMessage("", "", "end"));
          sink.write(m.data(), m.size());
        }
        sink.done();
        return true;
      },
      [self](bool) { self->ReleaseLive(); });
}

}  // namespace berth::web
