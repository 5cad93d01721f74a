#include "executor/runtime/docker/engine_json.h"

#include "absl/strings/str_cat.h"

namespace berth {

using nlohmann::json;

std::optional<absl::Time> ParseDockerTime(absl::string_view text) {
  if (text.empty() || text.substr(0, 4) == "0001") return std::nullopt;
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, std::string(text), &t, &err)) {
    return std::nullopt;
  }
  return t;
}

namespace engine_json {

const json* Field(const json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

std::string Str(const json& j, const char* key) {
  const json* f = Field(j, key);
  return (f != nullptr && f->is_string()) ? f->get<std::string>() : "";
}

int64_t Int(const json& j, const char* key) {
  const json* f = Field(j, key);
  return (f != nullptr && f->is_number_integer()) ? f->get<int64_t>() : 0;
}

bool Bool(const json& j, const char* key) {
  const json* f = Field(j, key);
  return f != nullptr && f->is_boolean() && f->get<bool>();
}

const json& Obj(const json& j, const char* key) {
  static const json* const kEmpty = new json(json::object());
  const json* f = Field(j, key);
  return (f != nullptr && f->is_object()) ? *f : *kEmpty;
}

absl::StatusOr<json> Parse(absl::string_view body, absl::string_view api,
                           absl::string_view what) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return absl::InternalError(
        absl::StrCat(api, ": malformed JSON in ", what, " answer"));
  }
  return j;
}

}  // namespace engine_json
}  // namespace berth
