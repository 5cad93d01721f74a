// Field-mask paths as clients spell them.
//
// A google.protobuf.FieldMask names fields by their proto names
// ("memory_bytes"), but proto3 JSON clients — grpcurl, berthctl --json, the
// docs — write the JSON names ("memoryBytes"): the JSON mapping of a
// FieldMask converts its paths to lowerCamelCase, and grpcurl 1.8.7 passes
// the object form {"paths": [...]} through unchanged. Both spellings name the
// same field, so both are accepted.
//
// Only top-level fields are supported (no "a.b" paths).
//
// Thread-safe (pure functions).
#ifndef BERTH_SERVER_CORE_FIELD_MASK_PATHS_H_
#define BERTH_SERVER_CORE_FIELD_MASK_PATHS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/field_mask.pb.h"

namespace berth {

// The proto field names of `mask`'s paths in `message`, in the mask's order,
// without repeats. Each path may be the field's proto name or its JSON name.
// INVALID_ARGUMENT "update_mask: unknown field 'x' (...)" naming the fields
// that exist (proto names) for a path that names no field of `message`.
[[nodiscard]] absl::StatusOr<std::vector<std::string>> NormaliseFieldMaskPaths(
    const google::protobuf::FieldMask& mask,
    const google::protobuf::Descriptor& message,
    const std::string& mask_field_name = "update_mask");

}  // namespace berth

#endif  // BERTH_SERVER_CORE_FIELD_MASK_PATHS_H_
