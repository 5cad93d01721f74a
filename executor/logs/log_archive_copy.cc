// LogArchive::CopyTo: the archive's complete attempts for a backup.
#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "executor/logs/log_archive.h"

namespace berth {

namespace fs = std::filesystem;

namespace {

absl::Status FileError(const std::error_code& ec, const fs::path& path) {
  const std::string what = absl::StrCat(path.string(), ": ", ec.message());
  return ec == std::errc::no_space_on_device ? absl::ResourceExhaustedError(what)
                                             : absl::InternalError(what);
}

bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// Links (or copies) the regular files of `from` into `to` (created).
// Returns the files linked; a `from` that vanished counts none.
absl::StatusOr<int64_t> LinkFiles(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  int64_t n = 0;
  fs::directory_iterator it(from, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) return 0;
    return FileError(ec, from);
  }
  fs::create_directories(to, ec);
  if (ec) return FileError(ec, to);
  for (fs::directory_iterator end; it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const fs::path dst = to / it->path().filename();
    fs::create_hard_link(it->path(), dst, ec);
    if (ec == std::errc::cross_device_link || ec == std::errc::operation_not_permitted) {
      ec.clear();
      fs::copy_file(it->path(), dst, ec);
    }
    if (ec == std::errc::no_such_file_or_directory) {  // swept meanwhile
      ec.clear();
      continue;
    }
    if (ec) return FileError(ec, dst);
    ++n;
  }
  if (ec) return FileError(ec, from);
  return n;
}

}  // namespace

absl::StatusOr<int64_t> LogArchive::CopyTo(const std::string& to_root) const {
  std::error_code ec;
  if (!fs::create_directory(to_root, ec) || ec) {
    if (!ec) ec = std::make_error_code(std::errc::file_exists);
    return FileError(ec, to_root);
  }
  int64_t files = 0;
  const fs::path root(options_.root);
  absl::StatusOr<int64_t> owed =
      LinkFiles(root / ".metadata-pending", fs::path(to_root) / ".metadata-pending");
  if (!owed.ok()) return owed.status();
  files += *owed;
  for (fs::directory_iterator job(root, ec), end; !ec && job != end; job.increment(ec)) {
    std::string job_id;
    if (!ParseJobDirName(job->path().filename().string(), &job_id)) continue;
    std::error_code attempts_ec;
    for (fs::directory_iterator a(job->path(), attempts_ec); !attempts_ec && a != end;
         a.increment(attempts_ec)) {
      // Only renamed-into-place attempts: ".<n>.tmp" is a capture in progress.
      if (!AllDigits(a->path().filename().string())) continue;
      absl::StatusOr<int64_t> n =
          LinkFiles(a->path(), fs::path(to_root) / job->path().filename() / a->path().filename());
      if (!n.ok()) return n.status();
      files += *n;
    }
    if (attempts_ec && attempts_ec != std::errc::no_such_file_or_directory) {
      return FileError(attempts_ec, job->path());
    }
  }
  if (ec) return FileError(ec, root);
  return files;
}

}  // namespace berth
