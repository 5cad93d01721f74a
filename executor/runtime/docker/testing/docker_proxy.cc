#include "executor/runtime/docker/testing/docker_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

namespace berth {
namespace testing {
namespace {

bool WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, data, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

int ConnectUnix(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Waits until `fd` is readable or the stop pipe fires; false on stop/timeout.
bool WaitReadable(int fd, int stop_fd, int timeout_ms) {
  pollfd p[2] = {{fd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
  while (true) {
    int r = ::poll(p, 2, timeout_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    if (p[1].revents != 0) return false;
    return true;
  }
}

// Writes `n` bytes `fault.trickle_bytes` at a time, waiting `fault.delay`
// before each piece (false: the client went away or the proxy stops).
bool TrickleAll(int fd, const char* data, size_t n, const DockerProxy::Fault& fault,
                int stop_fd) {
  const size_t per = fault.trickle_bytes > 0 ? fault.trickle_bytes : 1;
  for (size_t off = 0; off < n; off += per) {
    pollfd p = {stop_fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(fault.delay))) != 0) {
      return false;
    }
    if (!WriteAll(fd, data + off, std::min(per, n - off))) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<DockerProxy>> DockerProxy::Start(
    std::string listen_path, std::string upstream_path) {
  sockaddr_un addr{};
  if (listen_path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError("proxy socket path too long: " + listen_path);
  }
  ::unlink(listen_path.c_str());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", strerror(errno)));
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, listen_path.c_str(), sizeof(addr.sun_path) - 1);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(fd, 128) != 0) {
    const std::string err = strerror(errno);
    ::close(fd);
    return absl::InternalError(absl::StrCat("bind/listen ", listen_path, ": ", err));
  }
  const std::string url = "unix://" + listen_path;
  return Finish(std::move(listen_path), url, std::move(upstream_path), fd);
}

absl::StatusOr<std::unique_ptr<DockerProxy>> DockerProxy::StartTcp(
    std::string upstream_path) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(fd, 128) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string err = strerror(errno);
    ::close(fd);
    return absl::InternalError(absl::StrCat("bind/listen 127.0.0.1: ", err));
  }
  const std::string url = absl::StrCat("http://127.0.0.1:", ntohs(addr.sin_port));
  return Finish("", url, std::move(upstream_path), fd);
}

absl::StatusOr<std::unique_ptr<DockerProxy>> DockerProxy::Finish(
    std::string listen_path, std::string url, std::string upstream_path,
    int listen_fd) {
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) {
    ::close(listen_fd);
    return absl::InternalError("pipe2 failed");
  }
  return std::unique_ptr<DockerProxy>(
      new DockerProxy(std::move(listen_path), std::move(url),
                      std::move(upstream_path), listen_fd, pipefd[0], pipefd[1]));
}

DockerProxy::DockerProxy(std::string listen_path, std::string url,
                         std::string upstream_path, int listen_fd,
                         int stop_read, int stop_write)
    : listen_path_(std::move(listen_path)),
      url_(std::move(url)),
      upstream_path_(std::move(upstream_path)),
      listen_fd_(listen_fd),
      stop_read_(stop_read),
      stop_write_(stop_write) {
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

DockerProxy::~DockerProxy() {
  const char b = 'x';
  (void)!::write(stop_write_, &b, 1);
  acceptor_.join();
  std::vector<std::thread> handlers;
  {
    absl::MutexLock l(&mu_);
    handlers.swap(handlers_);
  }
  for (std::thread& t : handlers) t.join();
  ::close(listen_fd_);
  ::close(stop_read_);
  ::close(stop_write_);
  if (!listen_path_.empty()) ::unlink(listen_path_.c_str());
}

void DockerProxy::AddFault(Fault f) {
  absl::MutexLock l(&mu_);
  faults_.push_back(std::move(f));
}

void DockerProxy::ClearFaults() {
  absl::MutexLock l(&mu_);
  faults_.clear();
}

void DockerProxy::SetDown(bool down) {
  absl::MutexLock l(&mu_);
  down_ = down;
  if (!down) return;
  // Wakes the relay loops (poll sees the hang-up); they close the sockets.
  for (int fd : relaying_) ::shutdown(fd, SHUT_RDWR);
}

int DockerProxy::Seen(const std::string& method,
                      const std::string& path_contains) const {
  absl::MutexLock l(&mu_);
  int n = 0;
  for (const std::string& s : seen_) {
    const size_t sp = s.find(' ');
    if ((method.empty() || s.substr(0, sp) == method) &&
        s.find(path_contains, sp) != std::string::npos) {
      ++n;
    }
  }
  return n;
}

bool DockerProxy::TakeFault(const std::string& method, const std::string& path,
                            Fault* out) {
  absl::MutexLock l(&mu_);
  seen_.push_back(method + " " + path);
  for (auto it = faults_.begin(); it != faults_.end(); ++it) {
    if ((!it->method.empty() && it->method != method) ||
        path.find(it->path_contains) == std::string::npos || it->times == 0) {
      continue;
    }
    *out = *it;
    if (it->times > 0 && --it->times == 0) faults_.erase(it);
    return true;
  }
  return false;
}

void DockerProxy::AcceptLoop() {
  while (true) {
    if (!WaitReadable(listen_fd_, stop_read_, -1)) return;
    int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    absl::MutexLock l(&mu_);
    handlers_.emplace_back([this, client] { Handle(client); });
  }
}

void DockerProxy::Handle(int client) {
  {
    absl::MutexLock l(&mu_);
    if (down_) {
      ::close(client);
      return;
    }
  }
  // Read the request head (and whatever body bytes come with it).
  std::string head;
  char buf[16384];
  while (head.find("\r\n\r\n") == std::string::npos) {
    if (!WaitReadable(client, stop_read_, 30000)) {
      ::close(client);
      return;
    }
    ssize_t n = ::recv(client, buf, sizeof(buf), 0);
    if (n <= 0) {
      ::close(client);
      return;
    }
    head.append(buf, static_cast<size_t>(n));
  }
  const std::string line = head.substr(0, head.find("\r\n"));
  std::vector<std::string> parts = absl::StrSplit(line, ' ');
  const std::string method = parts.size() > 0 ? parts[0] : "";
  const std::string path = parts.size() > 1 ? parts[1] : "";

  Fault fault;
  const bool faulted = TakeFault(method, path, &fault);
  if (faulted) {
    switch (fault.kind) {
      case FaultKind::kDelay: {
        // Interruptible sleep: the stop pipe ends it early.
        pollfd p = {stop_read_, POLLIN, 0};
        ::poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(fault.delay)));
        break;
      }
      case FaultKind::kDropBeforeForward:
        ::close(client);
        return;
      case FaultKind::kError500: {
        const std::string body = nlohmann::json{{"message", fault.message}}.dump();
        const std::string resp = absl::StrCat(
            "HTTP/1.1 500 Internal Server Error\r\nContent-Type: "
            "application/json\r\nContent-Length: ",
            body.size(), "\r\nConnection: close\r\n\r\n", body);
        WriteAll(client, resp.data(), resp.size());
        ::close(client);
        return;
      }
      case FaultKind::kDropAfterForward:
      case FaultKind::kTrickle:
        break;
    }
  }
  int upstream = ConnectUnix(upstream_path_);
  if (upstream < 0) {
    ::close(client);
    return;
  }
  const bool drop_after = faulted && fault.kind == FaultKind::kDropAfterForward;
  const bool trickle = faulted && fault.kind == FaultKind::kTrickle;
  {
    absl::MutexLock l(&mu_);
    if (down_) {
      ::close(upstream);
      ::close(client);
      return;
    }
    relaying_.insert(client);
    relaying_.insert(upstream);
  }
  bool ok = WriteAll(upstream, head.data(), head.size());
  // Relay both ways until either side closes or the proxy stops.
  while (ok) {
    pollfd p[3] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}, {stop_read_, POLLIN, 0}};
    int r = ::poll(p, 3, -1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0 || p[2].revents != 0) break;
    if (p[0].revents != 0) {
      ssize_t n = ::recv(client, buf, sizeof(buf), 0);
      if (n <= 0 || !WriteAll(upstream, buf, static_cast<size_t>(n))) break;
    }
    if (p[1].revents != 0) {
      ssize_t n = ::recv(upstream, buf, sizeof(buf), 0);
      if (n <= 0) break;
      if (drop_after) {
        // The engine has acted and answered; the client never hears of it.
        // Read the rest of the answer briefly so the engine finishes cleanly.
        while (WaitReadable(upstream, stop_read_, 200) &&
               ::recv(upstream, buf, sizeof(buf), 0) > 0) {
        }
        break;
      }
      if (trickle) {
        if (!TrickleAll(client, buf, static_cast<size_t>(n), fault, stop_read_)) break;
        continue;
      }
      if (!WriteAll(client, buf, static_cast<size_t>(n))) break;
    }
  }
  {
    // Out of the set before the numbers can be reused by another socket.
    absl::MutexLock l(&mu_);
    relaying_.erase(client);
    relaying_.erase(upstream);
  }
  ::close(upstream);
  ::close(client);
}

}  // namespace testing
}  // namespace berth
