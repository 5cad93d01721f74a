#include "tools/load/child_berthd.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "planner/base/host_port.h"
#include "planner/base/status_macros.h"
#include "tools/client/client.h"
#include "tools/load/metrics_scrape.h"

namespace berth {
namespace {

// A loopback port nobody listens on now.
absl::StatusOr<int> FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) close(fd);
    return absl::InternalError("no free loopback port");
  }
  close(fd);
  return ntohs(addr.sin_port);
}

std::string Tail(const std::string& path) {
  std::ifstream f(path);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChildBerthd>> ChildBerthd::Start(ChildBerthdOptions options) {
  std::unique_ptr<ChildBerthd> c(new ChildBerthd(std::move(options)));
  std::string templ = c->options_.work_dir + "/berth-load-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("cannot create a directory under ",
                                            c->options_.work_dir));
  }
  c->dir_ = templ;
  {
    std::ofstream tokens(c->dir_ + "/tokens");
    tokens << "pusher load " << c->options_.pusher_token << "\noperator load "
           << c->options_.operator_token << "\n";
  }
  chmod((c->dir_ + "/tokens").c_str(), 0600);
  absl::StatusOr<int> port = FreePort();
  if (!port.ok()) return port.status();
  c->target_ = absl::StrCat("127.0.0.1:", *port);
  // The flags' own --metrics_listen wins (the last one given does).
  bool metrics_given = false;
  for (const std::string& f : c->options_.flags) {
    if (absl::StartsWith(f, "--metrics_listen=")) {
      metrics_given = true;
      c->metrics_ = f.substr(std::string("--metrics_listen=").size());
    }
  }
  if (!metrics_given) {
    absl::StatusOr<int> metrics_port = FreePort();
    if (!metrics_port.ok()) return metrics_port.status();
    c->metrics_ = absl::StrCat("127.0.0.1:", *metrics_port);
  }
  if (absl::Status s = c->Spawn(); !s.ok()) return s;
  if (absl::Status s = c->WaitReady(); !s.ok()) return s;
  if (c->options_.require_runtime) {
    if (absl::Status s = c->WaitRuntimeUp(); !s.ok()) return s;
  }
  return c;
}

ChildBerthd::~ChildBerthd() {
  Stop();
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

absl::Status ChildBerthd::Spawn() {
  std::vector<std::string> argv = {
      options_.binary,
      absl::StrCat("--listen=", target_),
      absl::StrCat("--metrics_listen=", metrics_),
      absl::StrCat("--token_file=", dir_, "/tokens"),
      absl::StrCat("--data_dir=", dir_, "/data"),
      absl::StrCat("--instance=berth-load-", getpid()),
  };
  argv.insert(argv.end(), options_.flags.begin(), options_.flags.end());
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  const std::string log = dir_ + "/berthd.log";
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execv(args[0], args.data());
    _exit(127);
  }
  pid_ = pid;
  return absl::OkStatus();
}

// True once something accepts TCP connections on `port` of 127.0.0.1.
static bool PortOpen(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool open = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return open;
}

absl::Status ChildBerthd::WaitReady() {
  // First the port (berthd serves gRPC before its store is loaded): a gRPC
  // channel that found nothing listening backs off for a second or more
  // between reconnects, which would quantise the reopen time.
  ASSIGN_OR_RETURN(const HostPort address, ParseHostPort(target_));
  const int port = address.port;
  ClientOptions o;
  o.target = target_;
  o.token = options_.operator_token;
  o.timeout = absl::Seconds(5);
  absl::StatusOr<std::unique_ptr<BerthClient>> client = BerthClient::Connect(o);
  if (!client.ok()) return client.status();
  const absl::Time deadline = absl::Now() + options_.ready_timeout;
  while (absl::Now() < deadline) {
    if (PortOpen(port) && (*client)->GetBudgets().ok()) return absl::OkStatus();
    RETURN_IF_ERROR(CheckRunning("before serving"));
    absl::SleepFor(absl::Milliseconds(5));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("berthd did not serve within ", absl::FormatDuration(options_.ready_timeout)));
}

absl::Status ChildBerthd::CheckRunning(absl::string_view before) {
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return absl::OkStatus();
  pid_ = 0;
  return absl::FailedPreconditionError(
      absl::StrCat("berthd exited ", before, "; its log ends:\n", Tail(dir_ + "/berthd.log")));
}

absl::Status ChildBerthd::WaitRuntimeUp() {
  if (metrics_.empty()) {
    return absl::FailedPreconditionError(
        "--metrics_listen= turns berthd's /metrics off: whether its runtime is up cannot be "
        "checked (pass --require_runtime=false to measure without the check)");
  }
  const absl::Time deadline = absl::Now() + options_.runtime_timeout;
  std::string last = "no answer";
  while (absl::Now() < deadline) {
    absl::StatusOr<std::string> text = ScrapeMetrics(metrics_);
    if (text.ok()) {
      const std::optional<double> up = MetricValue(*text, "berth_runtime_up");
      if (up.has_value() && *up == 1) return absl::OkStatus();
      last = up.has_value() ? absl::StrCat("berth_runtime_up ", *up)
                            : std::string("no berth_runtime_up yet (no pass finished)");
    } else {
      last = text.status().ToString();
    }
    RETURN_IF_ERROR(CheckRunning("before its runtime was up"));
    absl::SleepFor(absl::Milliseconds(50));
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "berthd's runtime is not up after ", absl::FormatDuration(options_.runtime_timeout), " (",
      last, " at http://", metrics_,
      "/metrics): its reconcile pass does not plan, so the figures would leave out the "
      "planner state it keeps; start dockerd (bash tools/setup.sh), or pass "
      "--require_runtime=false to measure without it. Its log ends:\n",
      Tail(dir_ + "/berthd.log")));
}

void ChildBerthd::Stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = 0;
}

absl::StatusOr<ChildBerthd::Reopen> ChildBerthd::Restart() {
  Stop();
  const absl::Time t0 = absl::Now();
  if (absl::Status s = Spawn(); !s.ok()) return s;
  if (absl::Status s = WaitReady(); !s.ok()) return s;
  Reopen r;
  r.serving = absl::Now() - t0;
  ClientOptions o;
  o.target = target_;
  o.token = options_.operator_token;
  o.timeout = options_.ready_timeout;
  ASSIGN_OR_RETURN(std::unique_ptr<BerthClient> client, BerthClient::Connect(o));
  v1::ListJobsRequest list;
  list.set_page_size(1);
  absl::StatusOr<v1::ListJobsResponse> jobs = client->ListJobs(list);
  if (!jobs.ok()) return jobs.status();
  r.loaded = absl::Now() - t0;
  return r;
}

}  // namespace berth
