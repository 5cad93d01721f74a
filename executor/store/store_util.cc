#include "executor/store/store_util.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "planner/base/units.h"

namespace berth {
namespace {

template <typename M>
bool MapsEqual(const M& a, const M& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end() || it->second != v) return false;
  }
  return true;
}

template <typename R>
bool RepeatedEqual(const R& a, const R& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

template <typename D>  // Duration or Timestamp
bool OptionalTimeEqual(bool has_a, const D& a, bool has_b, const D& b) {
  if (has_a != has_b) return false;
  return !has_a || (a.seconds() == b.seconds() && a.nanos() == b.nanos());
}

// "<path> <old> -> <new>".
std::string Change(absl::string_view path, absl::string_view from, absl::string_view to) {
  return absl::StrCat(path, " ", from, " -> ", to);
}

std::string DurationText(bool has, const google::protobuf::Duration& d) {
  if (!has) return "unset";
  return FormatHumanDuration(absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos()));
}

}  // namespace

google::protobuf::Timestamp ToProtoTime(absl::Time t) {
  google::protobuf::Timestamp p;
  const int64_t secs = absl::ToUnixSeconds(t);
  p.set_seconds(secs);
  p.set_nanos(static_cast<int32_t>(
      absl::ToInt64Nanoseconds(t - absl::FromUnixSeconds(secs))));
  return p;
}

absl::Time FromProtoTime(const google::protobuf::Timestamp& t) {
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}

std::vector<std::string> DiffJobSpecs(const berth::v1::JobSpec& a,
                                      const berth::v1::JobSpec& b) {
  std::vector<std::string> d;
  if (a.workspace() != b.workspace()) d.push_back("workspace");
  if (a.action() != b.action()) d.push_back("action");
  if (a.image() != b.image()) d.push_back(Change("image", a.image(), b.image()));
  if (!RepeatedEqual(a.argv(), b.argv())) d.push_back("argv");
  if (!MapsEqual(a.env(), b.env())) d.push_back("env");
  if (a.priority() != b.priority()) {
    d.push_back(Change("priority", absl::StrCat(a.priority()), absl::StrCat(b.priority())));
  }
  if (a.resources().cpu_millis() != b.resources().cpu_millis()) {
    d.push_back(Change("resources.cpu_millis", FormatCpu(a.resources().cpu_millis()),
                       FormatCpu(b.resources().cpu_millis())));
  }
  if (a.resources().memory_bytes() != b.resources().memory_bytes()) {
    d.push_back(Change("resources.memory_bytes", FormatBytes(a.resources().memory_bytes()),
                       FormatBytes(b.resources().memory_bytes())));
  }
  if (a.pool() != b.pool()) {
    d.push_back(Change("pool", a.pool().empty() ? "default" : a.pool(),
                       b.pool().empty() ? "default" : b.pool()));
  }
  if (!OptionalTimeEqual(a.has_expected_duration(), a.expected_duration(),
                         b.has_expected_duration(), b.expected_duration())) {
    d.push_back(Change("expected_duration",
                       DurationText(a.has_expected_duration(), a.expected_duration()),
                       DurationText(b.has_expected_duration(), b.expected_duration())));
  }
  if (!OptionalTimeEqual(a.has_max_duration(), a.max_duration(),
                         b.has_max_duration(), b.max_duration())) {
    d.push_back(Change("max_duration", DurationText(a.has_max_duration(), a.max_duration()),
                       DurationText(b.has_max_duration(), b.max_duration())));
  }
  if (!RepeatedEqual(a.depends_on(), b.depends_on())) d.push_back("depends_on");
  if (!OptionalTimeEqual(a.has_created_at(), a.created_at(), b.has_created_at(),
                         b.created_at())) {
    d.push_back("created_at");
  }
  if (!MapsEqual(a.labels(), b.labels())) d.push_back("labels");
  return d;
}

}  // namespace berth
