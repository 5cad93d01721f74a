#include "tools/base/large_document.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "planner/base/proto_json.h"

namespace berth {

absl::StatusOr<std::unique_ptr<MappedFile>> MappedFile::Open(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    const int err = errno;
    if (fd >= 0) close(fd);
    const std::string why = absl::StrCat(path, ": ", std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(why);
    if (err == EACCES) return absl::PermissionDeniedError(why);
    return absl::InvalidArgumentError(why);
  }
  std::unique_ptr<MappedFile> file(new MappedFile());
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    void* map = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ,
                     MAP_PRIVATE | MAP_POPULATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", std::strerror(errno)));
    }
    file->map_ = map;
    file->map_size_ = static_cast<size_t>(st.st_size);
    file->contents_ = absl::string_view(static_cast<const char*>(map), file->map_size_);
    return file;
  }
  close(fd);
  absl::StatusOr<std::string> bytes = ReadFileToString(path);
  if (!bytes.ok()) return bytes.status();
  file->owned_ = *std::move(bytes);
  file->contents_ = file->owned_;
  return file;
}

MappedFile::~MappedFile() {
  if (map_ != nullptr) munmap(map_, map_size_);
}

namespace {

constexpr size_t kHugePage = size_t{2} << 20;

void* HugeBlockAlloc(size_t size) {
  const size_t rounded = (size + kHugePage - 1) / kHugePage * kHugePage;
  void* block = std::aligned_alloc(kHugePage, rounded);
  if (block != nullptr) madvise(block, rounded, MADV_HUGEPAGE);  // advice only
  return block;
}

void HugeBlockFree(void* block, size_t /*size*/) { std::free(block); }

}  // namespace

std::unique_ptr<google::protobuf::Arena> NewLargeDocumentArena() {
  google::protobuf::ArenaOptions options;
  options.start_block_size = kHugePage;
  options.max_block_size = kHugePage;
  options.block_alloc = HugeBlockAlloc;
  options.block_dealloc = HugeBlockFree;
  return std::make_unique<google::protobuf::Arena>(options);
}

}  // namespace berth
