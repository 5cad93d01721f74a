#include "server/core/field_mask_paths.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace berth {

absl::StatusOr<std::vector<std::string>> NormaliseFieldMaskPaths(
    const google::protobuf::FieldMask& mask, const google::protobuf::Descriptor& message,
    const std::string& mask_field_name) {
  std::vector<std::string> out;
  for (const std::string& path : mask.paths()) {
    const google::protobuf::FieldDescriptor* field = message.FindFieldByName(path);
    for (int i = 0; field == nullptr && i < message.field_count(); ++i) {
      if (message.field(i)->json_name() == path) field = message.field(i);
    }
    if (field == nullptr) {
      std::vector<std::string> names;
      for (int i = 0; i < message.field_count(); ++i) names.push_back(message.field(i)->name());
      return absl::InvalidArgumentError(absl::StrCat(
          mask_field_name, ": unknown field '", path, "' of ", message.full_name(), " (",
          absl::StrJoin(names, ", "), "; or their lowerCamelCase JSON names)"));
    }
    if (std::find(out.begin(), out.end(), field->name()) == out.end()) {
      out.push_back(field->name());
    }
  }
  return out;
}

}  // namespace berth
