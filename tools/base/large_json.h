// Reading large protobuf JSON files (berth-plan's million-job workloads)
// quickly, with protobuf's own parser as the reference.
//
// protobuf's JsonStringToMessage reads ~10-15 MB/s: a 192 MB workload of a
// million jobs took 15-20 s of berth-plan's run. ParseLargeJsonMessage finds
// the elements of one top-level repeated message field (e.g. "jobs"), parses
// each with nlohmann-json's SAX parser straight into a new message through
// reflection, on several threads, and parses the rest of the document with
// protobuf's parser.
//
// The contract is equality with the reference: the result (message or error)
// is what ParseJsonMessage (planner/base/proto_json.h) gives for the same
// input. The fast path handles the plain shapes of the proto3 JSON mapping —
// objects of known fields (JSON or proto names), integers as numbers or
// decimal strings, numbers for floating-point fields, booleans, strings,
// enum names or numbers, nested and repeated messages, string-keyed maps,
// Timestamp and Duration strings — and gives up on anything else (null,
// bytes, other well-known types, a repeated key, a second member of a oneof,
// malformed JSON, an unknown field), in which case the whole document goes
// to the reference parser, so errors read exactly as before.
//
// Thread-safe: no shared state between calls.
#ifndef BERTH_TOOLS_BASE_LARGE_JSON_H_
#define BERTH_TOOLS_BASE_LARGE_JSON_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/arena.h"
#include "google/protobuf/message.h"

namespace berth {

struct LargeJsonOptions {
  // The top-level repeated message field whose elements are parsed on
  // threads, by its JSON or proto name.
  std::string split_field = "jobs";
  // Threads for the elements; 0 = the machine's hardware concurrency.
  int threads = 0;
};

// How a call went (for tests and --timings).
struct LargeJsonStats {
  bool fast = false;      // the fast path produced the result
  int64_t elements = 0;   // elements of split_field parsed on threads
};

// Parses `json` into `message` (cleared first), exactly as
// ParseJsonMessage(json, source, message) would; `source` prefixes errors.
[[nodiscard]] absl::Status ParseLargeJsonMessage(absl::string_view json, absl::string_view source,
                                                 const LargeJsonOptions& options,
                                                 google::protobuf::Message* message,
                                                 LargeJsonStats* stats = nullptr);

// The fast path for one JSON object: fills `message` (cleared first) and
// returns true, or returns false (message unspecified) where it gives up.
// When it returns true, protobuf's parser accepts `json` and gives an equal
// message.
[[nodiscard]] bool FastJsonToMessage(absl::string_view json, google::protobuf::Message* message);

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

#endif  // BERTH_TOOLS_BASE_LARGE_JSON_H_
