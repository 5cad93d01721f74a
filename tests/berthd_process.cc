#include "tests/berthd_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "planner/base/proto_json.h"
#include "tools/base/subprocess.h"

namespace berth {
namespace {

std::string UniqueName(const std::string& prefix) {
  static std::atomic<int> counter{0};
  absl::BitGen gen;
  return absl::StrCat(prefix, "-", getpid(), "-", counter++, "-",
                      absl::Uniform<uint32_t>(gen, 0, 1u << 30));
}

}  // namespace

std::string TokenFor(Role role) {
  return absl::StrCat(RoleName(role), "-token-for-berth-tests");
}

int PickFreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) close(fd);
    return 0;
  }
  int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

void RemoveInstanceContainers(const std::string& instance) {
  DockerRuntimeOptions o;
  o.instance = instance;
  o.image_allow_list = {"*"};
  absl::StatusOr<std::unique_ptr<DockerRuntime>> rt = DockerRuntime::Create(o);
  if (!rt.ok()) return;
  absl::StatusOr<ContainerList> list = (*rt)->List();
  if (!list.ok()) return;
  for (const auto& [job, c] : *list) (void)(*rt)->Remove(job);
}

std::string UniqueJobPrefix() {
  absl::BitGen gen;
  return absl::StrCat("r", absl::Hex(absl::Uniform<uint32_t>(gen)), "-");
}

v1::JobSpec BusyboxJob(const std::string& id, const std::string& workspace,
                       int64_t memory_bytes, const std::string& shell) {
  v1::JobSpec j;
  j.set_id(id);
  j.set_workspace(workspace);
  j.set_action("test");
  j.set_image("berth-test/busybox:1");
  j.add_argv("sh");
  j.add_argv("-c");
  j.add_argv(shell);
  j.mutable_resources()->set_cpu_millis(100);
  j.mutable_resources()->set_memory_bytes(memory_bytes);
  j.mutable_expected_duration()->set_seconds(2);
  return j;
}

absl::StatusOr<std::unique_ptr<BerthdProcess>> BerthdProcess::Start(
    BerthdProcessOptions options) {
  if (options.data_dir.empty()) options.data_dir = TmpDir() + "/" + UniqueName("data");
  if (options.instance.empty()) options.instance = UniqueName("t");
  std::unique_ptr<BerthdProcess> p(new BerthdProcess(options));
  p->token_file_ = TmpDir() + "/" + UniqueName("tokens");
  std::string tokens;
  for (Role role : {Role::kPusher, Role::kOperator, Role::kReader}) {
    absl::StrAppend(&tokens, RoleName(role), " test-", RoleName(role), " ", TokenFor(role), "\n");
  }
  absl::Status written = WriteFileAtomically(p->token_file_, tokens);
  if (!written.ok()) return written;
  chmod(p->token_file_.c_str(), 0600);
  p->log_file_ = TmpDir() + "/" + UniqueName("berthd") + ".log";
  p->port_ = PickFreePort();
  p->metrics_port_ = PickFreePort();
  absl::Status s = p->Spawn(options.env);
  if (!s.ok()) return s;
  return p;
}

absl::Status BerthdProcess::Spawn(const std::map<std::string, std::string>& env) {
  std::vector<std::string> args = {
      "server/berthd",
      absl::StrCat("--listen=127.0.0.1:", port_),
      absl::StrCat("--metrics_listen=127.0.0.1:", metrics_port_),
      absl::StrCat("--token_file=", token_file_),
      absl::StrCat("--data_dir=", options_.data_dir),
      absl::StrCat("--instance=", options_.instance),
      "--allowed_images=berth-test/*",
      absl::StrCat("--memory=", options_.memory),
      absl::StrCat("--cpus=", options_.cpus),
      absl::StrCat("--max_workers=", options_.max_workers),
      absl::StrCat("--pool_max=", options_.pool_max),
      absl::StrCat("--tick=", options_.tick),
      absl::StrCat("--stop_grace=", options_.stop_grace),
  };
  for (const std::string& f : options_.extra_flags) args.push_back(f);
  int log_fd = open(log_file_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return absl::InternalError(absl::StrCat("cannot open ", log_file_));
  pid_t pid = fork();
  if (pid < 0) {
    close(log_fd);
    return absl::InternalError("fork failed");
  }
  if (pid == 0) {
    dup2(log_fd, STDERR_FILENO);
    dup2(log_fd, STDOUT_FILENO);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(log_fd);
  pid_ = pid;
  return AwaitServing(absl::Seconds(30));
}

absl::Status BerthdProcess::AwaitServing(absl::Duration timeout) {
  auto channel = grpc::CreateChannel(target(), grpc::InsecureChannelCredentials());
  auto health = grpc::health::v1::Health::NewStub(channel);
  absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::FailedPreconditionError(absl::StrCat(
          "berthd ",
          WIFSIGNALED(status) ? absl::StrCat("was killed by signal ", WTERMSIG(status), " (",
                                             strsignal(WTERMSIG(status)), ")")
                              : absl::StrCat("exited with code ", WEXITSTATUS(status)),
          " while starting:\n", Log()));
    }
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
    grpc::health::v1::HealthCheckRequest request;
    grpc::health::v1::HealthCheckResponse response;
    if (health->Check(&context, request, &response).ok() &&
        response.status() == grpc::health::v1::HealthCheckResponse::SERVING) {
      return absl::OkStatus();
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  return absl::DeadlineExceededError(absl::StrCat("berthd not SERVING after ",
                                                  absl::FormatDuration(timeout), ":\n", Log()));
}

BerthdProcess::~BerthdProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    if (WaitExit(absl::Seconds(20)) == -1) Kill9();
  }
  RemoveInstanceContainers(options_.instance);
}

std::string BerthdProcess::target() const { return absl::StrCat("127.0.0.1:", port_); }

std::unique_ptr<BerthClient> BerthdProcess::ClientWithToken(const std::string& token) const {
  ClientOptions o;
  o.target = target();
  o.token = token;
  return *BerthClient::Connect(o);
}

std::unique_ptr<BerthClient> BerthdProcess::Client(Role role) const {
  return ClientWithToken(TokenFor(role));
}

int BerthdProcess::Kill9() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

int BerthdProcess::Terminate(absl::Duration timeout) {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  return WaitExit(timeout);
}

int BerthdProcess::WaitExit(absl::Duration timeout) {
  if (pid_ <= 0) return -1;
  absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return status;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return -1;
}

bool BerthdProcess::Running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

absl::Status BerthdProcess::Restart(std::map<std::string, std::string> env) {
  if (Running()) return absl::FailedPreconditionError("berthd is still running");
  return Spawn(env);
}

std::string BerthdProcess::Log() const {
  absl::StatusOr<std::string> log = ReadFileToString(log_file_);
  return log.ok() ? *log : "";
}

absl::StatusOr<std::string> BerthdProcess::Metrics() const {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(metrics_port_));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return absl::UnavailableError("metrics port not answering");
  }
  std::string request = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  (void)!write(fd, request.data(), request.size());
  std::string response;
  char buf[8192];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) response.append(buf, static_cast<size_t>(n));
  close(fd);
  size_t body = response.find("\r\n\r\n");
  if (body == std::string::npos) return absl::InternalError("bad HTTP response");
  return response.substr(body + 4);
}

absl::StatusOr<v1::Explanation> WaitPlanned(BerthClient& c, const std::string& id,
                                            absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    absl::StatusOr<v1::Explanation> e = c.ExplainJob(id);
    if (e.ok() && e->verdict() != v1::VERDICT_UNSPECIFIED) return e;
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat(id, ": ", e.ok() ? e->summary() : e.status().ToString()));
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
}

}  // namespace berth
