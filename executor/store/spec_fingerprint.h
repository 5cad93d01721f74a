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

// A fingerprint of every field of `spec` (map fields order-free). In-memory
// only: the hash is seeded per process, so never persist it or compare it
// across processes. Equal specs have equal fingerprints; different specs
// collide with probability ~2^-64.
uint64_t SpecFingerprint(const berth::v1::JobSpec& spec);

}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_SPEC_FINGERPRINT_H_
