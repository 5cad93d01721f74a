#include "executor/logs/run_metadata.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "planner/base/scoped_fd.h"
#include "planner/convert/convert.h"

namespace berth {
namespace {

using nlohmann::json;

constexpr int64_t kChunkBytes = int64_t{1} << 20;

absl::Status FileError(const std::string& path, absl::string_view what) {
  const int e = errno;
  std::string message = absl::StrCat("run metadata ", path, ": ", what, ": ", std::strerror(e));
  if (e == ENOSPC || e == EDQUOT) return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

absl::Status WriteAll(int fd, absl::string_view data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return FileError(path, "write");
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

// Writes `name` in directory `dir` (path `dir_path`, for messages) through
// a temporary file: `fill(fd)` writes the content; then fsync, owner, mode
// 0640, rename over `name` (a planted symbolic link is replaced), fsync the
// directory.
template <typename Fill>
absl::Status WriteAtomically(int dir, const std::string& dir_path, const std::string& name,
                             int64_t gid, Fill fill) {
  const std::string tmp = absl::StrCat(".", name, ".tmp");
  const std::string path = absl::StrCat(dir_path, "/", name);
  unlinkat(dir, tmp.c_str(), 0);  // a crash's leftover
  ScopedFd fd(
      openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (fd.get() < 0) return FileError(path, "cannot create its temporary file");
  absl::Status s = fill(fd.get(), path);
  if (s.ok() && fsync(fd.get()) != 0) s = FileError(path, "fsync");
  if (s.ok() && gid >= 0 &&
      fchown(fd.get(), static_cast<uid_t>(-1), static_cast<gid_t>(gid)) != 0) {
    s = FileError(path, absl::StrCat("cannot be given to group ", gid));
  }
  if (s.ok() && fchmod(fd.get(), 0640) != 0) s = FileError(path, "cannot be made mode 0640");
  if (s.ok() && renameat(dir, tmp.c_str(), dir, name.c_str()) != 0) s = FileError(path, "rename");
  if (!s.ok()) {
    unlinkat(dir, tmp.c_str(), 0);
    return s;
  }
  if (fsync(dir) != 0) return FileError(dir_path, "fsync");
  return absl::OkStatus();
}

// Opens <root>/<workspace>/metadata, creating it, never through a link.
absl::Status OpenMetadataDir(const RunMetadataOptions& o, const std::string& workspace,
                             int* out, std::string* path) {
  const std::string ws_path = absl::StrCat(o.workspaces_root, "/", workspace);
  *path = absl::StrCat(ws_path, "/metadata");
  auto fail = [](const std::string& p, absl::string_view what) {
    return absl::FailedPreconditionError(
        absl::StrCat("run metadata: ", p, " ", what, ": ", std::strerror(errno)));
  };
  ScopedFd root(open(o.workspaces_root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (root.get() < 0) return fail(o.workspaces_root, "cannot be opened (workspaces root)");
  ScopedFd ws(
      openat(root.get(), workspace.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (ws.get() < 0) return fail(ws_path, "cannot be opened (a directory, not a link)");
  // Made 0750 (in a setgid workspace the kernel adds the setgid bit and the
  // group; no chmod with a setgid bit is ever asked for: the systemd unit's
  // RestrictSUIDSGID refuses it). The files get their group explicitly.
  if (mkdirat(ws.get(), "metadata", 0750) == 0) {
    ScopedFd made(openat(ws.get(), "metadata", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (made.get() < 0) return fail(*path, "cannot be opened");
    if (o.gid >= 0 &&
        fchown(made.get(), static_cast<uid_t>(-1), static_cast<gid_t>(o.gid)) != 0) {
      return fail(*path, absl::StrCat("cannot be given to group ", o.gid));
    }
    struct stat st;
    if (fstat(made.get(), &st) != 0) return fail(*path, "cannot be examined");
    if ((st.st_mode & 0777) != 0750 && fchmod(made.get(), 0750) != 0) {
      return fail(*path, "cannot be made mode 0750");
    }
  } else if (errno != EEXIST) {
    return fail(*path, "cannot be created");
  }
  *out = openat(ws.get(), "metadata", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (*out < 0) return fail(*path, "cannot be opened (a directory, not a link)");
  return absl::OkStatus();
}

void PutTime(json& j, const char* key, const google::protobuf::Timestamp& t) {
  if (t.seconds() == 0 && t.nanos() == 0) return;
  j[key] = absl::FormatTime("%Y-%m-%dT%H:%M:%E*SZ", planner::FromProto(t), absl::UTCTimeZone());
}

}  // namespace

namespace {

json UsageJson(const v1::ResourceUsage& u) {
  return {{"peakMemoryBytes", u.peak_memory_bytes()},
          {"cpuSeconds", u.cpu_seconds()},
          {"runSeconds", u.run_seconds()},
          {"samples", u.samples()},
          {"peakExact", u.peak_exact()}};
}

json AttemptJson(const v1::Attempt& a, int64_t log_cap_bytes) {
  json j = {
      {"number", a.number()},
      {"outcome", v1::JobState_Name(a.outcome())},
      {"failureCause", v1::FailureCause_Name(a.failure_cause())},
      {"requeueCause", v1::RequeueCause_Name(a.requeue_cause())},
      {"message", a.message()},
      {"node", a.node()},
      {"logKept", a.log_kept()},
      {"logBytes", {{"stdout", a.stdout_log_bytes()}, {"stderr", a.stderr_log_bytes()}}},
  };
  if (a.has_exit_code()) j["exitCode"] = a.exit_code();
  PutTime(j, "admittedAt", a.admitted_at());
  PutTime(j, "startedAt", a.started_at());
  PutTime(j, "finishedAt", a.finished_at());
  if (a.has_observed()) j["observed"] = UsageJson(a.observed());
  if (log_cap_bytes > 0) {
    j["logTruncated"] = {{"stdout", a.stdout_log_bytes() > log_cap_bytes},
                         {"stderr", a.stderr_log_bytes() > log_cap_bytes}};
  }
  return j;
}

}  // namespace

std::string RunMetadataJson(const v1::Job& job, absl::string_view image_id,
                            int64_t stdout_bytes, int64_t stderr_bytes,
                            int64_t log_cap_bytes) {
  const v1::JobSpec& s = job.spec();
  json j = {
      {"id", s.id()},
      {"workspace", s.workspace()},
      {"action", s.action()},
      {"image", s.image()},
      {"imageId", std::string(image_id)},
      {"argv", json::array()},
      {"resources",
       {{"cpuMillis", s.resources().cpu_millis()},
        {"memoryBytes", s.resources().memory_bytes()}}},
      {"state", v1::JobState_Name(job.state())},
      {"attempt", job.requeue_count() + 1},
      {"failureCause", v1::FailureCause_Name(job.failure_cause())},
      {"message", job.message()},
      {"logBytes", {{"stdout", stdout_bytes}, {"stderr", stderr_bytes}}},
  };
  for (const std::string& a : s.argv()) j["argv"].push_back(a);
  if (job.has_exit_code()) j["exitCode"] = job.exit_code();
  PutTime(j, "queuedAt", job.queued_at());
  PutTime(j, "admittedAt", job.admitted_at());
  PutTime(j, "startedAt", job.started_at());
  PutTime(j, "finishedAt", job.finished_at());
  if (job.has_observed()) {
    j["observed"] = UsageJson(job.observed());
  }
  j["attempts"] = json::array();
  for (const v1::Attempt& a : job.attempts()) j["attempts"].push_back(AttemptJson(a, log_cap_bytes));
  // Invalid UTF-8 (argv, messages) is replaced, never thrown on.
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

absl::Status WriteRunMetadata(const RunMetadataOptions& options, const v1::Job& job,
                              const LogArchive* archive, absl::string_view image_id) {
  const std::string& id = job.spec().id();
  int raw = -1;
  std::string dir_path;
  absl::Status opened = OpenMetadataDir(options, job.spec().workspace(), &raw, &dir_path);
  if (!opened.ok()) return opened;
  ScopedFd dir(raw);
  const std::string base = LogArchive::JobDirName(id);
  const int attempt = job.requeue_count() + 1;
  std::optional<AttemptLogInfo> info;
  if (archive != nullptr) info = archive->Info(id, attempt);
  const int64_t out_bytes = info.has_value() ? info->stdout_bytes : 0;
  const int64_t err_bytes = info.has_value() ? info->stderr_bytes : 0;

  auto copy = [&](int fd, const std::string& path, LogStream stream) -> absl::Status {
    bool eof = false;
    for (int64_t offset = 0; !eof;) {
      absl::StatusOr<std::string> chunk =
          archive->Read(id, attempt, stream, offset, kChunkBytes, &eof);
      if (!chunk.ok()) return chunk.status();
      absl::Status w = WriteAll(fd, *chunk, path);
      if (!w.ok()) return w;
      offset += static_cast<int64_t>(chunk->size());
      if (chunk->empty()) break;
    }
    return absl::OkStatus();
  };
  absl::Status log = WriteAtomically(
      dir.get(), dir_path, base + ".log", options.gid,
      [&](int fd, const std::string& path) -> absl::Status {
        if (!info.has_value()) return absl::OkStatus();
        absl::Status s = copy(fd, path, LogStream::kStdout);
        if (!s.ok() || err_bytes == 0) return s;
        s = WriteAll(fd, kStderrMarker, path);
        if (!s.ok()) return s;
        return copy(fd, path, LogStream::kStderr);
      });
  if (!log.ok()) return log;
  const std::string text = RunMetadataJson(job, image_id, out_bytes, err_bytes,
                                           archive != nullptr ? archive->options().cap_bytes : 0);
  return WriteAtomically(dir.get(), dir_path, base + ".json", options.gid,
                         [&](int fd, const std::string& path) {
                           return WriteAll(fd, text, path);
                         });
}

namespace {

std::string PendingPath(const RunMetadataOptions& options, absl::string_view job_id) {
  return absl::StrCat(options.pending_dir, "/", LogArchive::JobDirName(job_id));
}

}  // namespace

absl::Status MarkRunMetadataPending(const RunMetadataOptions& options,
                                    absl::string_view job_id, absl::string_view image_id) {
  if (options.pending_dir.empty()) return absl::OkStatus();
  if (mkdir(options.pending_dir.c_str(), 0750) != 0 && errno != EEXIST) {
    return absl::InternalError(
        absl::StrCat(options.pending_dir, ": cannot create: ", std::strerror(errno)));
  }
  const std::string path = PendingPath(options, job_id);
  ScopedFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640));
  if (fd.get() < 0) {
    return absl::InternalError(absl::StrCat(path, ": cannot create: ", std::strerror(errno)));
  }
  if (write(fd.get(), image_id.data(), image_id.size()) !=
          static_cast<ssize_t>(image_id.size()) ||
      fsync(fd.get()) != 0) {
    return absl::InternalError(absl::StrCat(path, ": write failed: ", std::strerror(errno)));
  }
  ScopedFd dir(open(options.pending_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0 || fsync(dir.get()) != 0) {
    return absl::InternalError(
        absl::StrCat(options.pending_dir, ": fsync failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

void ClearRunMetadataPending(const RunMetadataOptions& options, absl::string_view job_id) {
  if (options.pending_dir.empty()) return;
  unlink(PendingPath(options, job_id).c_str());
}

std::vector<std::pair<std::string, std::string>> PendingRunMetadata(
    const RunMetadataOptions& options) {
  std::vector<std::pair<std::string, std::string>> out;
  if (options.pending_dir.empty()) return out;
  DIR* d = opendir(options.pending_dir.c_str());
  if (d == nullptr) return out;
  while (struct dirent* e = readdir(d)) {
    std::string job_id;
    if (!LogArchive::ParseJobDirName(e->d_name, &job_id)) continue;
    std::string image_id;
    ScopedFd fd(open(PendingPath(options, job_id).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (fd.get() >= 0) {
      char buf[256];
      const ssize_t n = read(fd.get(), buf, sizeof(buf));
      if (n > 0) image_id.assign(buf, static_cast<size_t>(n));
    }
    out.emplace_back(std::move(job_id), std::move(image_id));
  }
  closedir(d);
  return out;
}

}  // namespace berth
