#include "tools/base/json_message.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"
#include "nlohmann/json.hpp"
#include "tools/base/json_time.h"

namespace berth {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using Json = nlohmann::json;

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
        if (!IsDecimalDigits(digits) || digits.size() > 20) return false;
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
    const FieldDescriptor* f = FieldByJsonKey(d, name);
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
      if (!ParseJsonTimestamp(text, &seconds, &nanos)) return false;
    } else if (type->full_name() == "google.protobuf.Duration") {
      if (!ParseJsonDuration(text, &seconds, &nanos)) return false;
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

}  // namespace

const FieldDescriptor* FieldByJsonKey(const Descriptor* d, const std::string& key) {
  if (const FieldDescriptor* f = d->FindFieldByCamelcaseName(key); f != nullptr && f->json_name() == key) {
    return f;
  }
  if (const FieldDescriptor* f = d->FindFieldByName(key)) return f;
  for (int i = 0; i < d->field_count(); ++i) {
    if (d->field(i)->json_name() == key) return d->field(i);
  }
  return nullptr;
}

bool FastJsonToMessage(absl::string_view json, Message* message) {
  MessageFiller filler(message);
  if (!Json::sax_parse(json.begin(), json.end(), &filler, Json::input_format_t::json,
                       /*strict=*/true)) {
    return false;
  }
  return filler.done();
}

}  // namespace berth
