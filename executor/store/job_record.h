// StoredJob, a job as the store keeps it decoded, and StoredRecord, the
// compact form the store holds in memory and shares with readers.
//
// A StoredRecord keeps the job's persisted bytes (one byte of StopIntent,
// then the serialized berth.v1.Job: exactly what RocksStore writes) and,
// decoded once, the few fields that the store's indexes and diff, the
// planner's input (executor/reconcile/plan_snapshot.cc) and compaction read
// for every job. Everything else is read through Decode(), a parse. The
// persisted bytes and the decoded strings share one allocation, and the
// object itself holds no std::string: about 0.3 KiB a job with its bytes
// (a typical job's record fits jemalloc's 192-byte class, its bytes the
// 128-byte one) instead of ~1 KiB of protobuf objects, which is what lets a
// million jobs stay resident.
//
// Thread-safety: a StoredRecord is immutable; share it as a JobRecord.
#ifndef BERTH_EXECUTOR_STORE_JOB_RECORD_H_
#define BERTH_EXECUTOR_STORE_JOB_RECORD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "berth/v1/job.pb.h"
#include "executor/runtime/stop_intent.h"

namespace berth {

// A job as stored: the API view plus Berth-internal fields.
struct StoredJob {
  // job.revision is the revision of the job's last state/spec event.
  // job.last_seen_generation is the generation that last wrote the record
  // (added or updated it); unchanged re-syncs do not rewrite jobs.
  berth::v1::Job job;
  StopIntent stop_intent = StopIntent::kNone;
};

class StoredRecord {
 public:
  // The record of `job`: serializes it once.
  explicit StoredRecord(const StoredJob& job);
  // The record of a persisted `value` whose decoding is `job`
  // (ParseValue): the bytes are kept as they are (copied into the record's
  // one allocation; the caller's buffer may go once this returns).
  StoredRecord(absl::string_view value, const StoredJob& job);

  StoredRecord(StoredRecord&&) = default;
  StoredRecord& operator=(StoredRecord&&) = default;
  StoredRecord(const StoredRecord&) = delete;
  StoredRecord& operator=(const StoredRecord&) = delete;

  // Decodes a persisted value into `job`; false if it is not one.
  static bool ParseValue(absl::string_view value, StoredJob* job);

  // The whole job: a parse of value() (about a microsecond). For the paths
  // that read or change one job, not for scans of every job.
  StoredJob Decode() const;
  // The persisted form (RocksStore writes it as the job's value).
  absl::string_view value() const { return View(0, value_end_); }

  // The string views below (and value()) live as long as the record.
  absl::string_view id() const { return View(value_end_, id_end_); }
  berth::v1::JobState state() const { return state_; }
  StopIntent stop_intent() const { return stop_intent_; }
  absl::string_view workspace() const { return View(id_end_, workspace_end_); }
  // spec.pool as given: empty means the default pool.
  absl::string_view pool() const { return View(workspace_end_, pool_end_); }
  // Job.node: where it was placed (multi-node), else empty.
  absl::string_view node() const { return View(pool_end_, node_end_); }
  int32_t priority() const { return priority_; }
  int64_t cpu_millis() const { return cpu_millis_; }
  // spec.resources.memory_bytes, as asked.
  int64_t memory_bytes() const { return memory_bytes_; }
  int64_t raised_memory_bytes() const { return raised_memory_bytes_; }
  // What the job reserves: the larger of its estimate and a raise
  // (planner::EffectiveMemoryBytes).
  int64_t effective_memory_bytes() const;
  const std::vector<std::string>& depends_on() const { return depends_on_; }
  // spec.created_at as the planner reads it (planner::FromProto); when
  // absent, job.queued_at (when Berth first queued it), else the Unix epoch.
  absl::Time created_at() const { return created_at_; }
  // Job.queued_at as the planner reads it (the Unix epoch when absent): when
  // Berth queued the job (again, after a requeue), what aging counts its
  // wait from.
  absl::Time queued_at() const { return queued_at_; }
  // spec.expected_duration as the planner reads it (zero when absent).
  absl::Duration expected_duration() const { return expected_duration_; }
  // admitted_at if set, else started_at if set (planner::FromProto), else
  // absl::InfiniteFuture(): where an active job's capacity is dated from.
  absl::Time active_since() const { return active_since_; }
  // finished_at (the Unix epoch when absent).
  absl::Time finished_at() const { return finished_at_; }

 private:
  // Fills bytes_ with `value` (null: job's encoding) and job's strings,
  // then the other fields from `job`.
  void DecodeFields(const absl::string_view* value, const StoredJob& job);
  absl::string_view View(uint32_t begin, uint32_t end) const {
    return absl::string_view(bytes_.get() + begin, end - begin);
  }

  // The persisted value, then id, workspace, pool and node, back to back;
  // each *_end_ is where one ends (and the next begins).
  std::unique_ptr<char[]> bytes_;
  uint32_t value_end_ = 0;
  uint32_t id_end_ = 0;
  uint32_t workspace_end_ = 0;
  uint32_t pool_end_ = 0;
  uint32_t node_end_ = 0;
  int32_t priority_ = 0;
  berth::v1::JobState state_ = berth::v1::JOB_STATE_UNSPECIFIED;
  StopIntent stop_intent_ = StopIntent::kNone;
  std::vector<std::string> depends_on_;
  absl::Time created_at_;
  absl::Time queued_at_;
  absl::Time active_since_;
  absl::Time finished_at_;
  absl::Duration expected_duration_;
  int64_t cpu_millis_ = 0;
  int64_t memory_bytes_ = 0;
  int64_t raised_memory_bytes_ = 0;
};

// A published job record. The store never modifies a record it has handed
// out: a change publishes a new record and drops its reference to the old
// one, so a JobRecord stays valid and unchanged for as long as it is held.
using JobRecord = std::shared_ptr<const StoredRecord>;

}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_JOB_RECORD_H_
