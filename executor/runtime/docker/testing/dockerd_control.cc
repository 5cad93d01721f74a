#include "executor/runtime/docker/testing/dockerd_control.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

namespace berth::testing {

int DockerdPid() {
  std::ifstream f(kDockerdPidFile);
  std::string s;
  std::getline(f, s);
  int pid = 0;
  return absl::SimpleAtoi(absl::StripAsciiWhitespace(s), &pid) ? pid : 0;
}

bool ProcessAlive(int pid) {
  struct stat st;
  return pid > 0 && stat(absl::StrCat("/proc/", pid).c_str(), &st) == 0;
}

bool StartDockerd(const std::function<bool()>& ready) {
  pid_t child = fork();
  if (child < 0) return false;
  if (child == 0) {
    setsid();
    if (fork() != 0) _exit(0);
    int in = open("/dev/null", O_RDONLY);
    int out = open(kDockerdLog, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (in >= 0) dup2(in, 0);
    if (out >= 0) {
      dup2(out, 1);
      dup2(out, 2);
    }
    // dockerd needs iptables & co. from the sbin directories, which Bazel's
    // strict test PATH lacks.
    static char path[] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    char* const envp[] = {path, nullptr};
    execle(kDockerdBinary, kDockerdBinary, static_cast<char*>(nullptr), envp);
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  absl::Time deadline = absl::Now() + absl::Seconds(90);
  while (absl::Now() < deadline) {
    if (ready()) return true;
    absl::SleepFor(absl::Milliseconds(500));
  }
  return false;
}

}  // namespace berth::testing
