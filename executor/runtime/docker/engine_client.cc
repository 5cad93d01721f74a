#include "executor/runtime/docker/engine_client.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/runtime/docker/log_repeat_filter.h"
#include "executor/runtime/runtime_limits.h"
#include "planner/base/status_macros.h"

namespace berth {

absl::Status ValidateEngineRuntimeOptions(EngineRuntimeOptions& options,
                                          absl::string_view runtime_name,
                                          bool more_positive_ok,
                                          absl::string_view more_positive_names) {
  if (!IsValidName(options.instance)) {
    return absl::InvalidArgumentError(absl::StrCat(
        runtime_name, ": instance '", options.instance,
        "' must be 1-128 chars of [A-Za-z0-9._-]"));
  }
  // Numeric, range-checked, never uid 0 or gid 0 by any spelling
  // (runtime_limits.h); the engine gets the canonical form.
  absl::StatusOr<ContainerUser> user = ParseContainerUser(options.user);
  if (!user.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(runtime_name, ": ", user.status().message()));
  }
  options.user = user->ToString();
  if (options.workspace_gid == 0 || options.workspace_gid < -1 ||
      options.workspace_gid > 0xFFFFFFFE) {
    return absl::InvalidArgumentError(absl::StrCat(
        runtime_name, ": workspace_gid ", options.workspace_gid,
        " must be a group id other than 0 (root), or -1 for none"));
  }
  if (options.log_driver != "local" && options.log_driver != "json-file") {
    return absl::InvalidArgumentError(absl::StrCat(
        runtime_name, ": log_driver '", options.log_driver,
        "' must be \"local\" or \"json-file\""));
  }
  if (options.pids_limit <= 0 || options.max_attempts < 1 ||
      options.log_max_files < 1 || options.call_timeout <= absl::ZeroDuration() ||
      !more_positive_ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        runtime_name, ": pids_limit, max_attempts, log_max_files",
        more_positive_names.empty() ? "" : ", ", more_positive_names,
        " and call_timeout must be positive"));
  }
  if (options.clock == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(runtime_name, ": clock is null"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<EngineClient>> EngineClient::Create(
    const EngineRuntimeOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<DockerHttp> http,
                   DockerHttp::Create(options.endpoint));
  return std::unique_ptr<EngineClient>(new EngineClient(options, std::move(http)));
}

EngineClient::EngineClient(const EngineRuntimeOptions& options,
                           std::unique_ptr<DockerHttp> http)
    : http_(std::move(http)),
      clock_(options.clock),
      call_timeout_(options.call_timeout),
      max_attempts_(options.max_attempts),
      backoff_initial_(options.backoff_initial),
      backoff_max_(options.backoff_max),
      backoff_jitter_(options.backoff_jitter),
      logs_tail_lines_(options.logs_tail_lines) {}

void EngineClient::Count(const std::string& endpoint, bool error) {
  absl::MutexLock lock(&mu_);
  EndpointCounters& c = counters_[endpoint];
  ++c.calls;
  if (error) ++c.errors;
}

CallCounters EngineClient::Counters() const {
  absl::MutexLock lock(&mu_);
  return counters_;
}

absl::Duration EngineClient::Backoff(int retry) {
  return Backoff(retry, backoff_initial_, backoff_max_);
}

absl::Duration EngineClient::Backoff(int retry, absl::Duration initial,
                                     absl::Duration max) {
  absl::Duration d = initial;
  for (int i = 1; i < retry && d < max; ++i) d *= 2;
  d = std::min(d, max);
  double factor = 1.0;
  if (backoff_jitter_ > 0) {
    absl::MutexLock lock(&mu_);
    factor = absl::Uniform(rng_, 1.0 - backoff_jitter_, 1.0 + backoff_jitter_);
  }
  return d * factor;
}

absl::StatusOr<HttpResponse> EngineClient::Call(const std::string& endpoint,
                                                HttpRequest req, bool idempotent,
                                                absl::string_view context) {
  return Call(endpoint, std::move(req), idempotent, context, call_timeout_);
}

absl::StatusOr<HttpResponse> EngineClient::Call(const std::string& endpoint,
                                                HttpRequest req, bool idempotent,
                                                absl::string_view context,
                                                absl::Duration timeout) {
  req.timeout = timeout;
  const int attempts = idempotent ? max_attempts_ : 1;
  absl::Status last;
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    if (attempt > 1) clock_->SleepFor(Backoff(attempt - 1));
    absl::StatusOr<HttpResponse> resp = http_->Do(req);
    if (resp.ok() && resp->status < 500) {
      Count(endpoint, resp->status >= 400);
      return resp;
    }
    Count(endpoint, true);
    last = resp.ok() ? DockerErrorToStatus(0, "", resp->status, resp->body, context)
                     : absl::Status(resp.status().code(),
                                    absl::StrCat(context, ": ",
                                                 resp.status().message()));
    if (!IsRetryableDockerError(last)) break;
  }
  return last;
}

absl::StatusOr<std::string> EngineClient::LogsTail(const std::string& path,
                                                   size_t max_bytes,
                                                   absl::string_view context) {
  HttpRequest req;
  req.path = absl::StrCat(path, "?stdout=1&stderr=1&tail=", logs_tail_lines_);
  req.timeout = call_timeout_;
  absl::Status last;
  for (int attempt = 1; attempt <= max_attempts_; ++attempt) {
    if (attempt > 1) clock_->SleepFor(Backoff(attempt - 1));
    DockerLogDemuxer demux;
    std::string tail;
    const std::function<bool(absl::string_view)> sink =
        [&](absl::string_view chunk) {
          demux.Feed(chunk, &tail);
          // Keep at most 2*max_bytes buffered; trim to max_bytes at the end.
          if (tail.size() > 2 * max_bytes + 4096) {
            tail.erase(0, tail.size() - max_bytes);
          }
          return true;
        };
    std::string error_body;
    absl::StatusOr<long> status = http_->Stream(req, sink, nullptr, &error_body);
    if (status.ok() && *status < 500) {
      Count("logs", *status >= 400);
      RETURN_IF_ERROR(DockerErrorToStatus(0, "", *status, error_body, context));
      if (tail.size() > max_bytes) tail.erase(0, tail.size() - max_bytes);
      return tail;
    }
    Count("logs", true);
    last = status.ok() ? DockerErrorToStatus(0, "", *status, error_body, context)
                       : absl::Status(status.status().code(),
                                      absl::StrCat(context, ": ",
                                                   status.status().message()));
    if (!IsRetryableDockerError(last)) break;
  }
  return last;
}

absl::Status EngineClient::StreamLogs(const std::string& path,
                                      const LogReadOptions& options,
                                      absl::Duration timeout, const LogSink& sink,
                                      absl::string_view context) {
  HttpRequest req;
  // A follow asks for timestamps to drop what Docker repeats across a
  // rotation (log_repeat_filter.h); a read that reports its first message's
  // time asks for them to learn it.
  const bool stamps = options.follow || options.first_message_time != nullptr;
  req.path = absl::StrCat(path, "?stdout=1&stderr=1", options.follow ? "&follow=1" : "",
                          stamps ? "&timestamps=1" : "");
  req.timeout = absl::ZeroDuration();
  req.stall_timeout = timeout;
  DockerLogDemuxer demux;
  LogRepeatFilter repeats;
  bool first = true;
  const std::function<bool(absl::string_view)> feed = [&](absl::string_view chunk) {
    if (!stamps) {
      return demux.Feed(chunk, [&](int stream, absl::string_view data) {
        return sink(stream == 2 ? LogStream::kStderr : LogStream::kStdout, data);
      });
    }
    return demux.FeedFrames(chunk, [&](int stream, absl::string_view frame) {
      absl::string_view text = frame;
      absl::Time time;
      if (options.follow) {
        if (!repeats.Keep(stream, frame, &text)) return true;
      } else {
        (void)ParseDockerLogStamp(frame, &time, &text);
      }
      if (first && options.first_message_time != nullptr) {
        absl::string_view unused;
        if (ParseDockerLogStamp(frame, &time, &unused)) *options.first_message_time = time;
      }
      first = false;
      return sink(stream == 2 ? LogStream::kStderr : LogStream::kStdout, text);
    });
  };
  std::string error_body;
  absl::StatusOr<long> status = http_->Stream(req, feed, options.should_stop, &error_body);
  if (!status.ok()) {
    Count("logs", true);
    return absl::Status(status.status().code(),
                        absl::StrCat(context, ": ", status.status().message()));
  }
  Count("logs", *status >= 400);
  return DockerErrorToStatus(0, "", *status, error_body, context);
}

bool DockerLogDemuxer::Feed(
    absl::string_view chunk,
    const std::function<bool(int stream, absl::string_view)>& sink) {
  while (!chunk.empty()) {
    if (remaining_ > 0) {
      const size_t n = std::min<size_t>(remaining_, chunk.size());
      remaining_ -= static_cast<uint32_t>(n);
      if (!sink(stream_, chunk.substr(0, n))) return false;
      chunk.remove_prefix(n);
      continue;
    }
    const size_t need = 8 - header_.size();
    const size_t n = std::min(need, chunk.size());
    header_.append(chunk.data(), n);
    chunk.remove_prefix(n);
    if (header_.size() == 8) {
      const auto* h = reinterpret_cast<const unsigned char*>(header_.data());
      stream_ = h[0] == 2 ? 2 : 1;
      remaining_ = (uint32_t{h[4]} << 24) | (uint32_t{h[5]} << 16) |
                   (uint32_t{h[6]} << 8) | uint32_t{h[7]};
      header_.clear();
    }
  }
  return true;
}

bool DockerLogDemuxer::FeedFrames(
    absl::string_view chunk,
    const std::function<bool(int stream, absl::string_view)>& sink) {
  return Feed(chunk, [&](int stream, absl::string_view data) {
    frame_.append(data.data(), data.size());
    if (remaining_ > 0) return true;  // more of this frame to come
    const bool more = sink(stream, frame_);
    frame_.clear();
    return more;
  });
}

void DockerLogDemuxer::Feed(absl::string_view chunk, std::string* out) {
  (void)Feed(chunk, [out](int, absl::string_view data) {
    out->append(data.data(), data.size());
    return true;
  });
}

}  // namespace berth
