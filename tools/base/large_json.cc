#include "tools/base/large_json.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"
#include "planner/base/proto_json.h"
#include "tools/base/json_message.h"

namespace berth {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Where the top-level `field`'s array and its elements are in `json`.
struct Split {
  size_t open = 0, close = 0;  // the '[' and the ']'
  std::vector<std::pair<size_t, size_t>> elements;  // [begin, end) of each
};

// One pass that tracks nesting and skips strings (the parsers check the
// rest). False if the document is not an object, the field is missing,
// given twice, under an escaped key or not an array of objects with single
// commas between them.
bool SplitTopLevelArray(absl::string_view json, const Descriptor* type,
                        const FieldDescriptor* field, Split* out) {
  const size_t n = json.size();
  int depth = 0;
  bool found = false, expect_value = false, in_array = false;
  // In the array, at its own depth: what may come next.
  enum { kElementOrClose, kElement, kCommaOrClose } next = kElementOrClose;
  size_t element_begin = 0;
  for (size_t i = 0; i < n; ++i) {
    const char c = json[i];
    if (absl::ascii_isspace(static_cast<unsigned char>(c))) continue;
    const bool at_array = in_array && depth == 2;
    if (at_array) {
      if (c == ',' && next == kCommaOrClose) {
        next = kElement;
        continue;
      }
      if (c == ']' && next != kElement) {
        out->close = i;
        in_array = false;
        depth = 1;
        continue;
      }
      if (c != '{' || next == kCommaOrClose) return false;
      element_begin = i;
      ++depth;
      continue;
    }
    if (c == '"') {
      const size_t start = ++i;
      bool escaped = false;
      while (i < n && json[i] != '"') {
        escaped |= json[i] == '\\';
        i += json[i] == '\\' ? 2 : 1;
      }
      if (i >= n) return false;
      if (depth != 1) continue;
      size_t j = i + 1;
      while (j < n && absl::ascii_isspace(static_cast<unsigned char>(json[j]))) ++j;
      if (j >= n || json[j] != ':') continue;
      if (escaped) return false;
      const std::string key(json.substr(start, i - start));
      const FieldDescriptor* f = FieldByJsonKey(type, key);
      if (f == field) {
        if (found) return false;
        found = expect_value = true;
      }
      continue;
    }
    if (c == ':') continue;
    if (expect_value && depth == 1) {
      if (c != '[') return false;
      expect_value = false;
      in_array = true;
      next = kElementOrClose;
      out->open = i;
      depth = 2;
      continue;
    }
    if (c == '{' || c == '[') {
      if (depth == 0 && c != '{') return false;
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth < 0) return false;
      if (in_array && depth == 2) {  // an element's closing brace
        if (c != '}') return false;
        out->elements.emplace_back(element_begin, i + 1);
        next = kCommaOrClose;
      }
    }
  }
  return found && !in_array && out->close > out->open;
}

}  // namespace

absl::Status ParseLargeJsonMessage(absl::string_view json, absl::string_view source,
                                   const LargeJsonOptions& options, Message* message,
                                   LargeJsonStats* stats) {
  LargeJsonStats local;
  if (stats == nullptr) stats = &local;
  *stats = LargeJsonStats();
  const Descriptor* type = message->GetDescriptor();
  const FieldDescriptor* field = FieldByJsonKey(type, options.split_field);
  Split split;
  if (field == nullptr || !field->is_repeated() || field->is_map() ||
      field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE ||
      !SplitTopLevelArray(json, type, field, &split)) {
    return ParseJsonMessage(json, source, message);
  }
  // The document without the elements, by the reference parser.
  const std::string rest = absl::StrCat(json.substr(0, split.open + 1), json.substr(split.close));
  if (!ParseJsonMessage(rest, source, message).ok()) {
    return ParseJsonMessage(json, source, message);
  }
  const size_t count = split.elements.size();
  const Message* prototype =
      message->GetReflection()->GetMessageFactory()->GetPrototype(field->message_type());
  // On the document's arena, if it has one (then owned by it).
  google::protobuf::Arena* arena = message->GetArena();
  std::vector<Message*> parsed(count, nullptr);
  int threads = options.threads > 0 ? options.threads
                                    : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(1, std::min<int>(threads, static_cast<int>(count / 1024) + 1));
  std::atomic<bool> failed{false};
  auto work = [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end && !failed.load(std::memory_order_relaxed); ++i) {
      Message* m = prototype->New(arena);
      parsed[i] = m;
      const auto [b, e] = split.elements[i];
      if (!FastJsonToMessage(json.substr(b, e - b), m)) {
        failed.store(true);
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) {
    pool.emplace_back(work, count * t / threads, count * (t + 1) / threads);
  }
  work(0, count / threads);
  for (std::thread& t : pool) t.join();
  if (failed.load()) {
    if (arena == nullptr) {
      for (Message* m : parsed) delete m;
    }
    return ParseJsonMessage(json, source, message);
  }
  const Reflection* r = message->GetReflection();
  for (Message* m : parsed) r->AddAllocatedMessage(message, field, m);
  stats->fast = true;
  stats->elements = static_cast<int64_t>(count);
  return absl::OkStatus();
}

}  // namespace berth
