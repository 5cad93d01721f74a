#include "executor/store/spec_fingerprint.h"

#include <cstring>

#include "absl/strings/string_view.h"

namespace berth {
namespace {

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

uint64_t Mix64(uint64_t a, uint64_t b) {
  const unsigned __int128 m =
      static_cast<unsigned __int128>(a ^ 0x9e3779b97f4a7c15ull) * (b ^ 0xd6e8feb86659fd93ull);
  return static_cast<uint64_t>(m) ^ static_cast<uint64_t>(m >> 64);
}

uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// A fixed (unseeded) string hash, so that fingerprints are the same in every
// process and may be persisted (the snapshot digest).
uint64_t Str(absl::string_view s) {
  const char* p = s.data();
  size_t n = s.size();
  uint64_t h = 0x243f6a8885a308d3ull ^ n;
  while (n >= 8) {
    h = Mix64(h, Load64(p));
    p += 8;
    n -= 8;
  }
  uint64_t tail = 0;
  for (size_t i = 0; i < n; ++i) tail |= uint64_t{static_cast<uint8_t>(p[i])} << (8 * i);
  return Mix64(h ^ n, tail ^ 0x13198a2e03707344ull);
}

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

void SnapshotDigest::Add(uint64_t spec_fingerprint) {
  sum_ += Mix(spec_fingerprint + 0x632be59bd9b4e019ULL);
  ++count_;
}

uint64_t SnapshotDigest::value() const {
  const uint64_t v = Mix(sum_ ^ Mix(count_ + 1));
  return v == 0 ? 1 : v;
}

}  // namespace berth
