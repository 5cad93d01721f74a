// Encoding of RocksStore's keys and records, and its error conversions.
#include "executor/store/rocks_store_format.h"

#include <utility>

#include "absl/strings/str_cat.h"

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

}  // namespace rocks_format
}  // namespace berth
