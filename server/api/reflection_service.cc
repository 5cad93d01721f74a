#include "server/api/reflection_service.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "proto/api_descriptor_set.h"

namespace berth {

namespace rpb = grpc::reflection::v1alpha;

absl::StatusOr<std::unique_ptr<ReflectionService>> ReflectionService::Create(
    absl::string_view descriptor_set, std::vector<std::string> services) {
  google::protobuf::FileDescriptorSet set;
  if (!set.ParseFromArray(descriptor_set.data(), static_cast<int>(descriptor_set.size()))) {
    return absl::InvalidArgumentError("reflection: the descriptor set does not parse");
  }
  std::unique_ptr<ReflectionService> s(new ReflectionService());
  // protoc writes imports before the files that use them.
  for (const google::protobuf::FileDescriptorProto& file : set.file()) {
    if (s->pool_.BuildFile(file) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("reflection: file ", file.name(), " does not build"));
    }
    s->serialized_[file.name()] = file.SerializeAsString();
  }
  for (const std::string& service : services) {
    if (s->pool_.FindServiceByName(service) == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("reflection: service ", service, " is not in the descriptor set"));
    }
  }
  s->services_ = std::move(services);
  return s;
}

absl::StatusOr<std::unique_ptr<ReflectionService>> ReflectionService::ForBerthd(
    std::vector<std::string> services) {
  return Create(absl::string_view(reinterpret_cast<const char*>(kApiDescriptorSet),
                                  kApiDescriptorSetSize),
                std::move(services));
}

void ReflectionService::AddFileWithImports(const std::string& name,
                                           rpb::FileDescriptorResponse* out,
                                           std::vector<std::string>* added) const {
  if (std::find(added->begin(), added->end(), name) != added->end()) return;
  auto it = serialized_.find(name);
  if (it == serialized_.end()) return;
  added->push_back(name);
  out->add_file_descriptor_proto(it->second);
  const google::protobuf::FileDescriptor* file = pool_.FindFileByName(name);
  for (int i = 0; file != nullptr && i < file->dependency_count(); ++i) {
    AddFileWithImports(file->dependency(i)->name(), out, added);
  }
}

rpb::ServerReflectionResponse ReflectionService::Answer(
    const rpb::ServerReflectionRequest& request) const {
  rpb::ServerReflectionResponse response;
  response.set_valid_host(request.host());
  *response.mutable_original_request() = request;
  auto not_found = [&response](const std::string& what) {
    rpb::ErrorResponse* e = response.mutable_error_response();
    e->set_error_code(static_cast<int32_t>(grpc::StatusCode::NOT_FOUND));
    e->set_error_message(absl::StrCat(what, " not found"));
  };
  auto file_response = [&](const std::string& name) {
    std::vector<std::string> added;
    AddFileWithImports(name, response.mutable_file_descriptor_response(), &added);
  };
  switch (request.message_request_case()) {
    case rpb::ServerReflectionRequest::kListServices:
      for (const std::string& name : services_) {
        response.mutable_list_services_response()->add_service()->set_name(name);
      }
      break;
    case rpb::ServerReflectionRequest::kFileByFilename:
      if (serialized_.count(request.file_by_filename()) == 0) {
        not_found(absl::StrCat("file ", request.file_by_filename()));
      } else {
        file_response(request.file_by_filename());
      }
      break;
    case rpb::ServerReflectionRequest::kFileContainingSymbol: {
      const google::protobuf::FileDescriptor* file =
          pool_.FindFileContainingSymbol(request.file_containing_symbol());
      if (file == nullptr) {
        not_found(absl::StrCat("symbol ", request.file_containing_symbol()));
      } else {
        file_response(file->name());
      }
      break;
    }
    case rpb::ServerReflectionRequest::kFileContainingExtension:
      not_found(absl::StrCat("extension ", request.file_containing_extension().extension_number(),
                             " of ", request.file_containing_extension().containing_type()));
      break;
    case rpb::ServerReflectionRequest::kAllExtensionNumbersOfType: {
      const std::string& type = request.all_extension_numbers_of_type();
      if (pool_.FindMessageTypeByName(type) == nullptr) {
        not_found(absl::StrCat("type ", type));
      } else {
        response.mutable_all_extension_numbers_response()->set_base_type_name(type);
      }
      break;
    }
    default: {
      rpb::ErrorResponse* e = response.mutable_error_response();
      e->set_error_code(static_cast<int32_t>(grpc::StatusCode::UNIMPLEMENTED));
      e->set_error_message("unknown reflection request");
      break;
    }
  }
  return response;
}

grpc::Status ReflectionService::ServerReflectionInfo(
    grpc::ServerContext*,
    grpc::ServerReaderWriter<rpb::ServerReflectionResponse, rpb::ServerReflectionRequest>*
        stream) {
  rpb::ServerReflectionRequest request;
  while (stream->Read(&request)) {
    if (!stream->Write(Answer(request))) break;
  }
  return grpc::Status::OK;
}

}  // namespace berth
