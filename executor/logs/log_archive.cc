#include "executor/logs/log_archive.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "executor/logs/capped_log_writer.h"
#include "planner/base/crash_point.h"
#include "planner/base/status_macros.h"

namespace berth {
namespace {

namespace fs = std::filesystem;

bool Plain(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '-' || c == '.';
}

absl::Status SyncDir(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat(dir, ": cannot open: ", std::strerror(errno)));
  }
  const int rc = fsync(fd);
  const int err = errno;
  close(fd);
  if (rc != 0) {
    return absl::InternalError(absl::StrCat(dir, ": fsync failed: ", std::strerror(err)));
  }
  return absl::OkStatus();
}

absl::Status MakeDir(const std::string& dir) {
  if (mkdir(dir.c_str(), 0750) != 0 && errno != EEXIST) {
    return absl::InternalError(absl::StrCat(dir, ": cannot create: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

int64_t FileSize(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

}  // namespace

const char* LogStreamFileName(LogStream stream) {
  return stream == LogStream::kStderr ? "stderr" : "stdout";
}

std::string LogArchive::JobDirName(absl::string_view job_id) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (size_t i = 0; i < job_id.size(); ++i) {
    const char c = job_id[i];
    if (Plain(c) && !(i == 0 && c == '.')) {
      out.push_back(c);
    } else {
      const auto u = static_cast<unsigned char>(c);
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    }
  }
  return out;
}

bool LogArchive::ParseJobDirName(absl::string_view name, std::string* job_id) {
  job_id->clear();
  if (name.empty() || name[0] == '.') return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] != '%') {
      job_id->push_back(name[i]);
      continue;
    }
    if (i + 2 >= name.size()) return false;
    int v = 0;
    for (int k = 1; k <= 2; ++k) {
      const char h = name[i + k];
      v <<= 4;
      if (h >= '0' && h <= '9') v |= h - '0';
      else if (h >= 'A' && h <= 'F') v |= h - 'A' + 10;
      else return false;
    }
    job_id->push_back(static_cast<char>(v));
    i += 2;
  }
  return true;
}

absl::StatusOr<std::unique_ptr<LogArchive>> LogArchive::Open(LogArchiveOptions options) {
  if (options.root.empty()) return absl::InvalidArgumentError("log archive: empty root");
  if (options.cap_bytes < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("log archive: cap_bytes must be at least 2, got ", options.cap_bytes));
  }
  std::error_code ec;
  fs::create_directories(options.root, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat(options.root, ": cannot create log archive: ", ec.message()));
  }
  return std::unique_ptr<LogArchive>(new LogArchive(std::move(options)));
}

std::string LogArchive::AttemptDir(absl::string_view job_id, int attempt) const {
  return absl::StrCat(options_.root, "/", JobDirName(job_id), "/", attempt);
}

bool LogArchive::Has(absl::string_view job_id, int attempt) const {
  struct stat st;
  return stat(AttemptDir(job_id, attempt).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

absl::StatusOr<std::unique_ptr<AttemptLogWriter>> LogArchive::Begin(
    absl::string_view job_id, int attempt) {
  if (attempt < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("job '", job_id, "': log attempt must be >= 1, got ", attempt));
  }
  if (Has(job_id, attempt)) {
    return absl::AlreadyExistsError(
        absl::StrCat("job '", job_id, "': attempt ", attempt, " log already captured"));
  }
  const std::string job_dir = absl::StrCat(options_.root, "/", JobDirName(job_id));
  const std::string tmp = absl::StrCat(job_dir, "/.", attempt, ".tmp");
  RETURN_IF_ERROR(MakeDir(job_dir));
  std::error_code ec;
  fs::remove_all(tmp, ec);  // a crashed or abandoned capture's leftover
  RETURN_IF_ERROR(MakeDir(tmp));
  absl::StatusOr<std::unique_ptr<CappedLogWriter>> out =
      CappedLogWriter::Create(tmp + "/stdout", options_.cap_bytes, options_.write_buffer_bytes);
  absl::StatusOr<std::unique_ptr<CappedLogWriter>> err =
      CappedLogWriter::Create(tmp + "/stderr", options_.cap_bytes, options_.write_buffer_bytes);
  if (!out.ok() || !err.ok()) {
    fs::remove_all(tmp, ec);
    return out.ok() ? err.status() : out.status();
  }
  return std::unique_ptr<AttemptLogWriter>(new AttemptLogWriter(
      job_dir, tmp, AttemptDir(job_id, attempt), *std::move(out), *std::move(err)));
}

AttemptLogWriter::AttemptLogWriter(std::string job_dir, std::string tmp,
                                   std::string final_dir,
                                   std::unique_ptr<CappedLogWriter> out,
                                   std::unique_ptr<CappedLogWriter> err)
    : job_dir_(std::move(job_dir)),
      tmp_(std::move(tmp)),
      final_dir_(std::move(final_dir)),
      out_(std::move(out)),
      err_(std::move(err)) {}

AttemptLogWriter::~AttemptLogWriter() {
  out_.reset();
  err_.reset();
  if (!committed_) {
    std::error_code ignored;
    fs::remove_all(tmp_, ignored);
  }
}

absl::Status AttemptLogWriter::Append(LogStream stream, absl::string_view data) {
  appended_ += static_cast<int64_t>(data.size());
  return (stream == LogStream::kStderr ? *err_ : *out_).Append(data);
}

absl::Status AttemptLogWriter::Commit() {
  struct stat st;
  if (stat(final_dir_.c_str(), &st) == 0) {
    return absl::AlreadyExistsError(absl::StrCat(final_dir_, ": already captured"));
  }
  RETURN_IF_ERROR(out_->Finish());
  RETURN_IF_ERROR(err_->Finish());
  RETURN_IF_ERROR(SyncDir(tmp_));
  CrashPoint("logs.before_rename");  // written, not yet visible
  if (std::rename(tmp_.c_str(), final_dir_.c_str()) != 0) {
    return absl::InternalError(absl::StrCat(tmp_, ": rename failed: ", std::strerror(errno)));
  }
  committed_ = true;
  return SyncDir(job_dir_);
}

absl::Status LogArchive::Capture(absl::string_view job_id, int attempt,
                                 const std::function<absl::Status(const LogSink&)>& read) {
  ASSIGN_OR_RETURN(std::unique_ptr<AttemptLogWriter> writer, Begin(job_id, attempt));
  absl::Status write_error;
  const LogSink sink = [&](LogStream stream, absl::string_view data) {
    write_error = writer->Append(stream, data);
    return write_error.ok();
  };
  absl::Status s = read(sink);
  if (!write_error.ok()) s = write_error;
  RETURN_IF_ERROR(s);
  return writer->Commit();  // on failure the writer removes its temp directory
}

std::optional<AttemptLogInfo> LogArchive::Info(absl::string_view job_id,
                                               int attempt) const {
  if (attempt < 1 || !Has(job_id, attempt)) return std::nullopt;
  const std::string dir = AttemptDir(job_id, attempt);
  AttemptLogInfo info;
  info.attempt = attempt;
  info.stdout_bytes = FileSize(dir + "/stdout");
  info.stderr_bytes = FileSize(dir + "/stderr");
  info.stdout_cut = CappedLogWriter::ReadCut(dir + "/stdout");
  info.stderr_cut = CappedLogWriter::ReadCut(dir + "/stderr");
  return info;
}

std::vector<AttemptLogInfo> LogArchive::Attempts(absl::string_view job_id) const {
  std::vector<AttemptLogInfo> out;
  const std::string job_dir = absl::StrCat(options_.root, "/", JobDirName(job_id));
  std::error_code ec;
  for (fs::directory_iterator it(job_dir, ec), end; !ec && it != end; it.increment(ec)) {
    int attempt = 0;
    if (!absl::SimpleAtoi(it->path().filename().string(), &attempt) || attempt < 1) continue;
    AttemptLogInfo info;
    info.attempt = attempt;
    info.stdout_bytes = FileSize(it->path().string() + "/stdout");
    info.stderr_bytes = FileSize(it->path().string() + "/stderr");
    info.stdout_cut = CappedLogWriter::ReadCut(it->path().string() + "/stdout");
    info.stderr_cut = CappedLogWriter::ReadCut(it->path().string() + "/stderr");
    out.push_back(info);
  }
  std::sort(out.begin(), out.end(),
            [](const AttemptLogInfo& a, const AttemptLogInfo& b) { return a.attempt < b.attempt; });
  return out;
}

absl::StatusOr<std::string> LogArchive::Read(absl::string_view job_id, int attempt,
                                             LogStream stream, int64_t offset,
                                             int64_t max_bytes, bool* eof) const {
  if (!Has(job_id, attempt)) {
    return absl::NotFoundError(
        absl::StrCat("job '", job_id, "': no log of attempt ", attempt));
  }
  const std::string path =
      absl::StrCat(AttemptDir(job_id, attempt), "/", LogStreamFileName(stream));
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  }
  struct stat st;
  fstat(fd, &st);
  const int64_t size = static_cast<int64_t>(st.st_size);
  if (offset < 0 || offset > size) {
    close(fd);
    return absl::OutOfRangeError(absl::StrCat("job '", job_id, "' attempt ", attempt, " ",
                                              LogStreamFileName(stream), ": offset ", offset,
                                              " is past the end (", size, " bytes)"));
  }
  const int64_t n = std::min(max_bytes, size - offset);
  std::string data(static_cast<size_t>(n), '\0');
  int64_t got = 0;
  while (got < n) {
    ssize_t r = pread(fd, data.data() + got, static_cast<size_t>(n - got), offset + got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += r;
  }
  close(fd);
  data.resize(static_cast<size_t>(got));
  if (eof != nullptr) *eof = offset + got >= size;
  return data;
}

absl::StatusOr<int> LogArchive::Sweep(
    const std::function<bool(const std::string& job_id)>& keep) {
  int removed = 0;
  std::error_code ec;
  std::vector<fs::path> drop;
  for (fs::directory_iterator it(options_.root, ec), end; !ec && it != end; it.increment(ec)) {
    std::string job_id;
    if (!ParseJobDirName(it->path().filename().string(), &job_id)) continue;
    if (!keep(job_id)) drop.push_back(it->path());
  }
  if (ec) {
    return absl::InternalError(
        absl::StrCat(options_.root, ": cannot list log archive: ", ec.message()));
  }
  for (const fs::path& p : drop) {
    std::error_code rm;
    fs::remove_all(p, rm);
    if (!rm) ++removed;
  }
  return removed;
}

}  // namespace berth
