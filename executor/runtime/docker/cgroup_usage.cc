#include "executor/runtime/docker/cgroup_usage.h"

#include <array>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "planner/base/proto_json.h"

namespace berth {
namespace {

// One way the engine lays out its containers' cgroups.
struct Layout {
  bool v1;
  // The container's directory relative to a hierarchy: prefix, id, suffix.
  const char* prefix;
  const char* suffix;
};

constexpr std::array<Layout, 4> kLayouts = {{
    {true, "docker/", ""},
    {true, "system.slice/docker-", ".scope"},
    {false, "docker/", ""},
    {false, "system.slice/docker-", ".scope"},
}};

bool ValidId(absl::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    if (!absl::ascii_isdigit(c) && !(c >= 'a' && c <= 'f')) return false;
  }
  return true;
}

// The value of `key` in a "key value" lines file (cgroup v2 cpu.stat).
absl::StatusOr<int64_t> ReadKey(const std::string& path, absl::string_view key) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, key) || !absl::ConsumePrefix(&rest, " ")) continue;
    int64_t v = 0;
    if (absl::SimpleAtoi(rest, &v) && v >= 0) return v;
    return absl::DataLossError(absl::StrCat(path, ": bad ", key, " line '", line, "'"));
  }
  return absl::DataLossError(absl::StrCat(path, ": no ", key, " line"));
}

absl::StatusOr<UsageSample> ReadDir(const std::string& root, bool v1, const std::string& dir);

absl::StatusOr<UsageSample> ReadLayout(const std::string& root, const Layout& l,
                                       absl::string_view id) {
  const std::string dir = absl::StrCat(l.prefix, id, l.suffix);
  return ReadDir(root, l.v1, dir);
}

absl::StatusOr<UsageSample> ReadDir(const std::string& root, bool v1, const std::string& dir) {
  UsageSample s;
  if (v1) {
    const std::string mem = absl::StrCat(root, "/memory/", dir, "/");
    absl::StatusOr<int64_t> current = ReadCgroupCount(mem + "memory.usage_in_bytes");
    if (!current.ok()) return current.status();
    s.memory_bytes = *current;
    absl::StatusOr<int64_t> peak = ReadCgroupCount(mem + "memory.max_usage_in_bytes");
    if (!peak.ok()) return peak.status();
    s.peak_memory_bytes = *peak;
    // cpuacct is mounted alone or together with cpu, depending on the distro.
    absl::StatusOr<int64_t> ns =
        ReadCgroupCount(absl::StrCat(root, "/cpuacct/", dir, "/cpuacct.usage"));
    if (ns.status().code() == absl::StatusCode::kNotFound) {
      ns = ReadCgroupCount(absl::StrCat(root, "/cpu,cpuacct/", dir, "/cpuacct.usage"));
    }
    if (!ns.ok()) return ns.status();
    s.cpu = absl::Nanoseconds(*ns);
    return s;
  }
  const std::string base = absl::StrCat(root, "/", dir, "/");
  absl::StatusOr<int64_t> current = ReadCgroupCount(base + "memory.current");
  if (!current.ok()) return current.status();
  s.memory_bytes = *current;
  absl::StatusOr<int64_t> peak = ReadCgroupCount(base + "memory.peak");
  if (peak.ok()) {
    s.peak_memory_bytes = *peak;
  } else if (peak.status().code() != absl::StatusCode::kNotFound) {
    return peak.status();
  }
  absl::StatusOr<int64_t> usec = ReadKey(base + "cpu.stat", "usage_usec");
  if (!usec.ok()) return usec.status();
  s.cpu = absl::Microseconds(*usec);
  return s;
}

}  // namespace

absl::StatusOr<int64_t> ReadCgroupCount(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  int64_t v = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &v) || v < 0) {
    return absl::DataLossError(absl::StrCat(path, ": not a count: '", *text, "'"));
  }
  return v;
}

CgroupUsage::CgroupUsage(CgroupUsageOptions options) : options_(std::move(options)) {}

absl::StatusOr<UsageSample> CgroupUsage::Read(absl::string_view container_id,
                                              absl::string_view parent) const {
  if (!ValidId(container_id)) {
    return absl::InvalidArgumentError(
        absl::StrCat("container id '", container_id, "' is not 1-128 hex digits"));
  }
  if (!parent.empty()) {
    const std::string dir = absl::StrCat(parent, "/", container_id);
    for (bool v1 : {true, false}) {
      absl::StatusOr<UsageSample> s = ReadDir(options_.root, v1, dir);
      if (s.status().code() != absl::StatusCode::kNotFound) return s;
    }
  }
  const int hint = layout_.load(std::memory_order_relaxed);
  for (size_t k = 0; k < kLayouts.size(); ++k) {
    const size_t i = (static_cast<size_t>(hint) + k) % kLayouts.size();
    absl::StatusOr<UsageSample> s = ReadLayout(options_.root, kLayouts[i], container_id);
    if (s.status().code() == absl::StatusCode::kNotFound) continue;
    if (s.ok()) layout_.store(static_cast<int>(i), std::memory_order_relaxed);
    return s;
  }
  return absl::NotFoundError(absl::StrCat("no cgroup of container ", container_id,
                                          " under ", options_.root));
}

UsageSamples CgroupUsage::Sweep(
    const ContainerList& containers,
    const std::function<std::string(const std::string& job_id)>& parent_of) const {
  UsageSamples out;
  for (const auto& [job, c] : containers) {
    if (c.state != ContainerState::kRunning) continue;
    absl::StatusOr<UsageSample> s =
        Read(c.container_id, parent_of ? parent_of(job) : std::string());
    if (s.ok()) out.emplace(job, *s);
  }
  return out;
}

}  // namespace berth
