// Reading large protobuf JSON files (berth-plan's million-job workloads)
// quickly, with protobuf's own parser as the reference.
//
// protobuf's JsonStringToMessage reads ~10-15 MB/s: a 192 MB workload of a
// million jobs took 15-20 s of berth-plan's run. ParseLargeJsonMessage finds
// the elements of one top-level repeated message field (e.g. "jobs"), parses
// each with FastJsonToMessage (tools/base/json_message.h) on several threads,
// and parses the rest of the document with protobuf's parser.
//
// The contract is equality with the reference: the result (message or error)
// is what ParseJsonMessage (planner/base/proto_json.h) gives for the same
// input. Where FastJsonToMessage gives up on any element, the whole document
// goes to the reference parser, so errors read exactly as before. Elements
// of a message on an arena (tools/base/large_document.h) are allocated there.
//
// Thread-safe: no shared state between calls.
#ifndef BERTH_TOOLS_BASE_LARGE_JSON_H_
#define BERTH_TOOLS_BASE_LARGE_JSON_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
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

}  // namespace berth

#endif  // BERTH_TOOLS_BASE_LARGE_JSON_H_
