#include "executor/store_util.h"

#include <algorithm>

#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"

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

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

uint64_t Str(absl::string_view s) { return absl::Hash<absl::string_view>{}(s); }

class Fingerprint {
 public:
  void Add(uint64_t v) { h_ = Mix(h_ ^ v) + 0x9e3779b97f4a7c15ULL; }
  void AddStr(absl::string_view s) { Add(Str(s)); }
  template <typename M>
  void AddMap(const M& m) {
    uint64_t sum = 0;
    for (const auto& [k, v] : m) sum += Mix(Str(k) ^ Mix(Str(v) + 1));
    Add(m.size());
    Add(sum);
  }
  template <typename R>
  void AddRepeated(const R& r) {
    Add(r.size());
    for (const auto& s : r) AddStr(s);
  }
  template <typename D>
  void AddTime(bool has, const D& d) {
    Add(has ? 1 : 0);
    if (has) {
      Add(static_cast<uint64_t>(d.seconds()));
      Add(static_cast<uint64_t>(d.nanos()));
    }
  }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 0x243f6a8885a308d3ULL;
};

}  // namespace

uint64_t SpecFingerprint(const berth::v1::JobSpec& s) {
  Fingerprint f;
  f.AddStr(s.id());
  f.AddStr(s.workspace());
  f.AddStr(s.action());
  f.AddStr(s.image());
  f.AddRepeated(s.argv());
  f.AddMap(s.env());
  f.Add(static_cast<uint64_t>(static_cast<int64_t>(s.priority())));
  f.Add(static_cast<uint64_t>(s.resources().cpu_millis()));
  f.Add(static_cast<uint64_t>(s.resources().memory_bytes()));
  f.AddStr(s.pool());
  f.AddTime(s.has_expected_duration(), s.expected_duration());
  f.AddTime(s.has_max_duration(), s.max_duration());
  f.AddRepeated(s.depends_on());
  f.AddTime(s.has_created_at(), s.created_at());
  f.AddMap(s.labels());
  return f.value();
}

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

}  // namespace berth
