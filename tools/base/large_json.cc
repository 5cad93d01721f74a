#include "tools/base/large_json.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"
#include "nlohmann/json.hpp"
#include "planner/base/proto_json.h"

namespace berth {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using Json = nlohmann::json;

// Timestamp and Duration limits of the proto3 JSON mapping.
constexpr int64_t kMinTimestampSeconds = -62135596800;  // 0001-01-01T00:00:00Z
constexpr int64_t kMaxTimestampSeconds = 253402300799;  // 9999-12-31T23:59:59Z
constexpr int64_t kMaxDurationSeconds = 315576000000;

bool AllDigits(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isdigit(c); });
}

// "-?D+(.D{1,9})?s", within the mapping's range.
bool ParseDuration(absl::string_view s, int64_t* seconds, int32_t* nanos) {
  if (s.size() < 2 || s.back() != 's') return false;
  s.remove_suffix(1);
  const bool negative = !s.empty() && s.front() == '-';
  if (negative) s.remove_prefix(1);
  absl::string_view whole = s, fraction;
  if (const size_t dot = s.find('.'); dot != absl::string_view::npos) {
    whole = s.substr(0, dot);
    fraction = s.substr(dot + 1);
    if (fraction.empty() || fraction.size() > 9 || !AllDigits(fraction)) return false;
  }
  uint64_t secs = 0;
  if (!AllDigits(whole) || whole.size() > 12 || !absl::SimpleAtoi(whole, &secs) ||
      secs > static_cast<uint64_t>(kMaxDurationSeconds)) {
    return false;
  }
  int32_t n = 0;
  if (!fraction.empty()) {
    if (!absl::SimpleAtoi(fraction, &n)) return false;
    for (size_t i = fraction.size(); i < 9; ++i) n *= 10;
  }
  *seconds = negative ? -static_cast<int64_t>(secs) : static_cast<int64_t>(secs);
  *nanos = negative ? -n : n;
  return true;
}

// "YYYY-MM-DDTHH:MM:SS(.D{1,9})?Z" naming a real instant within range (an
// offset other than Z is left to the reference parser).
bool ParseTimestamp(absl::string_view s, int64_t* seconds, int32_t* nanos) {
  if (s.size() < 20 || s.back() != 'Z' || s[4] != '-' || s[7] != '-' || s[10] != 'T' ||
      s[13] != ':' || s[16] != ':') {
    return false;
  }
  int64_t y = 0;
  int m = 0, d = 0, hh = 0, mm = 0, ss = 0;
  auto number = [&s](size_t at, size_t len, auto* out) {
    const absl::string_view part = s.substr(at, len);
    return AllDigits(part) && absl::SimpleAtoi(part, out);
  };
  if (!number(0, 4, &y) || !number(5, 2, &m) || !number(8, 2, &d) || !number(11, 2, &hh) ||
      !number(14, 2, &mm) || !number(17, 2, &ss)) {
    return false;
  }
  int32_t n = 0;
  const absl::string_view rest = s.substr(19, s.size() - 20);
  if (!rest.empty()) {
    if (rest.front() != '.' || rest.size() < 2 || rest.size() > 10 || !AllDigits(rest.substr(1)) ||
        !absl::SimpleAtoi(rest.substr(1), &n)) {
      return false;
    }
    for (size_t i = rest.size() - 1; i < 9; ++i) n *= 10;
  }
  const absl::CivilSecond civil(y, m, d, hh, mm, ss);
  if (civil.year() != y || civil.month() != m || civil.day() != d || civil.hour() != hh ||
      civil.minute() != mm || civil.second() != ss) {
    return false;  // 2026-02-30, 25:00:00, a leap second: not normalised here
  }
  *seconds = absl::ToUnixSeconds(absl::FromCivil(civil, absl::UTCTimeZone()));
  *nanos = n;
  return *seconds >= kMinTimestampSeconds && *seconds <= kMaxTimestampSeconds;
}

// The field named `key` by its JSON name or its proto name, as the reference
// accepts them; null if none.
const FieldDescriptor* FieldNamed(const Descriptor* d, const std::string& key) {
  if (const FieldDescriptor* f = d->FindFieldByCamelcaseName(key); f != nullptr && f->json_name() == key) {
    return f;
  }
  if (const FieldDescriptor* f = d->FindFieldByName(key)) return f;
  for (int i = 0; i < d->field_count(); ++i) {
    if (d->field(i)->json_name() == key) return d->field(i);
  }
  return nullptr;
}

// Fills one message from nlohmann's SAX events. Every method returns false
// where the fast path gives up, which stops the parse.
class MessageFiller {
 public:
  explicit MessageFiller(Message* root) : root_(root) {}

  bool null() { return false; }
  bool boolean(bool v) {
    const FieldDescriptor* f = ScalarTarget();
    if (f == nullptr || f->cpp_type() != FieldDescriptor::CPPTYPE_BOOL) return false;
    if (f->is_repeated()) {
      target_->GetReflection()->AddBool(target_, f, v);
    } else {
      target_->GetReflection()->SetBool(target_, f, v);
    }
    return Consumed();
  }
  bool number_integer(int64_t v) {
    return v < 0 ? Integer(true, 0 - static_cast<uint64_t>(v), v)
                 : Integer(false, static_cast<uint64_t>(v), v);
  }
  bool number_unsigned(uint64_t v) {
    return Integer(false, v, v > static_cast<uint64_t>(INT64_MAX) ? 0 : static_cast<int64_t>(v));
  }
  bool number_float(double v, const std::string& /*text*/) {
    const FieldDescriptor* f = ScalarTarget();
    if (f == nullptr) return false;
    return SetFloating(f, v);
  }
  bool string(std::string& v) {
    const FieldDescriptor* f = ScalarTarget();
    if (f == nullptr) return false;
    const Reflection* r = target_->GetReflection();
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_STRING:
        if (f->type() == FieldDescriptor::TYPE_BYTES) return false;  // base64: not here
        if (f->is_repeated()) {
          r->AddString(target_, f, std::move(v));
        } else {
          r->SetString(target_, f, std::move(v));
        }
        return Consumed();
      case FieldDescriptor::CPPTYPE_ENUM: {
        const auto* value = f->enum_type()->FindValueByName(v);
        if (value == nullptr) return false;
        if (f->is_repeated()) {
          r->AddEnum(target_, f, value);
        } else {
          r->SetEnum(target_, f, value);
        }
        return Consumed();
      }
      case FieldDescriptor::CPPTYPE_MESSAGE:
        return TimeString(f, v);
      case FieldDescriptor::CPPTYPE_INT32:
      case FieldDescriptor::CPPTYPE_INT64:
      case FieldDescriptor::CPPTYPE_UINT32:
      case FieldDescriptor::CPPTYPE_UINT64: {
        // Integers may be quoted: "-?D+" only.
        const bool negative = !v.empty() && v.front() == '-';
        const absl::string_view digits = absl::string_view(v).substr(negative ? 1 : 0);
        if (!AllDigits(digits) || digits.size() > 20) return false;
        if (negative) {
          int64_t i = 0;
          if (!absl::SimpleAtoi(v, &i)) return false;
          return number_integer(i);
        }
        uint64_t u = 0;
        if (!absl::SimpleAtoi(digits, &u)) return false;
        return number_unsigned(u);
      }
      default:
        return false;
    }
  }
  bool binary(Json::binary_t& /*v*/) { return false; }

  bool start_object(std::size_t /*elements*/) {
    if (stack_.empty()) {
      if (done_) return false;
      root_->Clear();
      stack_.push_back(Frame(Frame::kMessage, root_, nullptr));
      return true;
    }
    Frame& top = stack_.back();
    Message* sub = nullptr;
    if (top.kind == Frame::kMessage) {
      const FieldDescriptor* f = top.pending;
      if (f == nullptr || f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) return false;
      if (f->is_map()) {
        stack_.push_back(Frame(Frame::kMap, top.message, f));
        return true;
      }
      if (f->is_repeated() || IsOtherWellKnown(f->message_type())) return false;
      sub = top.message->GetReflection()->MutableMessage(top.message, f);
    } else if (top.kind == Frame::kArray) {
      const FieldDescriptor* f = top.field;
      if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE ||
          IsOtherWellKnown(f->message_type())) {
        return false;
      }
      sub = top.message->GetReflection()->AddMessage(top.message, f);
    } else {
      Message* entry = MapEntry(top);
      if (entry == nullptr) return false;
      const FieldDescriptor* value = entry->GetDescriptor()->map_value();
      if (value->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE ||
          IsOtherWellKnown(value->message_type())) {
        return false;
      }
      sub = entry->GetReflection()->MutableMessage(entry, value);
    }
    stack_.push_back(Frame(Frame::kMessage, sub, nullptr));
    return true;
  }

  bool key(std::string& name) {
    Frame& top = stack_.back();
    if (top.kind == Frame::kMap) {
      if (!top.keys.insert(name).second) return false;  // a repeated map key
      top.map_key = std::move(name);
      top.has_key = true;
      return true;
    }
    if (top.kind != Frame::kMessage) return false;
    const Descriptor* d = top.message->GetDescriptor();
    const FieldDescriptor* f = FieldNamed(d, name);
    if (f == nullptr) return false;  // unknown: the reference names it
    if (std::find(top.seen.begin(), top.seen.end(), f->number()) != top.seen.end()) return false;
    top.seen.push_back(f->number());
    if (const auto* oneof = f->containing_oneof();
        oneof != nullptr && top.message->GetReflection()->HasOneof(*top.message, oneof)) {
      return false;
    }
    top.pending = f;
    return true;
  }

  bool end_object() {
    stack_.pop_back();
    if (stack_.empty()) {
      done_ = true;
      return true;
    }
    return Consumed();
  }
  bool start_array(std::size_t /*elements*/) {
    if (stack_.empty() || stack_.back().kind != Frame::kMessage) return false;
    Frame& top = stack_.back();
    const FieldDescriptor* f = top.pending;
    if (f == nullptr || !f->is_repeated() || f->is_map()) return false;
    stack_.push_back(Frame(Frame::kArray, top.message, f));
    return true;
  }
  bool end_array() {
    stack_.pop_back();
    return Consumed();
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& /*ex*/) {
    return false;
  }

  bool done() const { return done_ && stack_.empty(); }

 private:
  struct Frame {
    enum Kind { kMessage, kArray, kMap };
    Frame(Kind k, Message* m, const FieldDescriptor* f) : kind(k), message(m), field(f) {}
    Kind kind;
    Message* message;                         // the object filled (kMessage) or the owner
    const FieldDescriptor* field;             // kArray/kMap: the repeated or map field
    const FieldDescriptor* pending = nullptr;  // kMessage: the field whose value comes next
    std::vector<int> seen;                    // kMessage: field numbers given
    absl::flat_hash_set<std::string> keys;    // kMap: keys given
    std::string map_key;                      // kMap: the key whose value comes next
    bool has_key = false;
  };

  static bool IsOtherWellKnown(const Descriptor* d) {
    return d->file()->package() == "google.protobuf" && !IsTime(d);
  }
  static bool IsTime(const Descriptor* d) {
    return d->full_name() == "google.protobuf.Timestamp" ||
           d->full_name() == "google.protobuf.Duration";
  }

  // The field a scalar value goes to, with target_ set to its message; null
  // where a scalar is not expected.
  const FieldDescriptor* ScalarTarget() {
    if (stack_.empty()) return nullptr;
    Frame& top = stack_.back();
    if (top.kind == Frame::kMessage) {
      if (top.pending == nullptr || top.pending->is_repeated()) return nullptr;
      target_ = top.message;
      return top.pending;
    }
    if (top.kind == Frame::kArray) {
      target_ = top.message;
      return top.field;
    }
    Message* entry = MapEntry(top);
    if (entry == nullptr) return nullptr;
    target_ = entry;
    return entry->GetDescriptor()->map_value();
  }

  // A new entry of the map frame's field with its pending key (string keys only).
  Message* MapEntry(Frame& map) {
    if (!map.has_key) return nullptr;
    const FieldDescriptor* key = map.field->message_type()->map_key();
    if (key->cpp_type() != FieldDescriptor::CPPTYPE_STRING) return nullptr;
    Message* entry = map.message->GetReflection()->AddMessage(map.message, map.field);
    entry->GetReflection()->SetString(entry, key, std::move(map.map_key));
    map.has_key = false;
    return entry;
  }

  // After a value: the enclosing object's field is done.
  bool Consumed() {
    if (!stack_.empty() && stack_.back().kind == Frame::kMessage) stack_.back().pending = nullptr;
    return true;
  }

  bool Integer(bool negative, uint64_t magnitude_bits, int64_t as_signed) {
    const FieldDescriptor* f = ScalarTarget();
    if (f == nullptr) return false;
    const Reflection* r = target_->GetReflection();
    const bool rep = f->is_repeated();
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32: {
        if (!negative && magnitude_bits > static_cast<uint64_t>(INT32_MAX)) return false;
        if (negative && as_signed < INT32_MIN) return false;
        const int32_t v = static_cast<int32_t>(as_signed);
        rep ? r->AddInt32(target_, f, v) : r->SetInt32(target_, f, v);
        return Consumed();
      }
      case FieldDescriptor::CPPTYPE_INT64:
        if (!negative && magnitude_bits > static_cast<uint64_t>(INT64_MAX)) return false;
        rep ? r->AddInt64(target_, f, as_signed) : r->SetInt64(target_, f, as_signed);
        return Consumed();
      case FieldDescriptor::CPPTYPE_UINT32: {
        if (negative || magnitude_bits > UINT32_MAX) return false;
        const uint32_t v = static_cast<uint32_t>(magnitude_bits);
        rep ? r->AddUInt32(target_, f, v) : r->SetUInt32(target_, f, v);
        return Consumed();
      }
      case FieldDescriptor::CPPTYPE_UINT64:
        if (negative) return false;
        rep ? r->AddUInt64(target_, f, magnitude_bits) : r->SetUInt64(target_, f, magnitude_bits);
        return Consumed();
      case FieldDescriptor::CPPTYPE_DOUBLE:
      case FieldDescriptor::CPPTYPE_FLOAT:
        // Exactly representable integers only (2^53); the rest to the reference.
        if (magnitude_bits > (uint64_t{1} << 53)) return false;
        return SetFloating(f, negative ? static_cast<double>(as_signed)
                                       : static_cast<double>(magnitude_bits));
      case FieldDescriptor::CPPTYPE_ENUM: {
        if (negative ? as_signed < INT32_MIN : magnitude_bits > INT32_MAX) return false;
        const auto* value = f->enum_type()->FindValueByNumber(static_cast<int>(as_signed));
        if (value == nullptr) return false;
        rep ? r->AddEnum(target_, f, value) : r->SetEnum(target_, f, value);
        return Consumed();
      }
      default:
        return false;
    }
  }

  bool SetFloating(const FieldDescriptor* f, double v) {
    const Reflection* r = target_->GetReflection();
    const bool rep = f->is_repeated();
    if (!std::isfinite(v)) return false;
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
      rep ? r->AddDouble(target_, f, v) : r->SetDouble(target_, f, v);
      return Consumed();
    }
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_FLOAT || std::fabs(v) > FLT_MAX) return false;
    const float fv = static_cast<float>(v);
    rep ? r->AddFloat(target_, f, fv) : r->SetFloat(target_, f, fv);
    return Consumed();
  }

  // A Timestamp or Duration field given as its string form.
  bool TimeString(const FieldDescriptor* f, const std::string& text) {
    const Descriptor* type = f->message_type();
    int64_t seconds = 0;
    int32_t nanos = 0;
    if (type->full_name() == "google.protobuf.Timestamp") {
      if (!ParseTimestamp(text, &seconds, &nanos)) return false;
    } else if (type->full_name() == "google.protobuf.Duration") {
      if (!ParseDuration(text, &seconds, &nanos)) return false;
    } else {
      return false;
    }
    const Reflection* r = target_->GetReflection();
    Message* m = f->is_repeated() ? r->AddMessage(target_, f) : r->MutableMessage(target_, f);
    const Reflection* mr = m->GetReflection();
    mr->SetInt64(m, type->FindFieldByNumber(1), seconds);
    mr->SetInt32(m, type->FindFieldByNumber(2), nanos);
    return Consumed();
  }

  Message* root_;
  Message* target_ = nullptr;
  std::vector<Frame> stack_;
  bool done_ = false;
};

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
      const FieldDescriptor* f = FieldNamed(type, key);
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

bool FastJsonToMessage(absl::string_view json, Message* message) {
  MessageFiller filler(message);
  if (!Json::sax_parse(json.begin(), json.end(), &filler, Json::input_format_t::json,
                       /*strict=*/true)) {
    return false;
  }
  return filler.done();
}

absl::Status ParseLargeJsonMessage(absl::string_view json, absl::string_view source,
                                   const LargeJsonOptions& options, Message* message,
                                   LargeJsonStats* stats) {
  LargeJsonStats local;
  if (stats == nullptr) stats = &local;
  *stats = LargeJsonStats();
  const Descriptor* type = message->GetDescriptor();
  const FieldDescriptor* field = FieldNamed(type, options.split_field);
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
