#include "planner/base/proto_json.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "planner/base/status_macros.h"

namespace berth {
namespace {

// Protobuf reports paths as "(jobs[3].priority): ..." or "(jobs[3]) cpu: ...".
// Returns N if the message is about jobs[N], else -1.
int JobIndexInError(absl::string_view message) {
  constexpr absl::string_view kPrefix = "(jobs[";
  size_t at = message.find(kPrefix);
  if (at == absl::string_view::npos) return -1;
  size_t start = at + kPrefix.size();
  size_t end = message.find(']', start);
  if (end == absl::string_view::npos) return -1;
  int index = -1;
  if (!absl::SimpleAtoi(message.substr(start, end - start), &index)) return -1;
  return index;
}

// The id of jobs[index] (or jobs[index].spec for workloads), read from the
// JSON as a generic value; empty if it cannot be found.
std::string JobIdAt(absl::string_view json, int index) {
  google::protobuf::Value root;
  if (!google::protobuf::util::JsonStringToMessage(std::string(json), &root).ok()) {
    return "";
  }
  const auto& fields = root.struct_value().fields();
  auto jobs = fields.find("jobs");
  if (jobs == fields.end()) return "";
  const auto& list = jobs->second.list_value().values();
  if (index < 0 || index >= list.size()) return "";
  const auto* job = &list[index].struct_value().fields();
  if (auto spec = job->find("spec"); spec != job->end()) {
    job = &spec->second.struct_value().fields();
  }
  auto id = job->find("id");
  if (id == job->end()) return "";
  return id->second.string_value();
}

}  // namespace

absl::Status ParseJsonMessage(absl::string_view json, absl::string_view source,
                              google::protobuf::Message* message) {
  message->Clear();
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), message, options);
  if (status.ok()) return absl::OkStatus();
  std::string detail(status.message().data(), status.message().size());
  std::string where;
  int index = JobIndexInError(detail);
  if (index >= 0) {
    std::string id = JobIdAt(json, index);
    if (!id.empty()) where = absl::StrCat("job '", id, "' ");
  }
  message->Clear();
  return absl::InvalidArgumentError(
      absl::StrCat(source, ": ", where, detail));
}

absl::StatusOr<std::string> ToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = false;
  std::string out;
  auto status =
      google::protobuf::util::MessageToJsonString(message, &out, options);
  if (!status.ok()) {
    return absl::InternalError(absl::StrCat(
        "cannot serialise ", message.GetTypeName(), " as JSON: ",
        std::string(status.message().data(), status.message().size())));
  }
  return out;
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    std::string why = absl::StrCat(path, ": ", std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(why);
    if (err == EACCES) return absl::PermissionDeniedError(why);
    return absl::InvalidArgumentError(why);
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read failed"));
  return buffer.str();
}

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents) {
  std::string tmp = absl::StrCat(path, ".tmp.", getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": cannot create: ", std::strerror(errno)));
  }
  const char* p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      unlink(tmp.c_str());
      return absl::ResourceExhaustedError(
          absl::StrCat(path, ": write failed: ", std::strerror(err)));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": sync failed: ", std::strerror(err)));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": rename failed: ", std::strerror(err)));
  }
  return absl::OkStatus();
}

}  // namespace berth
