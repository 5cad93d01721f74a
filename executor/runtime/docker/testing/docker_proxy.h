// DockerProxy: a fault-injecting unix-socket proxy in front of dockerd
// (testonly).
//
// Listens on its own unix socket and relays each connection to the engine's
// socket, after looking at the connection's first request line. Faults chosen
// by method and path substring can delay the request, drop the connection
// before or after forwarding it (the latter: the engine acts, the answer is
// lost), or answer 500 without forwarding. DockerHttp opens one connection
// per request, so every request is seen.
//
// Thread-safe. The destructor closes every connection and joins its threads.
#ifndef BERTH_EXECUTOR_RUNTIME_DOCKER_TESTING_DOCKER_PROXY_H_
#define BERTH_EXECUTOR_RUNTIME_DOCKER_TESTING_DOCKER_PROXY_H_

#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace berth {
namespace testing {

class DockerProxy {
 public:
  enum class FaultKind {
    kDelay,              // wait `delay`, then forward normally
    kDropBeforeForward,  // close the client connection; the engine sees nothing
    kDropAfterForward,   // forward, wait for the answer, close without relaying
    kError500,           // answer 500 {"message":"injected fault"}
    kTrickle,            // forward, relay the answer `trickle_bytes` per `delay`
  };
  struct Fault {
    std::string method;         // "GET", "POST", ...; empty matches any
    std::string path_contains;  // e.g. "/containers/create"
    FaultKind kind = FaultKind::kError500;
    absl::Duration delay = absl::ZeroDuration();
    int times = -1;  // how many requests it hits; -1: until cleared
    // Docker's error text in a kError500 answer.
    std::string message = "injected fault";
    // kTrickle: bytes of the answer relayed per `delay` (a slow engine).
    size_t trickle_bytes = 4096;
  };

  // Listens on `listen_path` (removed first if it exists) and relays to the
  // unix socket `upstream_path`.
  static absl::StatusOr<std::unique_ptr<DockerProxy>> Start(
      std::string listen_path,
      std::string upstream_path = "/var/run/docker.sock");
  // Listens on TCP 127.0.0.1 (a free port) instead: a plain-HTTP engine
  // endpoint, to exercise DockerHttp's TCP path.
  static absl::StatusOr<std::unique_ptr<DockerProxy>> StartTcp(
      std::string upstream_path = "/var/run/docker.sock");
  ~DockerProxy();

  // For DockerEndpoint::url: "unix://<listen_path>" or "http://127.0.0.1:<port>".
  std::string url() const { return url_; }

  void AddFault(Fault f);
  void ClearFaults();
  // An engine outage: while down, every new connection is closed before its
  // request is read (the client sees an empty reply), and SetDown(true) cuts
  // every connection being relayed now (e.g. an events stream).
  // SetDown(false) relays normally again.
  void SetDown(bool down);
  // Requests seen (faulted or not) whose method matches (empty: any) and
  // whose path contains `path_contains`.
  int Seen(const std::string& method, const std::string& path_contains) const;

 private:
  DockerProxy(std::string listen_path, std::string url,
              std::string upstream_path, int listen_fd, int stop_read,
              int stop_write);
  static absl::StatusOr<std::unique_ptr<DockerProxy>> Finish(
      std::string listen_path, std::string url, std::string upstream_path,
      int listen_fd);
  void AcceptLoop();
  void Handle(int client);
  // Returns the first matching fault (decrementing its count), or nullptr.
  bool TakeFault(const std::string& method, const std::string& path, Fault* out);

  // Constant after construction.
  const std::string listen_path_;  // empty for TCP
  const std::string url_;
  const std::string upstream_path_;
  const int listen_fd_;
  const int stop_read_;   // readable once the proxy is stopping
  const int stop_write_;

  mutable absl::Mutex mu_;
  std::vector<Fault> faults_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> seen_ ABSL_GUARDED_BY(mu_);  // "METHOD path"
  std::vector<std::thread> handlers_ ABSL_GUARDED_BY(mu_);
  bool down_ ABSL_GUARDED_BY(mu_) = false;
  // Sockets of connections being relayed (cut by SetDown(true)).
  std::set<int> relaying_ ABSL_GUARDED_BY(mu_);
  std::thread acceptor_;
};

}  // namespace testing
}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_DOCKER_TESTING_DOCKER_PROXY_H_
