// Test helper: a SyncSnapshot as ExecutorCore receives it from the stream,
// without gRPC. Testonly.
#ifndef BERTH_SERVER_INGEST_TEST_SNAPSHOT_H_
#define BERTH_SERVER_INGEST_TEST_SNAPSHOT_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "berth/v1/job.pb.h"
#include "executor/store/spec_fingerprint.h"
#include "server/ingest/snapshot_assembler.h"

namespace berth::testing {

// Every spec kept (no SpecFilter), with the fingerprints and the digest the
// stream would have.
inline ReceivedSnapshot TestSnapshot(uint64_t generation, std::vector<v1::JobSpec> jobs,
                                     bool allow_mass_cancel = false) {
  ReceivedSnapshot s;
  s.generation = generation;
  s.allow_mass_cancel = allow_mass_cancel;
  s.jobs = std::move(jobs);
  SnapshotDigest digest;
  for (const v1::JobSpec& j : s.jobs) {
    s.fingerprints.push_back(SpecFingerprint(j));
    digest.Add(s.fingerprints.back());
  }
  s.digest = digest.value();
  return s;
}

}  // namespace berth::testing

#endif  // BERTH_SERVER_INGEST_TEST_SNAPSHOT_H_
