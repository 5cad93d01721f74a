// The descriptors of every file berthd serves (berth/v1/*.proto, gRPC health
// and reflection, their google/protobuf imports) as protoc produces them from
// the .proto files: with json_name on every field and the files' comments
// (source_code_info). A serialized google.protobuf.FileDescriptorSet,
// generated at build time (proto/BUILD.bazel :api_descriptor_set).
#ifndef BERTH_PROTO_API_DESCRIPTOR_SET_H_
#define BERTH_PROTO_API_DESCRIPTOR_SET_H_

#include <cstddef>

namespace berth {

extern const unsigned char kApiDescriptorSet[];
extern const size_t kApiDescriptorSetSize;

}  // namespace berth

#endif  // BERTH_PROTO_API_DESCRIPTOR_SET_H_
