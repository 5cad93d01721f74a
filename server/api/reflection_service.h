// ReflectionService: grpc.reflection.v1alpha.ServerReflection (the protocol
// grpcurl speaks), serving the descriptors protoc produces from the .proto
// files (proto/api_descriptor_set.h) instead of those compiled into the C++
// code. gRPC's own reflection plugin serves the compiled ones, which carry no
// JSON names (grpcurl then prints "memory_bytes" through reflection and
// "memoryBytes" with -proto) and no comments (`grpcurl describe` shows none).
// Here both come along, so every way of asking sees the same schema.
//
// Answers, per request of the stream:
//   list_services               the names given at construction;
//   file_by_filename            that file and its transitive imports;
//   file_containing_symbol      the file defining a service, method, message,
//                               field, enum or enum value, and its imports;
//   file_containing_extension,
//   all_extension_numbers_of_type  no extensions are defined: NOT_FOUND / an
//                               empty list for a known message;
// an unknown name is an error_response with NOT_FOUND (the stream goes on).
//
// Thread-safe (immutable after Create).
#ifndef BERTH_SERVER_API_REFLECTION_SERVICE_H_
#define BERTH_SERVER_API_REFLECTION_SERVICE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"

namespace berth {

class ReflectionService final
    : public grpc::reflection::v1alpha::ServerReflection::Service {
 public:
  // `descriptor_set`: a serialized google.protobuf.FileDescriptorSet holding
  // every file with its imports. `services`: the full names list_services
  // returns. INVALID_ARGUMENT if the set does not parse or its files do not
  // build; NOT_FOUND if a service is not in the set.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ReflectionService>> Create(
      absl::string_view descriptor_set, std::vector<std::string> services);

  // The reflection set compiled into berthd (proto/api_descriptor_set.h).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ReflectionService>> ForBerthd(
      std::vector<std::string> services);

  grpc::Status ServerReflectionInfo(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<grpc::reflection::v1alpha::ServerReflectionResponse,
                               grpc::reflection::v1alpha::ServerReflectionRequest>* stream)
      override;

  // The answer to one request (what the stream writes back).
  grpc::reflection::v1alpha::ServerReflectionResponse Answer(
      const grpc::reflection::v1alpha::ServerReflectionRequest& request) const;

 private:
  ReflectionService() = default;
  // Appends `name` and its transitive imports, each once, to `out`.
  void AddFileWithImports(const std::string& name,
                          grpc::reflection::v1alpha::FileDescriptorResponse* out,
                          std::vector<std::string>* added) const;

  // Constant after Create.
  std::map<std::string, std::string> serialized_;  // file name -> FileDescriptorProto bytes
  google::protobuf::DescriptorPool pool_;          // for symbol look-ups
  std::vector<std::string> services_;
};

}  // namespace berth

#endif  // BERTH_SERVER_API_REFLECTION_SERVICE_H_
