#include "server/api/reflection_service.h"

#include <set>

#include "berth/v1/executor.pb.h"
#include "berth/v1/files.pb.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

namespace rpb = grpc::reflection::v1alpha;
using google::protobuf::FileDescriptorProto;

std::unique_ptr<ReflectionService> Berthd() {
  auto s = ReflectionService::ForBerthd(
      {"berth.v1.Executor", "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"});
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

std::map<std::string, FileDescriptorProto> Files(const rpb::ServerReflectionResponse& r) {
  std::map<std::string, FileDescriptorProto> out;
  for (const std::string& bytes : r.file_descriptor_response().file_descriptor_proto()) {
    FileDescriptorProto f;
    EXPECT_TRUE(f.ParseFromString(bytes));
    out[f.name()] = f;
  }
  return out;
}

rpb::ServerReflectionResponse Symbol(const ReflectionService& s, const std::string& symbol) {
  rpb::ServerReflectionRequest r;
  r.set_file_containing_symbol(symbol);
  return s.Answer(r);
}

TEST(ReflectionServiceTest, ServesJsonNamesAndComments) {
  std::unique_ptr<ReflectionService> s = Berthd();
  ASSERT_NE(s, nullptr);
  auto files = Files(Symbol(*s, "berth.v1.Budgets"));
  ASSERT_EQ(files.count("berth/v1/budgets.proto"), 1u);
  const FileDescriptorProto& budgets = files["berth/v1/budgets.proto"];
  bool found = false;
  for (const auto& m : budgets.message_type()) {
    if (m.name() != "Budgets") continue;
    for (const auto& f : m.field()) {
      if (f.name() == "memory_bytes") {
        found = true;
        EXPECT_EQ(f.json_name(), "memoryBytes");
      }
    }
  }
  EXPECT_TRUE(found);
  std::string comments;
  for (const auto& loc : budgets.source_code_info().location()) {
    comments += loc.leading_comments();
  }
  EXPECT_NE(comments.find("Memory for jobs in bytes"), std::string::npos) << comments;
}

// Apart from JSON names and comments, the served files are exactly the
// descriptors compiled into the code from the same .proto files.
TEST(ReflectionServiceTest, SameDescriptorsAsTheCompiledCode) {
  std::unique_ptr<ReflectionService> s = Berthd();
  ASSERT_NE(s, nullptr);
  rpb::ServerReflectionRequest r;
  r.set_file_by_filename("berth/v1/executor.proto");
  auto files = Files(s->Answer(r));
  // The file and every import, transitively.
  for (const char* name : {"berth/v1/executor.proto", "berth/v1/budgets.proto",
                           "berth/v1/event.proto", "berth/v1/job.proto", "berth/v1/plan.proto",
                           "google/protobuf/field_mask.proto", "google/protobuf/timestamp.proto"}) {
    ASSERT_EQ(files.count(name), 1u) << name;
  }
  v1::Snapshot::descriptor();  // files.proto is linked in
  for (auto& [name, served] : files) {
    const google::protobuf::FileDescriptor* compiled =
        google::protobuf::DescriptorPool::generated_pool()->FindFileByName(name);
    ASSERT_NE(compiled, nullptr) << name;
    FileDescriptorProto want;
    compiled->CopyTo(&want);
    compiled->CopyJsonNameTo(&want);
    served.clear_source_code_info();
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(served, want))
        << name << "\nserved:\n" << served.ShortDebugString() << "\ncompiled:\n"
        << want.ShortDebugString();
  }
}

TEST(ReflectionServiceTest, ListsServicesAndAnswersUnknownNamesWithNotFound) {
  std::unique_ptr<ReflectionService> s = Berthd();
  ASSERT_NE(s, nullptr);
  rpb::ServerReflectionRequest list;
  list.set_list_services("*");
  std::set<std::string> names;
  const rpb::ServerReflectionResponse listed = s->Answer(list);
  for (const auto& svc : listed.list_services_response().service()) {
    names.insert(svc.name());
  }
  EXPECT_EQ(names, (std::set<std::string>{"berth.v1.Executor", "grpc.health.v1.Health",
                                          "grpc.reflection.v1alpha.ServerReflection"}));
  for (const char* symbol : {"berth.v1.Executor", "berth.v1.Executor.SetBudgets",
                             "berth.v1.JobState", "grpc.health.v1.Health",
                             "grpc.reflection.v1alpha.ServerReflection", "berth.v1.Snapshot"}) {
    EXPECT_FALSE(Files(Symbol(*s, symbol)).empty()) << symbol;
  }
  rpb::ServerReflectionResponse missing = Symbol(*s, "berth.v1.NoSuchThing");
  ASSERT_TRUE(missing.has_error_response());
  EXPECT_EQ(missing.error_response().error_code(),
            static_cast<int>(grpc::StatusCode::NOT_FOUND));
  rpb::ServerReflectionRequest file;
  file.set_file_by_filename("no/such.proto");
  EXPECT_EQ(s->Answer(file).error_response().error_code(),
            static_cast<int>(grpc::StatusCode::NOT_FOUND));
  EXPECT_FALSE(ReflectionService::ForBerthd({"berth.v1.NoService"}).ok());
  EXPECT_EQ(ReflectionService::Create("not a descriptor set", {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace berth
