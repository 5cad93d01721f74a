// Runtime limits: what the container runtime (Docker 20.10 + runc on Linux)
// will actually run, declared once. Ingest (server/ingest/job_validation.h) checks a
// job against these when a snapshot arrives, so a job the runtime would refuse
// is REJECTED at sync naming its field; the Docker runtime checks the same
// before any engine call; berthd checks its container user at start-up. The
// fuzzer (server/ingest/sync_fuzzer.cc) asserts that whatever ingest accepts passes
// CheckContainerSpec.
//
// The limits and where they come from:
//   memory_bytes  >= 6 MiB      Docker: "Minimum memory limit allowed is 6MB"
//   cpu_millis    >= 10         the CFS quota is cpu_millis * 100 us in a
//                               100 ms period and the kernel refuses a quota
//                               below 1000 us ("cpu.cfs_quota_us: invalid
//                               argument"); <= 1,000,000 (1000 cores) so
//                               NanoCpus cannot overflow
//   argv, env     each argv string and each "KEY=value" <= 131071 bytes
//                 (Linux MAX_ARG_STRLEN is 128 KiB with the NUL); at most
//                 4096 argv and 1024 env entries; all of them together
//                 (with NULs) <= 1 MiB (Linux ARG_MAX is 2 MiB with an 8 MiB
//                 stack; half is left for the image's own environment and
//                 the init process); no NUL bytes; env keys
//                 [A-Za-z_][A-Za-z0-9_]*, at most 256 bytes
//   image         the distribution reference grammar (below), <= 512 bytes
//   ids           job id, workspace, instance: 1-128 of [A-Za-z0-9._-], not
//                 "." or ".." (they name containers and host directories)
//   user          "uid:gid", decimal, no sign or leading zero, each in
//                 1..2147483647: never uid 0 nor gid 0 by any spelling
//
// Image reference grammar (github.com/distribution/reference):
//   reference  := name [":" tag] ["@" digest]
//   name       := [domain "/"] component ("/" component)*      (<= 255)
//   domain     := host [":" port]; host := label ("." label)*; the first
//                 part is a domain only if it has "." or ":" or is
//                 "localhost"
//   component  := [a-z0-9]+ (separator [a-z0-9]+)*;
//   separator  := "." | "_" | "__" | "-"+
//   tag        := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
//   digest     := algorithm ":" hex{32,}
// So "berth-test/../evil:1", "berth-test/", "x:1\n" and "UPPER/x" are
// refused whatever the allow-list says.
//
// Pure functions; thread-safe.
#ifndef BERTH_EXECUTOR_RUNTIME_RUNTIME_LIMITS_H_
#define BERTH_EXECUTOR_RUNTIME_RUNTIME_LIMITS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "executor/runtime/runtime.h"

namespace berth {

inline constexpr int64_t kMinMemoryBytes = int64_t{6} << 20;
inline constexpr int64_t kCpuPeriodMicros = 100'000;
inline constexpr int64_t kMinCpuQuotaMicros = 1'000;
inline constexpr int64_t kMinCpuMillis =
    kMinCpuQuotaMicros * 1000 / kCpuPeriodMicros;  // 10
inline constexpr int64_t kMaxCpuMillis = 1'000'000;
inline constexpr size_t kMaxArgStringBytes = 128 * 1024 - 1;
inline constexpr size_t kMaxArgvEntries = 4096;
inline constexpr size_t kMaxEnvEntries = 1024;
inline constexpr size_t kMaxEnvKeyBytes = 256;
inline constexpr size_t kMaxArgEnvTotalBytes = 1 << 20;
inline constexpr size_t kMaxImageReferenceBytes = 512;
inline constexpr size_t kMaxImageNameBytes = 255;
inline constexpr size_t kMaxIdBytes = 128;
inline constexpr uint32_t kMaxContainerId = 2'147'483'647;

// A limit a spec breaks: the field ("resources.memory_bytes", "argv[3]",
// "env['X']", "image") and a sentence saying what is wrong and what is
// allowed.
struct SpecProblem {
  std::string field;
  std::string message;
};

// 1-128 of [A-Za-z0-9._-], not "." nor "..".
bool IsValidName(absl::string_view name);

std::optional<SpecProblem> CheckMemoryBytes(int64_t memory_bytes);
std::optional<SpecProblem> CheckCpuMillis(int64_t cpu_millis);
// Both at once; when both are unset (<= 0) the problem names both fields
// (field "resources").
std::optional<SpecProblem> CheckResources(int64_t cpu_millis, int64_t memory_bytes);

// The image reference grammar above. field "image".
std::optional<SpecProblem> CheckImageReference(absl::string_view image);

// True for an env key of [A-Za-z_][A-Za-z0-9_]*, at most kMaxEnvKeyBytes.
bool IsValidEnvKey(absl::string_view key);

// Accumulates argv and env entries and checks them against the limits
// above. Add every argv string, then every env pair, then call Result().
class ArgumentCheck {
 public:
  void AddArg(absl::string_view arg);
  void AddEnv(absl::string_view key, absl::string_view value);
  // The first problem found, if any.
  const std::optional<SpecProblem>& Result() const { return problem_; }

 private:
  void Fail(std::string field, std::string message);
  size_t argv_ = 0;
  size_t env_ = 0;
  size_t total_ = 0;
  std::optional<SpecProblem> problem_;
};

// Every limit above for a whole container spec, in the order ingest checks
// them: job_id, workspace, image, argv/env, resources. The runtime's own
// settings (allow-list, workspaces root) are checked by the runtime.
std::optional<SpecProblem> CheckContainerSpec(const ContainerSpec& spec);

// A parsed "uid:gid".
struct ContainerUser {
  uint32_t uid = 0;
  uint32_t gid = 0;
  // "uid:gid" as Docker gets it.
  std::string ToString() const { return absl::StrCat(uid, ":", gid); }
};

// Parses `text` as "uid:gid" (see above). INVALID_ARGUMENT naming the
// problem otherwise: names ("root", "nobody"), a missing gid (Docker would
// take the image's, possibly 0), signs, leading zeros, values outside
// 1..2147483647, uid 0 or gid 0.
[[nodiscard]] absl::StatusOr<ContainerUser> ParseContainerUser(absl::string_view text);

// "'text'" with non-printable bytes escaped and long values cut, for
// messages about client strings.
std::string QuoteForMessage(absl::string_view text);

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_RUNTIME_LIMITS_H_
