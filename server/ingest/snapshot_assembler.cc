#include "server/ingest/snapshot_assembler.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/store/spec_fingerprint.h"
#include "planner/base/status_macros.h"

namespace berth {
namespace {

constexpr size_t kIndexPrefetchDistance = 8;

}  // namespace

absl::Status SnapshotAssembler::Fail(absl::Status status) {
  error_ = status;
  snapshot_.jobs.clear();
  snapshot_.fingerprints.clear();
  snapshot_.unchanged.clear();
  snapshot_.index.clear();
  kept_positions_.clear();
  dropped_positions_.clear();
  return status;
}

uint32_t SnapshotAssembler::PositionOf(uint32_t index_value) const {
  if ((index_value & kUnkeptJob) != 0) return dropped_positions_[index_value & ~kUnkeptJob];
  return kept_positions_[index_value];
}

absl::Status SnapshotAssembler::AddBatch(google::protobuf::RepeatedPtrField<v1::JobSpec>& jobs) {
  const size_t n = static_cast<size_t>(jobs.size());
  batch_fingerprints_.clear();
  for (const v1::JobSpec& job : jobs) {
    batch_fingerprints_.push_back(SpecFingerprint(job));
    digest_.Add(batch_fingerprints_.back());
  }
  if (filter_ != nullptr) {
    filter_->Filter(jobs, batch_fingerprints_, &drop_);
  } else {
    drop_.assign(n, false);
  }
  for (size_t k = 0; k < n; ++k) {
    // The index holds up to a million ids: ask for a later id's slot early,
    // or every insert waits for memory.
    if (k + kIndexPrefetchDistance < n) {
      snapshot_.index.prefetch(jobs[static_cast<int>(k + kIndexPrefetchDistance)].id());
    }
    v1::JobSpec& job = jobs[static_cast<int>(k)];
    const uint32_t position = static_cast<uint32_t>(snapshot_.size());
    // The index views the id string where it stays: in the kept spec (moved
    // first) or in `unchanged` (reserved for the whole stream at the header,
    // so never reallocated).
    const std::string* id = nullptr;
    uint32_t value = 0;
    if (drop_[k]) {
      value = kUnkeptJob | static_cast<uint32_t>(snapshot_.unchanged.size());
      id = &snapshot_.unchanged
                .emplace_back(UnchangedJob{std::move(*job.mutable_id()), batch_fingerprints_[k]})
                .id;
      dropped_positions_.push_back(position);
    } else {
      value = static_cast<uint32_t>(snapshot_.jobs.size());
      id = &snapshot_.jobs.emplace_back(std::move(job)).id();
      snapshot_.fingerprints.push_back(batch_fingerprints_[k]);
      kept_positions_.push_back(position);
    }
    // An empty or over-long id is that job's problem (REJECTED with
    // INVALID_ID, never stored), not the stream's.
    if (!id->empty() && id->size() <= kMaxStoredIdBytes) {
      auto [it, inserted] = snapshot_.index.emplace(*id, value);
      if (!inserted) {
        return Fail(absl::InvalidArgumentError(
            absl::StrCat("jobs[", position, "].id: job id '", *id, "' repeats jobs[",
                         PositionOf(it->second), "]; ids must be unique")));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status SnapshotAssembler::Add(v1::SyncSnapshotRequest& request) {
  if (!error_.ok()) return error_;
  switch (request.part_case()) {
    case v1::SyncSnapshotRequest::kHeader: {
      if (phase_ != Phase::kHeader) {
        return Fail(absl::InvalidArgumentError(
            "header: received a second header; a stream has exactly one, first"));
      }
      const v1::SnapshotHeader& h = request.header();
      if (h.generation() == 0) {
        return Fail(absl::InvalidArgumentError(
            "header.generation: must be >= 1"));
      }
      if (h.expected_job_count() > max_jobs_) {
        return Fail(absl::ResourceExhaustedError(absl::StrCat(
            "header.expected_job_count: ", h.expected_job_count(),
            " jobs exceeds this server's limit of ", max_jobs_,
            " jobs per snapshot (berthd --max_snapshot_jobs); nothing was read or applied")));
      }
      snapshot_.generation = h.generation();
      snapshot_.allow_mass_cancel = h.allow_mass_cancel();
      snapshot_.fill_memory_from_history = h.fill_memory_from_history();
      snapshot_.requeue_oom_once = h.requeue_oom_once();
      expected_ = h.expected_job_count();
      // Index values keep their top bit for kUnkeptJob.
      if (expected_ >= kUnkeptJob) {
        return Fail(absl::ResourceExhaustedError(absl::StrCat(
            "header.expected_job_count: ", expected_, " jobs; at most ", kUnkeptJob - 1,
            " fit in one snapshot")));
      }
      // Reserved only where pages are touched as they fill: the specs
      // (kept ones) and `unchanged` (its strings must not move).
      snapshot_.jobs.reserve(expected_);
      if (filter_ != nullptr) {
        snapshot_.unchanged.reserve(expected_);
        filter_->Begin(snapshot_.generation);
      }
      snapshot_.index.reserve(expected_);
      phase_ = Phase::kBatches;
      return absl::OkStatus();
    }
    case v1::SyncSnapshotRequest::kBatch: {
      if (phase_ == Phase::kHeader) {
        return Fail(absl::InvalidArgumentError(
            "batch: received before the header; send the header first"));
      }
      if (phase_ == Phase::kEnded) {
        return Fail(absl::InvalidArgumentError("batch: received after the end"));
      }
      auto* jobs = request.mutable_batch()->mutable_jobs();
      if (snapshot_.size() + static_cast<size_t>(jobs->size()) > expected_) {
        return Fail(absl::InvalidArgumentError(absl::StrCat(
            "batch: more jobs than header.expected_job_count (", expected_,
            ")")));
      }
      return AddBatch(*jobs);
    }
    case v1::SyncSnapshotRequest::kEnd: {
      if (phase_ == Phase::kHeader) {
        return Fail(absl::InvalidArgumentError(
            "end: received before the header"));
      }
      if (phase_ == Phase::kEnded) {
        return Fail(absl::InvalidArgumentError("end: received twice"));
      }
      // Blame the count that disagrees with what arrived.
      const uint64_t count = request.end().job_count();
      const uint64_t received = snapshot_.size();
      if (count == received && expected_ != received) {
        return Fail(absl::InvalidArgumentError(absl::StrCat(
            "header.expected_job_count: ", expected_, " but ", received,
            " jobs were received (as end.job_count says)")));
      }
      if (count != received && expected_ == received) {
        return Fail(absl::InvalidArgumentError(absl::StrCat(
            "end.job_count: ", count, " but ", received,
            " jobs were received (as header.expected_job_count says)")));
      }
      if (count != received) {
        return Fail(absl::InvalidArgumentError(absl::StrCat(
            "end.job_count: ", count, " and header.expected_job_count: ", expected_, " but ",
            received, " jobs were received")));
      }
      phase_ = Phase::kEnded;
      return absl::OkStatus();
    }
    case v1::SyncSnapshotRequest::PART_NOT_SET:
      break;
  }
  return Fail(absl::InvalidArgumentError(
      "message has none of header, batch, end set"));
}

absl::StatusOr<ReceivedSnapshot> SnapshotAssembler::Finish() {
  if (!error_.ok()) return error_;
  if (phase_ != Phase::kEnded) {
    return Fail(absl::InvalidArgumentError(
        "stream ended before its end message (truncated snapshot); nothing "
        "was applied"));
  }
  snapshot_.digest = digest_.value();
  return std::move(snapshot_);
}

absl::StatusOr<ReceivedSnapshot> SnapshotAssembler::FromSnapshot(
    v1::Snapshot snapshot) {
  SnapshotAssembler assembler;
  v1::SyncSnapshotRequest header;
  header.mutable_header()->set_generation(snapshot.generation());
  header.mutable_header()->set_allow_mass_cancel(snapshot.allow_mass_cancel());
  header.mutable_header()->set_fill_memory_from_history(snapshot.fill_memory_from_history());
  header.mutable_header()->set_requeue_oom_once(snapshot.requeue_oom_once());
  header.mutable_header()->set_expected_job_count(snapshot.jobs_size());
  RETURN_IF_ERROR(assembler.Add(header));
  v1::SyncSnapshotRequest batch;
  batch.mutable_batch()->mutable_jobs()->Swap(snapshot.mutable_jobs());
  RETURN_IF_ERROR(assembler.Add(batch));
  v1::SyncSnapshotRequest end;
  end.mutable_end()->set_job_count(header.header().expected_job_count());
  RETURN_IF_ERROR(assembler.Add(end));
  return assembler.Finish();
}

}  // namespace berth
