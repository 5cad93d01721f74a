// StoredSpecFilter: the SpecFilter of a SyncSnapshot. As each
// batch arrives it drops the specs the store already holds unchanged, so
// that a re-sync of a million jobs keeps only its new and changed specs
// (~70 bytes per dropped job: its id and fingerprint, instead of the spec).
//
// A spec is dropped only if all of these hold (else it is kept, and
// validated and diffed with the rest of the snapshot as before):
//   - the store knows its id, in a terminal state or with the same
//     SpecFingerprint (Store::LookupSpecs, one lock per batch);
//   - it has no dependencies (so no cross-job check can reject it);
//   - it passes the per-job checks (JobChecker) against `config`.
// A dropped job is therefore accepted, and the store counts it unchanged
// (or terminal_unchanged). Nothing is applied before the whole snapshot has
// arrived: the store checks each dropped job again when it applies the
// snapshot and refuses it all (ABORTED) if one changed meanwhile.
//
// A generation at or below the store's last applied one (a re-send, or a
// stale snapshot) can only be answered "already applied" or refused, never
// applied: every spec of it is dropped without a lookup or a check.
//
// Not thread-safe: one filter per stream. `store` must outlive it.
#ifndef BERTH_SERVER_INGEST_STORED_SPEC_FILTER_H_
#define BERTH_SERVER_INGEST_STORED_SPEC_FILTER_H_

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "executor/store/store.h"
#include "server/ingest/job_validation.h"
#include "server/ingest/snapshot_assembler.h"

namespace berth {

class StoredSpecFilter final : public SpecFilter {
 public:
  StoredSpecFilter(const Store& store, ValidationConfig config);

  void Begin(uint64_t generation) override;
  void Filter(const google::protobuf::RepeatedPtrField<v1::JobSpec>& specs,
              const std::vector<uint64_t>& fingerprints, std::vector<bool>* drop) override;

  // Specs dropped so far (for tests and logs).
  uint64_t dropped() const { return dropped_; }

 private:
  const Store& store_;
  const ValidationConfig config_;
  JobChecker checker_;  // views config_
  bool drop_all_ = false;
  uint64_t dropped_ = 0;
  // Per batch, reused.
  std::vector<absl::string_view> ids_;
  std::vector<SpecLookup> found_;
};

}  // namespace berth

#endif  // BERTH_SERVER_INGEST_STORED_SPEC_FILTER_H_
