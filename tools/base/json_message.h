// One JSON object into a protobuf message, fast: nlohmann-json's SAX events
// set the fields through reflection, with no intermediate document.
//
// It reads the plain shapes of the proto3 JSON mapping — objects of known
// fields (JSON or proto names), integers as numbers or decimal strings,
// numbers for floating-point fields, booleans, strings, enum names or
// numbers, nested and repeated messages, string-keyed maps, Timestamp and
// Duration strings — and gives up on anything else (null, bytes, other
// well-known types, a repeated key, a second member of a oneof, malformed
// JSON, an unknown field). Where it reads, protobuf's own parser reads the
// same; where it gives up, the caller asks protobuf's parser (which then
// names the problem). tools/base/large_json.h is its user.
#ifndef BERTH_TOOLS_BASE_JSON_MESSAGE_H_
#define BERTH_TOOLS_BASE_JSON_MESSAGE_H_

#include "absl/strings/string_view.h"
#include <string>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace berth {

// Fills `message` (cleared first) and returns true, or returns false
// (message unspecified) where it gives up. When it returns true, protobuf's
// parser accepts `json` and gives an equal message.
[[nodiscard]] bool FastJsonToMessage(absl::string_view json, google::protobuf::Message* message);

// The field of `type` that the JSON key `key` names (its JSON name or its
// proto name, as protobuf's parser accepts them); null if none.
const google::protobuf::FieldDescriptor* FieldByJsonKey(const google::protobuf::Descriptor* type,
                                                        const std::string& key);

}  // namespace berth

#endif  // BERTH_TOOLS_BASE_JSON_MESSAGE_H_
