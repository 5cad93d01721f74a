#include "executor/runtime/docker/testing/docker_test_util.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "planner/base/clock.h"
#include "executor/runtime/docker/docker_http.h"
#include "nlohmann/json.hpp"

namespace berth {
namespace testing {

std::string UniqueName(absl::string_view prefix) {
  std::random_device rd;
  return absl::StrFormat("%s-%d-%08x", prefix, getpid(), rd());
}

DockerRuntimeOptions TestOptions(const std::string& instance) {
  DockerRuntimeOptions o;
  if (const char* url = std::getenv("BERTH_DOCKER_URL")) o.endpoint.url = url;
  o.instance = instance;
  o.image_allow_list = {"berth-test/*"};
  o.call_timeout = absl::Seconds(20);
  o.backoff_initial = absl::Milliseconds(50);
  o.backoff_max = absl::Milliseconds(500);
  return o;
}

ContainerSpec TestSpec(const std::string& job, std::vector<std::string> argv) {
  ContainerSpec s;
  s.job_id = job;
  s.workspace = "ws-test";
  s.action = "run";
  s.image = kTestImage;
  s.argv = std::move(argv);
  s.cpu_millis = 500;
  s.memory_bytes = int64_t{64} << 20;
  return s;
}

absl::StatusOr<int> RemoveInstanceContainers(const std::string& instance,
                                             const std::string& docker_url) {
  DockerEndpoint ep;
  ep.url = docker_url;
  absl::StatusOr<std::unique_ptr<DockerHttp>> http = DockerHttp::Create(ep);
  if (!http.ok()) return http.status();
  const nlohmann::json filters = {
      {"label", {absl::StrCat("berth.instance=", instance)}}};
  std::string enc;
  for (unsigned char c : filters.dump()) {
    if (std::isalnum(c)) {
      enc += static_cast<char>(c);
    } else {
      enc += absl::StrFormat("%%%02X", c);
    }
  }
  HttpRequest list;
  list.path = absl::StrCat("/containers/json?all=1&filters=", enc);
  list.timeout = absl::Seconds(60);
  absl::StatusOr<HttpResponse> resp = (*http)->Do(list);
  if (!resp.ok()) return resp.status();
  if (resp->status != 200) {
    return DockerErrorToStatus(0, "", resp->status, resp->body, "cleanup list");
  }
  nlohmann::json rows = nlohmann::json::parse(resp->body, nullptr, false);
  int removed = 0;
  if (!rows.is_array()) return removed;
  for (const auto& row : rows) {
    if (!row.contains("Id") || !row["Id"].is_string()) continue;
    HttpRequest del;
    del.method = "DELETE";
    del.path = absl::StrCat("/containers/", row["Id"].get<std::string>(),
                            "?force=1&v=1");
    del.timeout = absl::Seconds(60);
    absl::StatusOr<HttpResponse> d = (*http)->Do(del);
    if (d.ok() && (d->status == 204 || d->status == 404)) ++removed;
  }
  return removed;
}

bool WaitFor(const std::function<bool()>& cond, absl::Duration timeout,
             absl::Duration poll) {
  Clock* clock = Clock::Real();
  const absl::Time deadline = clock->Now() + timeout;
  while (true) {
    if (cond()) return true;
    if (clock->Now() >= deadline) return false;
    clock->SleepFor(poll);
  }
}

absl::StatusOr<ContainerObservation> WaitFinished(Runtime& rt,
                                                  const std::string& job,
                                                  absl::Duration timeout) {
  absl::StatusOr<ContainerObservation> last =
      absl::DeadlineExceededError("not polled");
  const bool done = WaitFor(
      [&] {
        last = rt.Inspect(job);
        if (!last.ok()) {
          const auto code = last.status().code();
          return code != absl::StatusCode::kUnavailable &&
                 code != absl::StatusCode::kDeadlineExceeded;
        }
        return IsFinished(last->state);
      },
      timeout, absl::Milliseconds(100));
  if (!done) {
    return absl::DeadlineExceededError(absl::StrCat(
        "job ", job, " not finished within ", absl::FormatDuration(timeout),
        "; last: ",
        last.ok() ? std::string(ContainerStateName(last->state))
                  : last.status().ToString()));
  }
  return last;
}

InstanceCleanup::~InstanceCleanup() {
  absl::StatusOr<int> n = RemoveInstanceContainers(instance_);
  if (!n.ok()) {
    std::fprintf(stderr, "cleanup of instance %s failed: %s\n",
                 instance_.c_str(), n.status().ToString().c_str());
  }
}

}  // namespace testing
}  // namespace berth
