// MemoryStore: a testonly in-memory Store with the same semantics as
// RocksStore (both share StoreCore); nothing survives the object.
//
// Fault injection: FailNextWrites(n, status) makes the next n writes fail
// with `status` and change nothing, to test callers' error paths.
//
// Thread-safe.
#ifndef BERTH_EXECUTOR_STORE_MEMORY_STORE_H_
#define BERTH_EXECUTOR_STORE_MEMORY_STORE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "executor/store/store.h"
#include "executor/store/store_core.h"

namespace berth {

class MemoryStore final : public StoreCore {
 public:
  explicit MemoryStore(RetentionOptions retention = {});

  // The next `n` writes fail with `status` (must not be OK).
  void FailNextWrites(int n, absl::Status status);

 private:
  absl::Status Persist(const ChangeSet& changes) override;
  absl::StatusOr<std::vector<berth::v1::Event>> LoadEvents(
      uint64_t first, int max) const override;
  absl::StatusOr<std::vector<Decision>> LoadDecisions(
      const std::string& job_id) const override;

  // Persist (the writer, without StoreCore::mu_) runs concurrently with
  // LoadEvents / LoadDecisions (readers), so the "disk" has its own lock.
  mutable absl::Mutex disk_mu_ ABSL_ACQUIRED_AFTER(mu_);
  std::map<uint64_t, berth::v1::Event> events_ ABSL_GUARDED_BY(disk_mu_);
  std::map<std::string, std::vector<Decision>> decisions_
      ABSL_GUARDED_BY(disk_mu_);
  int fail_writes_ ABSL_GUARDED_BY(disk_mu_) = 0;
  absl::Status fail_status_ ABSL_GUARDED_BY(disk_mu_);
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_MEMORY_STORE_H_
