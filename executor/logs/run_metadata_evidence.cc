#include "executor/logs/run_metadata_evidence.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/logs/log_archive.h"
#include "nlohmann/json.hpp"
#include "planner/base/scoped_fd.h"

namespace berth {
namespace {

using nlohmann::json;

constexpr off_t kMaxBytes = 1 << 20;  // the writer's files are a few KiB

std::optional<absl::Time> TimeField(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, it->get<std::string>(), &t, &err)) {
    return std::nullopt;
  }
  return t;
}

std::string StrField(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

absl::StatusOr<RunEvidence> ReadRunEvidence(const RunMetadataOptions& options,
                                            const v1::JobSpec& spec) {
  if (options.workspaces_root.empty() || spec.workspace().empty()) {
    return absl::NotFoundError("no workspace to hold run metadata");
  }
  RunEvidence e;
  e.path = absl::StrCat(options.workspaces_root, "/", spec.workspace(), "/metadata/",
                        LogArchive::JobDirName(spec.id()), ".json");
  auto missing = [&](absl::string_view what) {
    return absl::NotFoundError(absl::StrCat("run metadata ", e.path, ": ", what, ": ",
                                            std::strerror(errno)));
  };
  ScopedFd root(open(options.workspaces_root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (root.get() < 0) return missing("workspaces root cannot be opened");
  ScopedFd ws(openat(root.get(), spec.workspace().c_str(),
                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (ws.get() < 0) return missing("workspace cannot be opened (a directory, not a link)");
  ScopedFd dir(openat(ws.get(), "metadata", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir.get() < 0) return missing("metadata directory cannot be opened");
  const std::string name = absl::StrCat(LogArchive::JobDirName(spec.id()), ".json");
  ScopedFd fd(openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return missing("not written");
    return absl::FailedPreconditionError(absl::StrCat(
        "run metadata ", e.path, ": cannot be opened (not a link): ", std::strerror(errno)));
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
      (st.st_mode & 0022) != 0 || st.st_size > kMaxBytes) {
    return absl::FailedPreconditionError(absl::StrCat(
        "run metadata ", e.path,
        ": not trusted (it must be a regular file of berthd's user, writable by no one else)"));
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = read(fd.get(), &text[got], text.size() - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::DataLossError(absl::StrCat("run metadata ", e.path, ": not JSON"));
  }
  std::vector<std::string> argv;
  if (auto a = j.find("argv"); a != j.end() && a->is_array()) {
    for (const json& v : *a) argv.push_back(v.is_string() ? v.get<std::string>() : "");
  }
  const bool same_job = StrField(j, "id") == spec.id() &&
                        StrField(j, "workspace") == spec.workspace() &&
                        StrField(j, "action") == spec.action() &&
                        StrField(j, "image") == spec.image() &&
                        argv == std::vector<std::string>(spec.argv().begin(), spec.argv().end());
  if (!same_job) {
    return absl::FailedPreconditionError(
        absl::StrCat("run metadata ", e.path, ": records another job"));
  }
  v1::JobState state = v1::JOB_STATE_UNSPECIFIED;
  if (!v1::JobState_Parse(StrField(j, "state"), &state) ||
      (state != v1::JOB_STATE_SUCCEEDED && state != v1::JOB_STATE_FAILED &&
       state != v1::JOB_STATE_CANCELLED)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "run metadata ", e.path, ": state '", StrField(j, "state"), "' is not a final one"));
  }
  e.state = state;
  if (auto a = j.find("attempt"); a != j.end() && a->is_number_integer()) {
    e.attempt = a->get<int>();
  }
  if (auto c = j.find("exitCode"); c != j.end() && c->is_number_integer()) {
    e.exit_code = c->get<int>();
  }
  v1::FailureCause cause = v1::FAILURE_CAUSE_UNSPECIFIED;
  if (v1::FailureCause_Parse(StrField(j, "failureCause"), &cause)) e.failure_cause = cause;
  e.message = StrField(j, "message");
  e.started_at = TimeField(j, "startedAt");
  e.finished_at = TimeField(j, "finishedAt");
  return e;
}

}  // namespace berth
