// DockerRuntime::SubscribeEvents: the label-filtered /events stream.
#include <atomic>
#include <cctype>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "executor/runtime/docker/docker_json.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "nlohmann/json.hpp"

namespace berth {

// One background thread: connect, read newline-delimited JSON events until
// the stream breaks, back off, reconnect (from the last event's time), and
// tell the caller to resync.
class DockerRuntime::Subscription final : public EventSubscription {
 public:
  Subscription(DockerRuntime* runtime,
               std::function<void(const RuntimeEvent&)> callback)
      : runtime_(runtime), callback_(std::move(callback)) {
    thread_ = std::thread([this] { Run(); });
  }

  ~Subscription() override {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    stop_flag_.store(true);
    thread_.join();
  }

 private:
  void Run() {
    int failures = 0;
    int64_t since_nanos = 0;
    bool connected_before = false;
    while (!stop_flag_.load()) {
      const nlohmann::json filters = {
          {"type", {"container"}},
          {"label",
           {absl::StrCat("berth.instance=", runtime_->options_.instance)}}};
      HttpRequest req;
      req.path = absl::StrCat("/events?filters=", Escape(filters.dump()));
      if (since_nanos > 0) {
        req.path += absl::StrFormat("&since=%d.%09d", since_nanos / 1000000000,
                                    since_nanos % 1000000000);
      }
      req.timeout = absl::ZeroDuration();  // a stream: no overall limit
      std::string pending;
      bool got_headers = false;
      const std::function<bool(absl::string_view)> sink =
          [&](absl::string_view chunk) {
            got_headers = true;
            pending.append(chunk.data(), chunk.size());
            size_t nl;
            while ((nl = pending.find('\n')) != std::string::npos) {
              std::optional<ParsedEvent> e =
                  ParseEventLine(absl::string_view(pending).substr(0, nl));
              pending.erase(0, nl + 1);
              if (e.has_value()) {
                if (e->time_nanos > since_nanos) since_nanos = e->time_nanos;
                callback_(e->event);
              }
            }
            return !stop_flag_.load();
          };
      const std::function<bool()> should_stop = [this] {
        return stop_flag_.load();
      };
      if (connected_before) {
        // Events may have been missed while disconnected.
        callback_(RuntimeEvent{"", "resync"});
      }
      std::string error_body;
      absl::StatusOr<long> status =
          runtime_->engine_->http().Stream(req, sink, should_stop, &error_body);
      if (stop_flag_.load()) return;
      const bool ok_stream = status.ok() && *status == 200;
      runtime_->engine_->Count("events", !ok_stream);
      connected_before = true;
      // A stream that delivered data was healthy: restart the backoff.
      failures = got_headers ? 1 : failures + 1;
      const absl::Duration wait =
          runtime_->engine_->Backoff(failures, runtime_->options_.events_backoff_initial,
                            runtime_->options_.events_backoff_max);
      absl::MutexLock lock(&mu_);
      // Interruptible wait (the destructor sets stop_).
      mu_.AwaitWithTimeout(absl::Condition(&stop_), wait);
      if (stop_) return;
    }
  }

  static std::string Escape(const std::string& s) {
    std::string out;
    for (unsigned char c : s) {
      if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
        out += static_cast<char>(c);
      } else {
        out += absl::StrFormat("%%%02X", c);
      }
    }
    return out;
  }

  // Constant after construction.
  DockerRuntime* const runtime_;
  const std::function<void(const RuntimeEvent&)> callback_;

  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<bool> stop_flag_{false};  // read by curl callbacks
  std::thread thread_;
};

std::unique_ptr<EventSubscription> DockerRuntime::SubscribeEvents(
    std::function<void(const RuntimeEvent&)> callback) {
  return std::make_unique<Subscription>(this, std::move(callback));
}

}  // namespace berth
