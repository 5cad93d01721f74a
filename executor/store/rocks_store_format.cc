// Encoding of RocksStore's keys and records, and its error conversions.
#include "executor/store/rocks_store_format.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "rocksdb/db.h"

namespace berth {
namespace rocks_format {

absl::Status FromRocks(const rocksdb::Status& s, absl::string_view context) {
  if (s.ok()) return absl::OkStatus();
  const std::string msg = absl::StrCat(context, ": ", s.ToString());
  switch (s.code()) {
    case rocksdb::Status::kNotFound:
      return absl::NotFoundError(msg);
    case rocksdb::Status::kCorruption:
      return absl::DataLossError(msg);
    case rocksdb::Status::kNotSupported:
      return absl::UnimplementedError(msg);
    case rocksdb::Status::kInvalidArgument:
      return absl::InvalidArgumentError(msg);
    case rocksdb::Status::kIOError:
      if (s.IsNoSpace()) return absl::ResourceExhaustedError(msg);
      if (s.IsPathNotFound()) return absl::NotFoundError(msg);
      if (msg.find("Permission denied") != std::string::npos ||
          msg.find("Read-only file system") != std::string::npos) {
        return absl::PermissionDeniedError(msg);
      }
      return absl::UnavailableError(msg);
    case rocksdb::Status::kBusy:
    case rocksdb::Status::kTryAgain:
    case rocksdb::Status::kShutdownInProgress:
      return absl::UnavailableError(msg);
    case rocksdb::Status::kTimedOut:
    case rocksdb::Status::kExpired:
      return absl::DeadlineExceededError(msg);
    case rocksdb::Status::kAborted:
      return absl::AbortedError(msg);
    default:
      return absl::InternalError(msg);
  }
}

absl::Status FromErrorCode(const std::error_code& ec, absl::string_view what) {
  const std::string msg = absl::StrCat(what, ": ", ec.message());
  if (ec == std::errc::permission_denied ||
      ec == std::errc::read_only_file_system) {
    return absl::PermissionDeniedError(msg);
  }
  if (ec == std::errc::no_space_on_device) {
    return absl::ResourceExhaustedError(msg);
  }
  return absl::UnavailableError(msg);
}

std::string RevisionKey(uint64_t rev) {
  std::string k(8, '\0');
  for (int i = 7; i >= 0; --i) {
    k[i] = static_cast<char>(rev & 0xff);
    rev >>= 8;
  }
  return k;
}

uint64_t DecodeRevision(const rocksdb::Slice& k) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8 && i < k.size(); ++i) {
    v = (v << 8) | static_cast<unsigned char>(k[i]);
  }
  return v;
}

std::string DecisionKey(const std::string& job_id, uint64_t seq) {
  return absl::StrCat(job_id, std::string(1, '\0'), RevisionKey(seq));
}

berth::store::MetaRecord ToRecord(const StoreMeta& m) {
  berth::store::MetaRecord r;
  r.set_last_generation(m.last_generation);
  r.set_snapshot_digest(m.snapshot_digest);
  r.set_snapshot_digest_version(m.snapshot_digest_version);
  r.set_requeue_oom_once(m.requeue_oom_once);
  r.set_revision(m.revision);
  r.set_oldest_revision(m.oldest_revision);
  r.set_last_decision_sequence(m.last_decision_sequence);
  if (m.budgets) {
    r.set_has_budgets(true);
    r.set_budgets(m.budgets->SerializeAsString());
  }
  r.set_paused(m.paused);
  r.set_pause_reason(m.pause_reason);
  for (const auto& p : m.pools_in_maintenance) r.add_pools_in_maintenance(p);
  for (const auto& [pool, reason] : m.maintenance_reasons) {
    if (!reason.empty()) (*r.mutable_maintenance_reasons())[pool] = reason;
  }
  return r;
}

absl::StatusOr<StoreMeta> FromRecord(const berth::store::MetaRecord& r) {
  StoreMeta m;
  m.last_generation = r.last_generation();
  m.snapshot_digest = r.snapshot_digest();
  m.snapshot_digest_version = r.snapshot_digest_version();
  m.requeue_oom_once = r.requeue_oom_once();
  m.revision = r.revision();
  m.oldest_revision = r.oldest_revision();
  m.last_decision_sequence = r.last_decision_sequence();
  if (r.has_budgets()) {
    v1::Budgets b;
    if (!b.ParseFromString(r.budgets())) {
      return absl::DataLossError("meta record: corrupt budgets");
    }
    m.budgets = std::move(b);
  }
  m.paused = r.paused();
  m.pause_reason = r.pause_reason();
  m.pools_in_maintenance.insert(r.pools_in_maintenance().begin(),
                                r.pools_in_maintenance().end());
  for (const auto& [pool, reason] : r.maintenance_reasons()) {
    if (m.pools_in_maintenance.count(pool) > 0) m.maintenance_reasons[pool] = reason;
  }
  return m;
}

const std::vector<std::string>& Families() {
  static const auto* names = new std::vector<std::string>{
      rocksdb::kDefaultColumnFamilyName, kJobsCf, kEventsCf, kDecisionsCf, kMetaCf, kUsageCf};
  return *names;
}

store::UsageHistoryRecord ToRecord(const UsageHistory& h) {
  store::UsageHistoryRecord r;
  r.set_workspace(h.workspace);
  r.set_action(h.action);
  for (const UsageRun& u : h.runs) {
    store::UsageRunRecord* ur = r.add_runs();
    ur->set_peak_memory_bytes(u.peak_memory_bytes);
    ur->set_peak_exact(u.peak_exact);
    ur->set_cpu_seconds(u.cpu_seconds);
    ur->set_run_micros(absl::ToInt64Microseconds(u.run_time));
    ur->set_finished_unix_micros(absl::ToUnixMicros(u.finished));
    ur->set_state(u.state);
    ur->set_failure_cause(u.failure_cause);
    ur->set_asked_memory_bytes(u.asked_memory_bytes);
    ur->set_asked_cpu_millis(u.asked_cpu_millis);
    ur->set_asked_duration_micros(absl::ToInt64Microseconds(u.asked_duration));
  }
  return r;
}

UsageHistory FromRecord(const store::UsageHistoryRecord& r) {
  UsageHistory h;
  h.workspace = r.workspace();
  h.action = r.action();
  for (const store::UsageRunRecord& ur : r.runs()) {
    UsageRun u;
    u.peak_memory_bytes = ur.peak_memory_bytes();
    u.peak_exact = ur.peak_exact();
    u.cpu_seconds = ur.cpu_seconds();
    u.run_time = absl::Microseconds(ur.run_micros());
    u.finished = absl::FromUnixMicros(ur.finished_unix_micros());
    u.state = v1::JobState_IsValid(ur.state()) ? static_cast<v1::JobState>(ur.state())
                                                : v1::JOB_STATE_UNSPECIFIED;
    u.failure_cause = v1::FailureCause_IsValid(ur.failure_cause())
                          ? static_cast<v1::FailureCause>(ur.failure_cause())
                          : v1::FAILURE_CAUSE_UNSPECIFIED;
    u.asked_memory_bytes = ur.asked_memory_bytes();
    u.asked_cpu_millis = ur.asked_cpu_millis();
    u.asked_duration = absl::Microseconds(ur.asked_duration_micros());
    h.runs.push_back(u);
  }
  return h;
}

}  // namespace rocks_format
}  // namespace berth
