#include "executor/logs/run_metadata_evidence.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/logs/log_archive.h"
#include "nlohmann/json.hpp"
#include "planner/base/scoped_fd.h"
#include "planner/base/status_macros.h"

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

namespace {

// <root>/<workspace>/metadata/<job><suffix>, opened without following a
// link and checked as the header says (`max_bytes`: the largest size
// trusted). Sets *path; *size to the file's size. Returns the descriptor,
// the caller's to close.
absl::StatusOr<int> OpenTrusted(const RunMetadataOptions& options, const v1::JobSpec& spec,
                                absl::string_view suffix, off_t max_bytes, std::string* path,
                                off_t* size) {
  if (options.workspaces_root.empty() || spec.workspace().empty()) {
    return absl::NotFoundError("no workspace to hold run metadata");
  }
  *path = absl::StrCat(options.workspaces_root, "/", spec.workspace(), "/metadata/",
                       LogArchive::JobDirName(spec.id()), suffix);
  auto missing = [&](absl::string_view what) {
    return absl::NotFoundError(absl::StrCat("run metadata ", *path, ": ", what, ": ",
                                            std::strerror(errno)));
  };
  ScopedFd root(open(options.workspaces_root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (root.get() < 0) return missing("workspaces root cannot be opened");
  ScopedFd ws(openat(root.get(), spec.workspace().c_str(),
                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (ws.get() < 0) return missing("workspace cannot be opened (a directory, not a link)");
  ScopedFd dir(openat(ws.get(), "metadata", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir.get() < 0) return missing("metadata directory cannot be opened");
  const std::string name = absl::StrCat(LogArchive::JobDirName(spec.id()), suffix);
  ScopedFd fd(openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return missing("not written");
    return absl::FailedPreconditionError(absl::StrCat(
        "run metadata ", *path, ": cannot be opened (not a link): ", std::strerror(errno)));
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
      (st.st_mode & 0022) != 0 || st.st_size > max_bytes) {
    return absl::FailedPreconditionError(absl::StrCat(
        "run metadata ", *path,
        ": not trusted (it must be a regular file of berthd's user, writable by no one else)"));
  }
  *size = st.st_size;
  return fd.release();
}

}  // namespace

absl::StatusOr<RunEvidence> ReadRunEvidence(const RunMetadataOptions& options,
                                            const v1::JobSpec& spec) {
  RunEvidence e;
  off_t size = 0;
  absl::StatusOr<int> opened = OpenTrusted(options, spec, ".json", kMaxBytes, &e.path, &size);
  if (!opened.ok()) return opened.status();
  ScopedFd fd(*opened);
  std::string text(static_cast<size_t>(size), '\0');
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
  if (auto b = j.find("logBytes"); b != j.end() && b->is_object()) {
    auto bytes = [&](const char* key) -> std::optional<int64_t> {
      auto v = b->find(key);
      if (v == b->end() || !v->is_number_integer() || v->get<int64_t>() < 0) return std::nullopt;
      return v->get<int64_t>();
    };
    e.stdout_log_bytes = bytes("stdout");
    e.stderr_log_bytes = bytes("stderr");
  }
  return e;
}

absl::Status ImportRunLog(const RunMetadataOptions& options, const v1::JobSpec& spec,
                          const RunEvidence& evidence, LogArchive& archive) {
  if (!evidence.stdout_log_bytes.has_value() || !evidence.stderr_log_bytes.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("run metadata ", evidence.path, ": no logBytes: the log cannot be split"));
  }
  if (archive.Has(spec.id(), evidence.attempt)) {
    return absl::AlreadyExistsError(absl::StrCat("attempt ", evidence.attempt, " of ", spec.id(),
                                                 " is already kept"));
  }
  const int64_t out = *evidence.stdout_log_bytes;
  const int64_t err = *evidence.stderr_log_bytes;
  const int64_t want = out + (err > 0 ? static_cast<int64_t>(sizeof(kStderrMarker) - 1) + err : 0);
  std::string path;
  off_t size = 0;
  ASSIGN_OR_RETURN(const int raw, OpenTrusted(options, spec, ".log",
                                              std::numeric_limits<off_t>::max(), &path, &size));
  ScopedFd fd(raw);
  if (size != want) {
    return absl::FailedPreconditionError(absl::StrCat(
        "run metadata ", path, ": ", size, " bytes where its metadata says ", want));
  }
  return archive.Capture(spec.id(), evidence.attempt, [&](const LogSink& sink) -> absl::Status {
    std::string buf;
    off_t at = 0;
    // Hands [at, at + n) of the file to `stream`, in chunks.
    auto pass = [&](LogStream stream, int64_t n) -> absl::Status {
      for (int64_t left = n; left > 0;) {
        buf.resize(static_cast<size_t>(std::min<int64_t>(left, 1 << 20)));
        const ssize_t got = pread(fd.get(), buf.data(), buf.size(), at);
        if (got <= 0) {
          return absl::DataLossError(absl::StrCat(path, ": short read at ", at));
        }
        at += got;
        left -= got;
        if (!sink(stream, absl::string_view(buf.data(), static_cast<size_t>(got)))) {
          return absl::CancelledError("log capture stopped");
        }
      }
      return absl::OkStatus();
    };
    RETURN_IF_ERROR(pass(LogStream::kStdout, out));
    at += err > 0 ? static_cast<off_t>(sizeof(kStderrMarker) - 1) : 0;
    return pass(LogStream::kStderr, err);
  });
}

}  // namespace berth
