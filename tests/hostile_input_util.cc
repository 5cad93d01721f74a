#include "tests/hostile_input_util.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "berth/v1/executor.pb.h"
#include "grpcpp/support/sync_stream.h"
#include "executor/runtime/docker/testing/docker_test_util.h"

namespace berth::testing {

void WriteFile(const std::string& path, const std::string& text, mode_t mode) {
  unlink(path.c_str());
  std::ofstream(path) << text;
  chmod(path.c_str(), mode);
}

v1::JobSpec GoodJob(const std::string& id) {
  v1::JobSpec j;
  j.set_id(id);
  j.set_workspace("ws");
  j.set_image("berth-test/busybox:1");
  j.add_argv("true");
  j.mutable_resources()->set_cpu_millis(100);
  j.mutable_resources()->set_memory_bytes(64 << 20);
  return j;
}

BerthdConfig BaseConfig(const std::string& name) {
  BerthdConfig c;
  const std::string dir = absl::StrCat(TmpDir(), "/", name);
  mkdir(dir.c_str(), 0700);
  c.listen = "127.0.0.1:0";
  c.metrics_listen = "127.0.0.1:0";
  c.token_file = dir + "/tokens";
  WriteFile(c.token_file,
            absl::StrCat("pusher js ", kPusher, "\noperator op ", kOperator, "\n"), 0600);
  c.data_dir = dir + "/data";
  c.instance = UniqueName("hostile");
  c.allowed_images = {"berth-test/*"};
  c.memory_bytes = int64_t{1} << 30;
  c.cpu_millis = 2000;
  c.tick = absl::Milliseconds(500);
  c.workspaces_root = dir + "/workspaces";
  mkdir(c.workspaces_root.c_str(), 0755);
  mkdir((c.workspaces_root + "/ws").c_str(), 0755);
  return c;
}

grpc::Status SendRaw(grpc::Channel& channel, const std::string& token,
                     const std::vector<std::string>& messages, bool dry_run,
                     std::string* response_bytes) {
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", absl::StrCat("Bearer ", token));
  grpc::internal::RpcMethod method(
      dry_run ? "/berth.v1.Executor/DryRun" : "/berth.v1.Executor/SyncSnapshot",
      grpc::internal::RpcMethod::CLIENT_STREAMING);
  grpc::ByteBuffer response;
  std::unique_ptr<grpc::ClientWriter<grpc::ByteBuffer>> writer(
      grpc::internal::ClientWriterFactory<grpc::ByteBuffer>::Create(&channel, method, &ctx,
                                                                    &response));
  for (const std::string& m : messages) {
    grpc::Slice slice(m);
    grpc::ByteBuffer b(&slice, 1);
    if (!writer->Write(b)) break;
  }
  writer->WritesDone();
  grpc::Status s = writer->Finish();
  if (response_bytes != nullptr && s.ok()) {
    std::vector<grpc::Slice> slices;
    (void)response.Dump(&slices);
    for (const grpc::Slice& sl : slices) {
      response_bytes->append(reinterpret_cast<const char*>(sl.begin()), sl.size());
    }
  }
  return s;
}

std::vector<std::string> Stream(uint64_t generation, const std::vector<v1::JobSpec>& jobs) {
  std::vector<std::string> out;
  v1::SyncSnapshotRequest m;
  m.mutable_header()->set_generation(generation);
  m.mutable_header()->set_expected_job_count(jobs.size());
  out.push_back(m.SerializeAsString());
  m.Clear();
  for (const v1::JobSpec& j : jobs) *m.mutable_batch()->add_jobs() = j;
  out.push_back(m.SerializeAsString());
  m.Clear();
  m.mutable_end()->set_job_count(jobs.size());
  out.push_back(m.SerializeAsString());
  return out;
}

}  // namespace berth::testing
