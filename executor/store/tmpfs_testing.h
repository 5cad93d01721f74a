#ifndef BERTH_EXECUTOR_STORE_TMPFS_TESTING_H_
#define BERTH_EXECUTOR_STORE_TMPFS_TESTING_H_

// A real, small file system for tests of what happens when the disk fills
// up: a tmpfs of `mib` MiB mounted at `dir` (created), unmounted at the end.
// Mounting needs root; when it fails, error() says why and the test should
// fail on it (never skip).

#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"

namespace berth {
namespace testing {

class Tmpfs {
 public:
  Tmpfs(std::string dir, int mib) : dir_(std::move(dir)) {
    std::filesystem::create_directories(dir_);
    const std::string opts = absl::StrCat("size=", mib, "m");
    if (::mount("tmpfs", dir_.c_str(), "tmpfs", 0, opts.c_str()) != 0) {
      error_ = absl::StrCat("mount tmpfs on ", dir_, ": ", std::strerror(errno),
                            " (the test needs root)");
    }
  }
  ~Tmpfs() {
    if (error_.empty()) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  Tmpfs(const Tmpfs&) = delete;
  Tmpfs& operator=(const Tmpfs&) = delete;

  const std::string& dir() const { return dir_; }
  const std::string& error() const { return error_; }

  // Writes one file until the file system is full.
  void Fill() {
    std::ofstream f(dir_ + "/fill", std::ios::binary);
    const std::string block(1 << 16, 'x');
    while (f.write(block.data(), static_cast<std::streamsize>(block.size()))) {
    }
  }
  // Removes that file: the room comes back.
  void Free() { std::filesystem::remove(dir_ + "/fill"); }

 private:
  std::string dir_;
  std::string error_;
};

}  // namespace testing
}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_TMPFS_TESTING_H_
