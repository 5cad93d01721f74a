// Memory for documents of hundreds of MB (berth-plan's million-job
// workloads): the file's bytes without a copy, and an arena of huge pages for
// the messages parsed from them.
#ifndef BERTH_TOOLS_BASE_LARGE_DOCUMENT_H_
#define BERTH_TOOLS_BASE_LARGE_DOCUMENT_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/arena.h"

namespace berth {

// A file's bytes without a copy: a regular file is mapped read-only (the
// page cache itself), anything else (a pipe) is read into memory. Errors as
// ReadFileToString's: NOT_FOUND, PERMISSION_DENIED, INVALID_ARGUMENT.
class MappedFile {
 public:
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<MappedFile>> Open(const std::string& path);
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  absl::string_view contents() const { return contents_; }

 private:
  MappedFile() = default;
  void* map_ = nullptr;
  size_t map_size_ = 0;
  std::string owned_;
  absl::string_view contents_;
};

// An arena for a large parsed document: 2 MiB blocks, each asked of the
// kernel as a transparent huge page, so a million messages cost a few
// hundred page faults instead of a few hundred thousand, and freeing them is
// freeing the blocks. Messages parsed into an arena message by
// ParseLargeJsonMessage are allocated on its arena.
[[nodiscard]] std::unique_ptr<google::protobuf::Arena> NewLargeDocumentArena();

}  // namespace berth

#endif  // BERTH_TOOLS_BASE_LARGE_DOCUMENT_H_
