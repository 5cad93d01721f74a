// Server reflection against the real berthd, for what grpcurl cannot show:
// the reflected descriptors, built into a fresh DescriptorPool the way
// grpcurl's client does (file_containing_symbol, imports by file_by_filename),
// are the compiled-in ones field for field, with the same JSON names; an
// unknown symbol is an error response on a stream that goes on working.
// What an operator sees — list, describe, invocations, health — is checked
// with the real grpcurl running the docs' own commands
// (tests/grpcurl_docs_test.py, run by tools/run_operator_tests.sh).
//
// This binary must not link @system//:grpcpp_reflection (the reflection
// messages would be registered twice): it uses //proto:reflection_cc_grpc.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/berthd_process.h"

namespace berth {
namespace {

using grpc::reflection::v1alpha::ServerReflection;
using grpc::reflection::v1alpha::ServerReflectionRequest;
using grpc::reflection::v1alpha::ServerReflectionResponse;

// One reflection stream, as grpcurl keeps one open per invocation.
class ReflectionClient {
 public:
  explicit ReflectionClient(std::shared_ptr<grpc::Channel> channel)
      : stub_(ServerReflection::NewStub(channel)) {
    context_.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    stream_ = stub_->ServerReflectionInfo(&context_);
  }
  ~ReflectionClient() {
    stream_->WritesDone();
    grpc::Status s = stream_->Finish();
    EXPECT_TRUE(s.ok()) << s.error_message();
  }

  ServerReflectionResponse Call(const ServerReflectionRequest& request) {
    ServerReflectionResponse response;
    EXPECT_TRUE(stream_->Write(request));
    EXPECT_TRUE(stream_->Read(&response));
    return response;
  }

  std::vector<std::string> ListServices() {
    ServerReflectionRequest r;
    r.set_list_services("*");
    ServerReflectionResponse response = Call(r);
    std::vector<std::string> names;
    for (const auto& s : response.list_services_response().service()) names.push_back(s.name());
    return names;
  }

  // Serialized FileDescriptorProtos of the answer, by file name; empty with
  // *error set on an error response.
  std::map<std::string, google::protobuf::FileDescriptorProto> Files(
      const ServerReflectionRequest& r, int* error = nullptr) {
    ServerReflectionResponse response = Call(r);
    std::map<std::string, google::protobuf::FileDescriptorProto> files;
    if (response.has_error_response()) {
      if (error != nullptr) *error = response.error_response().error_code();
      return files;
    }
    EXPECT_TRUE(response.has_file_descriptor_response()) << response.DebugString();
    for (const std::string& bytes : response.file_descriptor_response().file_descriptor_proto()) {
      google::protobuf::FileDescriptorProto proto;
      EXPECT_TRUE(proto.ParseFromString(bytes));
      files[proto.name()] = proto;
    }
    return files;
  }

  std::map<std::string, google::protobuf::FileDescriptorProto> FileContainingSymbol(
      const std::string& symbol, int* error = nullptr) {
    ServerReflectionRequest r;
    r.set_file_containing_symbol(symbol);
    return Files(r, error);
  }

  std::map<std::string, google::protobuf::FileDescriptorProto> FileByFilename(
      const std::string& name) {
    ServerReflectionRequest r;
    r.set_file_by_filename(name);
    return Files(r);
  }

 private:
  std::unique_ptr<ServerReflection::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<ServerReflectionRequest, ServerReflectionResponse>>
      stream_;
};

// grpcurl's descriptor source: files from file_containing_symbol, missing
// dependencies fetched with file_by_filename, built dependencies first.
class ReflectedPool {
 public:
  explicit ReflectedPool(ReflectionClient& client) : client_(client) {}

  // Loads the file that defines `symbol`; false (with a test failure) if the
  // server's descriptors do not build.
  bool LoadSymbol(const std::string& symbol) {
    auto files = client_.FileContainingSymbol(symbol);
    EXPECT_FALSE(files.empty()) << symbol;
    for (auto& [name, proto] : files) {
      fetched_[name] = proto;
    }
    // The file that defines the symbol is the one to build; build them all.
    for (const auto& [name, proto] : files) {
      if (!Build(name)) return false;
    }
    return true;
  }

  const google::protobuf::DescriptorPool& pool() const { return pool_; }
  int by_filename_calls() const { return by_filename_calls_; }

 private:
  bool Build(const std::string& name) {
    if (pool_.FindFileByName(name) != nullptr) return true;
    if (fetched_.count(name) == 0) {
      ++by_filename_calls_;
      auto files = client_.FileByFilename(name);
      EXPECT_EQ(files.count(name), 1u) << "file_by_filename " << name;
      if (files.count(name) == 0) return false;
      for (auto& [n, proto] : files) fetched_.emplace(n, proto);
    }
    const google::protobuf::FileDescriptorProto proto = fetched_.at(name);
    for (const std::string& dep : proto.dependency()) {
      if (!Build(dep)) return false;
    }
    const google::protobuf::FileDescriptor* file = pool_.BuildFile(proto);
    EXPECT_NE(file, nullptr) << "building " << name;
    return file != nullptr;
  }

  ReflectionClient& client_;
  std::map<std::string, google::protobuf::FileDescriptorProto> fetched_;
  google::protobuf::DescriptorPool pool_;
  int by_filename_calls_ = 0;
};

void ExpectSameFields(const google::protobuf::Descriptor& got,
                      const google::protobuf::Descriptor& want) {
  ASSERT_EQ(got.full_name(), want.full_name());
  ASSERT_EQ(got.field_count(), want.field_count()) << want.full_name();
  for (int i = 0; i < want.field_count(); ++i) {
    const google::protobuf::FieldDescriptor* w = want.field(i);
    const google::protobuf::FieldDescriptor* g = got.FindFieldByNumber(w->number());
    ASSERT_NE(g, nullptr) << w->full_name();
    EXPECT_EQ(g->name(), w->name());
    EXPECT_EQ(g->json_name(), w->json_name()) << w->full_name();
    EXPECT_TRUE(g->has_json_name()) << w->full_name() << " served without json_name";
    EXPECT_EQ(g->type(), w->type()) << w->full_name();
    EXPECT_EQ(g->label(), w->label()) << w->full_name();
  }
}

class ReflectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<BerthdProcess>> b = BerthdProcess::Start({});
    ASSERT_TRUE(b.ok()) << b.status();
    berthd_ = std::move(*b);
    channel_ = grpc::CreateChannel(berthd_->target(), grpc::InsecureChannelCredentials());
  }

  std::unique_ptr<BerthdProcess> berthd_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(ReflectionTest, ReflectedDescriptorsAreTheCompiledOnesWithJsonNames) {
  ReflectionClient client(channel_);

  // grpcurl list (no token: reflection is open).
  std::vector<std::string> services = client.ListServices();
  std::set<std::string> names(services.begin(), services.end());
  EXPECT_EQ(names.count("berth.v1.Executor"), 1u);
  EXPECT_EQ(names.count("grpc.health.v1.Health"), 1u);
  EXPECT_EQ(names.count("grpc.reflection.v1alpha.ServerReflection"), 1u);

  // grpcurl describe SERVICE: the file containing it, into a fresh pool.
  ReflectedPool reflected(client);
  ASSERT_TRUE(reflected.LoadSymbol("berth.v1.Executor"));
  ASSERT_TRUE(reflected.LoadSymbol("grpc.health.v1.Health"));
  const google::protobuf::DescriptorPool& pool = reflected.pool();

  const google::protobuf::ServiceDescriptor* executor =
      pool.FindServiceByName("berth.v1.Executor");
  ASSERT_NE(executor, nullptr);
  const google::protobuf::ServiceDescriptor* compiled =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName("berth.v1.Executor");
  ASSERT_NE(compiled, nullptr);
  ASSERT_EQ(executor->method_count(), compiled->method_count());
  ASSERT_EQ(executor->method_count(), 16);
  for (int i = 0; i < executor->method_count(); ++i) {
    const google::protobuf::MethodDescriptor* m = executor->method(i);
    const google::protobuf::MethodDescriptor* want = compiled->FindMethodByName(m->name());
    ASSERT_NE(want, nullptr) << m->name();
    ASSERT_NE(m->input_type(), nullptr) << m->name();
    ASSERT_NE(m->output_type(), nullptr) << m->name();
    EXPECT_EQ(m->input_type()->full_name(), want->input_type()->full_name());
    EXPECT_EQ(m->output_type()->full_name(), want->output_type()->full_name());
    EXPECT_EQ(m->client_streaming(), want->client_streaming()) << m->name();
    EXPECT_EQ(m->server_streaming(), want->server_streaming()) << m->name();
    // describe MESSAGE: the same fields as the compiled-in message, with
    // the same JSON names (grpcurl prints those).
    ExpectSameFields(*m->input_type(), *want->input_type());
    ExpectSameFields(*m->output_type(), *want->output_type());
    // grpcurl describe resolves symbols one by one as well.
    EXPECT_EQ(pool.FindMessageTypeByName(m->input_type()->full_name()), m->input_type());
  }
  const google::protobuf::ServiceDescriptor* health =
      pool.FindServiceByName("grpc.health.v1.Health");
  ASSERT_NE(health, nullptr);
  for (int i = 0; i < health->method_count(); ++i) {
    EXPECT_NE(health->method(i)->input_type(), nullptr);
    EXPECT_NE(health->method(i)->output_type(), nullptr);
  }
  EXPECT_NE(health->FindMethodByName("Check"), nullptr);
  EXPECT_NE(health->FindMethodByName("Watch"), nullptr);
  // Well-known types came along (imports of berth/v1/*.proto).
  EXPECT_NE(pool.FindMessageTypeByName("google.protobuf.Timestamp"), nullptr);
  EXPECT_NE(pool.FindMessageTypeByName("google.protobuf.FieldMask"), nullptr);
  EXPECT_NE(pool.FindEnumTypeByName("berth.v1.JobState"), nullptr);
  // The wait reason's enum is found by the name the docs give it
  // (grpcurl describe berth.v1.WaitReason).
  const google::protobuf::EnumDescriptor* wait_reason =
      pool.FindEnumTypeByName("berth.v1.WaitReason");
  ASSERT_NE(wait_reason, nullptr);
  EXPECT_NE(wait_reason->FindValueByName("WAITING_FOR_MEMORY"), nullptr);
  EXPECT_EQ(pool.FindEnumTypeByName("berth.v1.Reason"), nullptr);

  // file_by_filename directly (grpcurl uses it for imports).
  auto job_file = client.FileByFilename("berth/v1/job.proto");
  ASSERT_EQ(job_file.count("berth/v1/job.proto"), 1u);
  // Unknown symbols: an error response with NOT_FOUND, not a broken stream.
  int error = 0;
  EXPECT_TRUE(client.FileContainingSymbol("berth.v1.NoSuchThing", &error).empty());
  EXPECT_EQ(error, static_cast<int>(grpc::StatusCode::NOT_FOUND));

  // The same stream still answers after the error.
  EXPECT_EQ(client.FileByFilename("berth/v1/budgets.proto").count("berth/v1/budgets.proto"), 1u);
}

TEST_F(ReflectionTest, HealthCheck) {
  std::unique_ptr<grpc::health::v1::Health::Stub> health =
      grpc::health::v1::Health::NewStub(channel_);
  for (const char* service : {"", "berth.v1.Executor", "berth.runtime"}) {
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    // berth.runtime reports Docker: allow the first reconcile pass to finish.
    bool serving = false;
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (!serving && absl::Now() < deadline) {
      grpc::ClientContext context;
      context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
      grpc::Status s = health->Check(&context, request, &response);
      ASSERT_TRUE(s.ok()) << "\"" << service << "\": " << s.error_message();
      serving = response.status() == grpc::health::v1::HealthCheckResponse::SERVING;
      if (!serving) absl::SleepFor(absl::Milliseconds(100));
    }
    EXPECT_TRUE(serving) << "\"" << service << "\" status " << response.status();
  }
  grpc::health::v1::HealthCheckRequest request;
  request.set_service("no.such.Service");
  grpc::health::v1::HealthCheckResponse response;
  grpc::ClientContext context;
  EXPECT_EQ(health->Check(&context, request, &response).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

// grpc.health.v1.Health/Watch sends the status, then only changes: over
// many reconcile ticks (500 ms each here) no message repeats the one before.
// (grpcurl would show the messages but not that none is a repeat.)
TEST_F(ReflectionTest, HealthWatchSendsOnChangeOnly) {
  std::unique_ptr<grpc::health::v1::Health::Stub> health =
      grpc::health::v1::Health::NewStub(channel_);
  for (const char* service : {"", "berth.runtime"}) {
    grpc::ClientContext context;
    // The observation window: 8 ticks.
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(4)));
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    auto reader = health->Watch(&context, request);
    std::vector<int> statuses;
    grpc::health::v1::HealthCheckResponse response;
    while (reader->Read(&response)) statuses.push_back(response.status());
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
    ASSERT_FALSE(statuses.empty()) << "\"" << service << "\"";
    for (size_t i = 1; i < statuses.size(); ++i) {
      EXPECT_NE(statuses[i], statuses[i - 1])
          << "\"" << service << "\": message " << i << " repeats the status";
    }
    EXPECT_LE(statuses.size(), 2u) << "\"" << service << "\"";
  }
}

}  // namespace
}  // namespace berth
