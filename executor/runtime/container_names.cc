#include "executor/runtime/container_names.h"

#include <map>
#include <optional>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace berth {

uint64_t NameHash(absl::string_view a, absl::string_view b) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](absl::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
  };
  mix(a);
  if (!b.empty()) {
    mix(absl::string_view("\0", 1));
    mix(b);
  }
  return h;
}

std::string InstanceNamePrefix(absl::string_view instance) {
  return absl::StrFormat("berth-%08x-", static_cast<uint32_t>(NameHash(instance) >> 32));
}

std::string ContainerName(absl::string_view instance, absl::string_view job_id) {
  return absl::StrCat(InstanceNamePrefix(instance), job_id);
}

std::string LegacyContainerName(absl::string_view job_id) {
  return absl::StrCat("berth-", job_id);
}

std::map<std::string, std::string> AttemptLabels(int attempt) {
  return {{kAttemptLabel, std::to_string(attempt + 1)}, {kAttemptBaseLabel, "1"}};
}

std::optional<int> ParseAttemptLabel(absl::string_view value, absl::string_view base) {
  int n = 0;
  if (!absl::SimpleAtoi(value, &n)) return std::nullopt;
  return base == "1" ? n - 1 : n;
}

}  // namespace berth
