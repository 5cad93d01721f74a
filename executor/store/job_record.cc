#include "executor/store/job_record.h"

#include <utility>

#include "executor/store/store_util.h"
#include "planner/convert/convert.h"

namespace berth {
namespace {

constexpr unsigned char kMaxStopIntent = static_cast<unsigned char>(StopIntent::kRequeue);

std::string Encode(const StoredJob& job) {
  std::string value(1, static_cast<char>(job.stop_intent));
  job.job.AppendToString(&value);
  return value;
}

}  // namespace

StoredRecord::StoredRecord(const StoredJob& job) : value_(Encode(job)) {
  DecodeFields(job);
}

StoredRecord::StoredRecord(std::string value, const StoredJob& job)
    : value_(std::move(value)) {
  DecodeFields(job);
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
  // value_ was encoded by this process or read back and parsed by
  // ParseValue: it parses.
  (void)ParseValue(value_, &job);
  return job;
}

void StoredRecord::DecodeFields(const StoredJob& stored) {
  const berth::v1::Job& job = stored.job;
  const berth::v1::JobSpec& spec = job.spec();
  id_ = spec.id();
  workspace_ = spec.workspace();
  pool_ = spec.pool();
  node_ = job.node();
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
