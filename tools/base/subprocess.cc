#include "tools/base/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

extern char** environ;

namespace berth {

std::string TmpDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string TmpPath(const std::string& suffix) {
  static std::atomic<int> counter{0};
  return absl::StrCat(TmpDir(), "/sub-", getpid(), "-", counter++, suffix);
}

int DecodeStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Subprocess>> Subprocess::Start(
    const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
  std::unique_ptr<Subprocess> p(new Subprocess());
  p->out_path_ = TmpPath(".out");
  p->err_path_ = TmpPath(".err");
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) vars[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : env) {
    if (v == "\x01unset") {
      vars.erase(k);
    } else {
      vars[k] = v;
    }
  }
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : vars) env_strings.push_back(k + "=" + v);
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  std::vector<char*> cenv;
  for (const std::string& e : env_strings) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  int out = open(p->out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  int err = open(p->err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (out < 0 || err < 0) return absl::InternalError("cannot create output files");
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", strerror(errno)));
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    dup2(out, 1);
    dup2(err, 2);
    // Unblock signals a parent may have blocked.
    sigset_t set;
    sigemptyset(&set);
    sigprocmask(SIG_SETMASK, &set, nullptr);
    execve(cargv[0], cargv.data(), cenv.data());
    _exit(127);
  }
  close(out);
  close(err);
  p->pid_ = pid;
  return p;
}

Subprocess::~Subprocess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (!out_path_.empty()) unlink(out_path_.c_str());
  if (!err_path_.empty()) unlink(err_path_.c_str());
}

void Subprocess::Signal(int sig) {
  if (pid_ > 0) kill(pid_, sig);
}

std::string Subprocess::Stdout() const { return ReadAll(out_path_); }
std::string Subprocess::Stderr() const { return ReadAll(err_path_); }

bool Subprocess::Running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return true;
  exit_code_ = DecodeStatus(status);
  pid_ = -1;
  return false;
}

ProcessResult Subprocess::Wait(absl::Duration timeout) {
  ProcessResult r;
  r.exit_code = exit_code_;
  const absl::Time deadline = absl::Now() + timeout;
  while (pid_ > 0) {
    int status = 0;
    pid_t w = waitpid(pid_, &status, WNOHANG);
    if (w == pid_) {
      r.exit_code = DecodeStatus(status);
      pid_ = -1;
      break;
    }
    if (absl::Now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
      r.exit_code = -1;
      break;
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  r.out = ReadAll(out_path_);
  r.err = ReadAll(err_path_);
  return r;
}

ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env, absl::Duration timeout) {
  absl::StatusOr<std::unique_ptr<Subprocess>> p = Subprocess::Start(argv, env);
  if (!p.ok()) {
    ProcessResult r;
    r.err = p.status().ToString();
    return r;
  }
  return (*p)->Wait(timeout);
}

bool WaitFor(const std::function<bool()>& condition, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    if (condition()) return true;
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(50));
  }
}

}  // namespace berth
