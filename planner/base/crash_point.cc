#include "planner/base/crash_point.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/numbers.h"

namespace berth {
namespace {

struct Armed {
  std::string name;
  int after = 1;
  std::atomic<int> hits{0};
};

Armed* Load() {
  const char* env = std::getenv("BERTH_CRASH_POINT");
  if (env == nullptr || *env == '\0') return nullptr;
  auto* armed = new Armed();
  std::string spec(env);
  size_t colon = spec.rfind(':');
  if (colon != std::string::npos) {
    int n = 0;
    if (absl::SimpleAtoi(spec.substr(colon + 1), &n) && n > 0) {
      armed->after = n;
      spec.resize(colon);
    }
  }
  armed->name = spec;
  return armed;
}

}  // namespace

void CrashPoint(const char* name) {
  static Armed* const armed = Load();
  if (armed == nullptr || armed->name != name) return;
  if (armed->hits.fetch_add(1) + 1 == armed->after) {
    static const char kMessage[] = "berth: crash point reached\n";
    (void)!write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
    kill(getpid(), SIGKILL);
  }
}

}  // namespace berth
