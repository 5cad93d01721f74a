#include "executor/runtime/docker/docker_start_errors.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace berth {

bool IsPermanentStartRefusal(absl::string_view m) {
  // Host pressure: the same spec may start in a moment.
  const std::string lower = absl::AsciiStrToLower(m);
  for (absl::string_view transient :
       {"resource temporarily unavailable", "cannot allocate memory",
        "no space left on device", "too many open files", "timeout", "timed out",
        "connection refused", "context deadline exceeded"}) {
    if (absl::StrContains(lower, transient)) return false;
  }
  for (absl::string_view permanent :
       {"OCI runtime create failed", "OCI runtime start failed", "runc create failed",
        "invalid argument", "executable file not found", "no such file or directory",
        "unable to find user", "permission denied", "not a directory",
        "Minimum memory limit", "Range of CPUs", "invalid reference format"}) {
    if (absl::StrContains(m, permanent)) return true;
  }
  return false;
}

absl::Status ClassifyDockerStartError(const absl::Status& s) {
  if (s.code() != absl::StatusCode::kInternal || !IsPermanentStartRefusal(s.message())) {
    return s;
  }
  return absl::FailedPreconditionError(
      absl::StrCat("Docker refused to start the container: ", s.message()));
}

}  // namespace berth
