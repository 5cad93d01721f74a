#include "executor/store/store_util.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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
  if (a.image() != b.image()) d.push_back("image");
  if (!RepeatedEqual(a.argv(), b.argv())) d.push_back("argv");
  if (!MapsEqual(a.env(), b.env())) d.push_back("env");
  if (a.priority() != b.priority()) d.push_back("priority");
  if (a.resources().cpu_millis() != b.resources().cpu_millis()) {
    d.push_back("resources.cpu_millis");
  }
  if (a.resources().memory_bytes() != b.resources().memory_bytes()) {
    d.push_back("resources.memory_bytes");
  }
  if (a.pool() != b.pool()) d.push_back("pool");
  if (!OptionalTimeEqual(a.has_expected_duration(), a.expected_duration(),
                         b.has_expected_duration(), b.expected_duration())) {
    d.push_back("expected_duration");
  }
  if (!OptionalTimeEqual(a.has_max_duration(), a.max_duration(),
                         b.has_max_duration(), b.max_duration())) {
    d.push_back("max_duration");
  }
  if (!RepeatedEqual(a.depends_on(), b.depends_on())) d.push_back("depends_on");
  if (!OptionalTimeEqual(a.has_created_at(), a.created_at(), b.has_created_at(),
                         b.created_at())) {
    d.push_back("created_at");
  }
  if (!MapsEqual(a.labels(), b.labels())) d.push_back("labels");
  return d;
}

namespace {

std::string QuotedOrNone(absl::string_view s) {
  return s.empty() ? "none" : absl::StrCat("'", s, "'");
}

std::string OptionalDuration(bool has, const google::protobuf::Duration& d) {
  if (!has) return "unset";
  return FormatHumanDuration(absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos()));
}

}  // namespace

std::string DescribeSpecChanges(const berth::v1::JobSpec& a, const berth::v1::JobSpec& b,
                                const std::vector<std::string>& fields) {
  std::vector<std::string> parts;
  parts.reserve(fields.size());
  for (const std::string& f : fields) {
    std::string from, to, name = f;
    if (f == "priority") {
      from = absl::StrCat(a.priority());
      to = absl::StrCat(b.priority());
    } else if (f == "resources.memory_bytes") {
      name = "memory";
      from = FormatBytes(a.resources().memory_bytes());
      to = FormatBytes(b.resources().memory_bytes());
    } else if (f == "resources.cpu_millis") {
      name = "cpu";
      from = FormatCpu(a.resources().cpu_millis());
      to = FormatCpu(b.resources().cpu_millis());
    } else if (f == "image") {
      from = QuotedOrNone(a.image());
      to = QuotedOrNone(b.image());
    } else if (f == "pool") {
      from = QuotedOrNone(a.pool().empty() ? "default" : a.pool());
      to = QuotedOrNone(b.pool().empty() ? "default" : b.pool());
    } else if (f == "action") {
      from = QuotedOrNone(a.action());
      to = QuotedOrNone(b.action());
    } else if (f == "expected_duration") {
      from = OptionalDuration(a.has_expected_duration(), a.expected_duration());
      to = OptionalDuration(b.has_expected_duration(), b.expected_duration());
    } else if (f == "max_duration") {
      from = OptionalDuration(a.has_max_duration(), a.max_duration());
      to = OptionalDuration(b.has_max_duration(), b.max_duration());
    }
    parts.push_back(from.empty() ? name : absl::StrCat(name, " ", from, " -> ", to));
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace berth
