// ScopedFd: closes a file descriptor when it goes out of scope.
//
// Thread-compatible.
#ifndef BERTH_PLANNER_BASE_SCOPED_FD_H_
#define BERTH_PLANNER_BASE_SCOPED_FD_H_

#include <unistd.h>

namespace berth {

class ScopedFd {
 public:
  // Takes `fd` (negative: none, e.g. a failed open()).
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() {
    if (fd_ >= 0) close(fd_);
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  int get() const { return fd_; }
  // Gives the descriptor up (the caller closes it); none is kept.
  [[nodiscard]] int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

}  // namespace berth

#endif  // BERTH_PLANNER_BASE_SCOPED_FD_H_
