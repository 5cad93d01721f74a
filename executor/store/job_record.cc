#include "executor/store/job_record.h"

#include <cstring>
#include <utility>

#include "executor/store/store_util.h"
#include "planner/convert/convert.h"

namespace berth {
namespace {

constexpr unsigned char kMaxStopIntent = static_cast<unsigned char>(StopIntent::kRequeue);

}  // namespace

StoredRecord::StoredRecord(const StoredJob& job) { DecodeFields(nullptr, job); }

StoredRecord::StoredRecord(absl::string_view value, const StoredJob& job) {
  DecodeFields(&value, job);
}

bool StoredRecord::ParseValue(absl::string_view value, StoredJob* job) {
  if (value.empty() || static_cast<unsigned char>(value[0]) > kMaxStopIntent) return false;
  if (!job->job.ParseFromArray(value.data() + 1, static_cast<int>(value.size() - 1))) {
    return false;
  }
  job->stop_intent = static_cast<StopIntent>(value[0]);
  return true;
}

int64_t StoredRecord::effective_memory_bytes() const {
  return planner::EffectiveMemoryBytes(memory_bytes_, raised_memory_bytes_);
}

StoredJob StoredRecord::Decode() const {
  StoredJob job;
  // value() was encoded by this process or read back and parsed by
  // ParseValue: it parses.
  (void)ParseValue(value(), &job);
  return job;
}

void StoredRecord::DecodeFields(const absl::string_view* value, const StoredJob& stored) {
  const berth::v1::Job& job = stored.job;
  const berth::v1::JobSpec& spec = job.spec();
  // The value: as given, or encoded here straight into bytes_ (one byte of
  // stop intent, then the job). Protobuf bounds a message below 2 GiB, so
  // every offset fits 32 bits.
  const size_t value_size = value != nullptr ? value->size() : 1 + job.ByteSizeLong();
  const absl::string_view strings[] = {spec.id(), spec.workspace(), spec.pool(), job.node()};
  uint32_t* const ends[] = {&id_end_, &workspace_end_, &pool_end_, &node_end_};
  size_t total = value_size;
  for (absl::string_view p : strings) total += p.size();
  bytes_.reset(new char[total]);  // no zeroing: every byte is written below
  char* const out = bytes_.get();
  if (value != nullptr) {
    std::memcpy(out, value->data(), value_size);
  } else {
    out[0] = static_cast<char>(stored.stop_intent);
    // ByteSizeLong() above cached the sizes this serialization reads.
    job.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(out + 1));
  }
  size_t at = value_size;
  value_end_ = static_cast<uint32_t>(at);
  for (size_t k = 0; k < 4; ++k) {
    std::memcpy(out + at, strings[k].data(), strings[k].size());
    at += strings[k].size();
    *ends[k] = static_cast<uint32_t>(at);
  }
  depends_on_.assign(spec.depends_on().begin(), spec.depends_on().end());
  // Without created_at, the job dates from when Berth first queued it (its
  // FIFO place and its age for aging), never from 1970.
  created_at_ = planner::PlanningCreatedAt(job);
  queued_at_ = job.has_queued_at() ? planner::FromProto(job.queued_at()) : absl::UnixEpoch();
  expected_duration_ = spec.has_expected_duration()
                           ? planner::FromProto(spec.expected_duration())
                           : absl::ZeroDuration();
  if (job.has_admitted_at()) {
    active_since_ = planner::FromProto(job.admitted_at());
  } else if (job.has_started_at()) {
    active_since_ = planner::FromProto(job.started_at());
  } else {
    active_since_ = absl::InfiniteFuture();
  }
  finished_at_ = FromProtoTime(job.finished_at());
  cpu_millis_ = spec.resources().cpu_millis();
  memory_bytes_ = spec.resources().memory_bytes();
  raised_memory_bytes_ = job.raised_memory_bytes();
  priority_ = spec.priority();
  state_ = job.state();
  stop_intent_ = stored.stop_intent;
}

}  // namespace berth
