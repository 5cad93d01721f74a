// SpecFingerprint: a 64-bit fingerprint of a job spec, for the store's fast
// "unchanged?" test when a snapshot is applied (executor/store.h). The
// server computes it while a snapshot stream is read, when each spec is
// still in cache, and hands it to the store with the spec
// (SnapshotRequest::fingerprints).
//
// Thread-safe (a pure function).
#ifndef BERTH_EXECUTOR_STORE_SPEC_FINGERPRINT_H_
#define BERTH_EXECUTOR_STORE_SPEC_FINGERPRINT_H_

#include <cstdint>

#include "berth/v1/job.pb.h"

namespace berth {

// A fingerprint of every field of `spec` (map fields order-free). The hash is
// fixed (not seeded per process), so fingerprints agree across processes;
// whatever persists one (SnapshotDigest) records kFingerprintVersion with it
// and this number changes whenever the function does. Equal specs have equal
// fingerprints; different specs collide with probability ~2^-64.
uint64_t SpecFingerprint(const berth::v1::JobSpec& spec);
inline constexpr uint32_t kFingerprintVersion = 1;

// The content of a whole snapshot: every job's SpecFingerprint, combined
// order-free (job-server may list the same jobs in another order). A
// re-sent generation must carry the digest of what was applied under it. Never 0. Not thread-safe.
class SnapshotDigest {
 public:
  void Add(uint64_t spec_fingerprint);
  uint64_t value() const;

 private:
  uint64_t sum_ = 0;
  uint64_t count_ = 0;
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_SPEC_FINGERPRINT_H_
