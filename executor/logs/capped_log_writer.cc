#include "executor/logs/capped_log_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "planner/base/status_macros.h"

namespace berth {

absl::StatusOr<std::unique_ptr<CappedLogWriter>> CappedLogWriter::Create(
    const std::string& path, int64_t cap_bytes, int64_t buffer_bytes) {
  if (cap_bytes < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("log cap must be at least 2 bytes, got ", cap_bytes));
  }
  if (buffer_bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("log write buffer must not be negative, got ", buffer_bytes));
  }
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat(path, ": cannot create: ", std::strerror(errno)));
  }
  return std::unique_ptr<CappedLogWriter>(
      new CappedLogWriter(path, fd, cap_bytes, buffer_bytes));
}

CappedLogWriter::CappedLogWriter(std::string path, int fd, int64_t cap_bytes,
                                 int64_t buffer_bytes)
    : path_(std::move(path)),
      fd_(fd),
      head_cap_(cap_bytes / 2),
      tail_cap_(cap_bytes - cap_bytes / 2),
      buffer_bytes_(static_cast<size_t>(buffer_bytes)) {}

CappedLogWriter::~CappedLogWriter() {
  if (fd_ >= 0) close(fd_);
  if (ring_fd_ >= 0) close(ring_fd_);
}

absl::Status CappedLogWriter::PwriteRing(absl::string_view data, int64_t at) {
  while (!data.empty()) {
    ssize_t n = pwrite(ring_fd_, data.data(), data.size(), at);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      return absl::Status(err == ENOSPC || err == EDQUOT ? absl::StatusCode::kResourceExhausted
                                                         : absl::StatusCode::kInternal,
                          absl::StrCat(path_, ": tail write failed: ", std::strerror(err)));
    }
    data.remove_prefix(static_cast<size_t>(n));
    at += n;
  }
  return absl::OkStatus();
}

absl::Status CappedLogWriter::CopyRing(int64_t from, int64_t n) {
  std::vector<char> buf(static_cast<size_t>(std::min<int64_t>(n, int64_t{1} << 20)));
  while (n > 0) {
    const size_t want = static_cast<size_t>(std::min<int64_t>(n, static_cast<int64_t>(buf.size())));
    ssize_t r = pread(ring_fd_, buf.data(), want, from);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      return absl::InternalError(absl::StrCat(path_, ": tail read failed: ",
                                              r < 0 ? std::strerror(errno) : "short file"));
    }
    RETURN_IF_ERROR(WriteAll(absl::string_view(buf.data(), static_cast<size_t>(r))));
    from += r;
    n -= r;
  }
  return absl::OkStatus();
}

absl::Status CappedLogWriter::WriteAll(absl::string_view data) {
  while (!data.empty()) {
    ssize_t n = write(fd_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      return absl::Status(err == ENOSPC || err == EDQUOT ? absl::StatusCode::kResourceExhausted
                                                         : absl::StatusCode::kInternal,
                          absl::StrCat(path_, ": write failed: ", std::strerror(err)));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::Status CappedLogWriter::Append(absl::string_view data) {
  if (pending_.size() + data.size() < buffer_bytes_) {
    pending_.append(data.data(), data.size());
    return absl::OkStatus();
  }
  if (!pending_.empty()) {
    // Written in order, without copying a large `data` into the buffer.
    const absl::Status flushed = Write(pending_);
    pending_.clear();
    RETURN_IF_ERROR(flushed);
  }
  return Write(data);
}

absl::Status CappedLogWriter::Write(absl::string_view data) {
  total_ += static_cast<int64_t>(data.size());
  if (head_written_ < head_cap_) {
    const size_t n = static_cast<size_t>(
        std::min<int64_t>(head_cap_ - head_written_, static_cast<int64_t>(data.size())));
    RETURN_IF_ERROR(WriteAll(data.substr(0, n)));
    if (n > 0) last_head_newline_ = data[n - 1] == '\n';
    head_written_ += static_cast<int64_t>(n);
    data.remove_prefix(n);
  }
  if (data.empty()) return absl::OkStatus();
  if (ring_fd_ < 0) {
    const std::string ring = path_ + ".tail";
    ring_fd_ = open(ring.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (ring_fd_ < 0) {
      return absl::InternalError(
          absl::StrCat(ring, ": cannot create: ", std::strerror(errno)));
    }
    unlink(ring.c_str());  // anonymous from now on
  }
  // Only the last tail_cap_ bytes of `data` can survive.
  if (static_cast<int64_t>(data.size()) > tail_cap_) {
    data.remove_prefix(data.size() - static_cast<size_t>(tail_cap_));
  }
  while (!data.empty()) {
    const size_t n = std::min<size_t>(data.size(), static_cast<size_t>(tail_cap_ - ring_pos_));
    RETURN_IF_ERROR(PwriteRing(data.substr(0, n), ring_pos_));
    ring_pos_ = (ring_pos_ + static_cast<int64_t>(n)) % tail_cap_;
    ring_fill_ = std::min<int64_t>(tail_cap_, ring_fill_ + static_cast<int64_t>(n));
    data.remove_prefix(n);
  }
  return absl::OkStatus();
}

int64_t CappedLogWriter::cut_bytes() const {
  // As if the buffer were written: its first bytes fill the head, the rest
  // the ring.
  const int64_t pending = static_cast<int64_t>(pending_.size());
  const int64_t to_head = std::min(pending, head_cap_ - head_written_);
  const int64_t fill = std::min(tail_cap_, ring_fill_ + pending - to_head);
  return total_ + pending - head_written_ - to_head - fill;
}

std::string CappedLogWriter::MarkerLine(int64_t cut, int64_t total) {
  return absl::StrCat("[berth: ", cut, " bytes cut here; ", total, " bytes in all]\n");
}

StreamCut CappedLogWriter::ReadCut(const std::string& path) {
  StreamCut whole;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return whole;
  struct stat st;
  const int64_t size = fstat(fd, &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
  whole.total_bytes = whole.head_bytes = size;
  // A cut file is head (cap/2) + maybe "\n" + marker (under 100 bytes) +
  // tail (cap - cap/2), so its marker starts within 100 bytes before size/2.
  const int64_t from = std::max<int64_t>(0, size / 2 - 100);
  std::string window(200, '\0');
  const ssize_t n = pread(fd, window.data(), window.size(), from);
  close(fd);
  if (n <= 0) return whole;
  window.resize(static_cast<size_t>(n));
  for (size_t at = window.find("[berth: "); at != std::string::npos;
       at = window.find("[berth: ", at + 1)) {
    const size_t end = window.find('\n', at);
    if (end == std::string::npos) break;
    int64_t cut = 0, total = 0;
    const std::vector<absl::string_view> words =
        absl::StrSplit(absl::string_view(window).substr(at, end - at), ' ');
    // "[berth:" N "bytes" "cut" "here;" M "bytes" "in" "all]"
    if (words.size() != 9 || !absl::SimpleAtoi(words[1], &cut) ||
        !absl::SimpleAtoi(words[5], &total) || cut <= 0 || total <= cut) {
      continue;
    }
    const int64_t cap = total - cut;
    const int64_t head = cap / 2, tail = cap - cap / 2;
    const int64_t marker_at = from + static_cast<int64_t>(at);
    const int64_t line = static_cast<int64_t>(end - at) + 1;
    if ((marker_at == head || marker_at == head + 1) && marker_at + line + tail == size) {
      return StreamCut{total, cut, head, tail};
    }
  }
  return whole;
}

absl::Status CappedLogWriter::Finish() {
  if (!pending_.empty()) {
    const absl::Status flushed = Write(pending_);
    pending_.clear();
    RETURN_IF_ERROR(flushed);
  }
  const int64_t cut = cut_bytes();
  if (cut > 0) {
    RETURN_IF_ERROR(WriteAll(absl::StrCat(last_head_newline_ ? "" : "\n",
                                          MarkerLine(cut, total_))));
  }
  if (ring_fill_ > 0) {
    // Oldest byte: at ring_pos_ when full, else at 0.
    const int64_t start = ring_fill_ == tail_cap_ ? ring_pos_ : 0;
    const int64_t first = std::min<int64_t>(ring_fill_, tail_cap_ - start);
    RETURN_IF_ERROR(CopyRing(start, first));
    RETURN_IF_ERROR(CopyRing(0, ring_fill_ - first));
  }
  if (ring_fd_ >= 0) {
    close(ring_fd_);
    ring_fd_ = -1;
  }
  const int fd = fd_;
  fd_ = -1;
  if (fsync(fd) != 0) {
    const int err = errno;
    close(fd);
    return absl::InternalError(absl::StrCat(path_, ": fsync failed: ", std::strerror(err)));
  }
  if (close(fd) != 0) {
    return absl::InternalError(absl::StrCat(path_, ": close failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace berth
