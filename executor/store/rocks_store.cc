#include "executor/store/rocks_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "executor/store/rocks_store_format.h"
#include "executor/store/rocks_store_handles.h"
#include "executor/store/rocks_store_write_gate.h"
#include "executor/store/store.pb.h"
#include "executor/store/store_util.h"
#include "rocksdb/db.h"
#include "rocksdb/memtablerep.h"
#include "rocksdb/options.h"
#include "rocksdb/write_batch.h"
#include "planner/base/status_macros.h"

namespace berth {

namespace fs = std::filesystem;
using rocks_format::DecisionKey;
using rocks_format::DecodeRevision;
using rocks_format::FromErrorCode;
using rocks_format::FromRocks;
using rocks_format::kStateKey;
using rocks_format::RevisionKey;
using rocks_format::ToRecord;

RocksStore::RocksStore(const RocksStoreOptions& options, std::string dir,
                       std::unique_ptr<Handles> handles, std::shared_ptr<WriteGate> gate)
    : StoreCore(options.retention, options.sync_writes),
      dir_(std::move(dir)),
      h_(std::move(handles)),
      gate_(std::move(gate)),
      memtable_budget_bytes_(static_cast<size_t>(options.memtable_budget_bytes)) {}

absl::Status RocksStore::WriteHealth() const { return gate_->Check(); }

size_t RocksStore::BatchBytes(const ChangeSet& c) {
  // Per record: a tag byte, a column family id and two lengths (varints),
  // at most 16 bytes; keys of events are 8 bytes. The rest (decisions, meta,
  // usage) is small; the batch grows past the estimate if need be.
  constexpr size_t kRecordOverhead = 16;
  size_t bytes = size_t{1} << 12;
  for (const PutJob& j : c.put_jobs) {
    bytes += j.record->id().size() + j.record->value().size() + kRecordOverhead;
  }
  bytes += c.events.byte_size() + c.events.size() * (8 + kRecordOverhead);
  return bytes;
}

RocksStore::~RocksStore() {
  stop_loading_ = true;
  if (loader_.joinable()) loader_.join();
  gate_->Stop();
  // Best effort: only speeds up Open. Never after an I/O error: a flush
  // would write to the log file that failed (write_gate.h).
  if (!gate_->Check().ok()) return;
  rocksdb::FlushOptions fo;
  (void)h_->db->Flush(fo, h_->cfs);
}

RocksStore::Handles::~Handles() {
  if (db == nullptr) return;
  for (auto* cf : cfs) (void)db->DestroyColumnFamilyHandle(cf);
  (void)db->Close();
}

absl::Status RocksStore::Persist(const ChangeSet& c) {
  RETURN_IF_ERROR(gate_->Check());
  rocksdb::WriteBatch b(BatchBytes(c));
  std::string buf;
  for (const PutJob& j : c.put_jobs) {
    const absl::string_view id = j.record->id(), value = j.record->value();
    b.Put(h_->jobs, rocksdb::Slice(id.data(), id.size()),
          rocksdb::Slice(value.data(), value.size()));
  }
  for (const std::string& id : c.delete_jobs) {
    b.Delete(h_->jobs, id);
    b.DeleteRange(h_->decisions, absl::StrCat(id, std::string(1, '\0')),
                  absl::StrCat(id, std::string(1, '\1')));
  }
  if (c.delete_events_before > 0) {
    // From RevisionKey(0): a key outside EventInsertHint's domain
    // (rocks_store_open.cc), which this range's insert must not share.
    b.DeleteRange(h_->events, RevisionKey(0),
                  RevisionKey(c.delete_events_before));
  }
  for (size_t i = 0; i < c.events.size(); ++i) {
    const absl::string_view e = c.events.bytes(i);
    b.Put(h_->events, RevisionKey(c.events.revision(i)), rocksdb::Slice(e.data(), e.size()));
  }
  store::DecisionRecord dr;
  for (const Decision& d : c.decisions) {
    dr.set_sequence(d.sequence);
    dr.set_job_id(d.job_id);
    dr.set_kind(static_cast<int32_t>(d.kind));
    dr.set_reason(d.reason);
    dr.set_plan_generation(d.plan_generation);
    dr.set_time_unix_micros(absl::ToUnixMicros(d.time));
    dr.set_revision(d.revision);
    dr.set_requeue_cause(static_cast<int32_t>(d.requeue_cause));
    dr.SerializeToString(&buf);
    b.Put(h_->decisions, DecisionKey(d.job_id, d.sequence), buf);
  }
  ToRecord(c.meta).SerializeToString(&buf);
  b.Put(h_->meta, kStateKey, buf);
  for (const std::string& key : c.delete_usage) b.Delete(h_->usage, key);
  for (const UsageHistory& h : c.put_usage) {
    ToRecord(h).SerializeToString(&buf);
    b.Put(h_->usage, UsageKey(h.workspace, h.action), buf);
  }
  rocksdb::WriteOptions wo;
  wo.sync = c.sync;
  const rocksdb::Status s = h_->db->Write(wo, &b);
  if (s.IsIOError()) gate_->Fail(FromRocks(s, "writing to store"));
  RETURN_IF_ERROR(FromRocks(s, "writing to store"));
  if (b.GetDataSize() > memtable_budget_bytes_) {
    // A write beyond the memtable budget (a first sync of many jobs) fills
    // memtables of its size, which RocksDB would flush in the background
    // while the writer publishes the jobs and berthd plans them: the
    // memtables and the plan's state would be resident at once. Flushing
    // here frees them first. The write is durable already (WAL, synced as
    // asked): a flush that fails changes nothing of it, and RocksDB's own
    // error handling (the write gate) takes over, so its status is not this
    // write's.
    b = rocksdb::WriteBatch();  // its bytes too, first
    rocksdb::FlushOptions fo;
    fo.wait = true;
    (void)h_->db->Flush(fo, h_->cfs);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::Event>> RocksStore::LoadEvents(uint64_t first,
                                                              int max) const {
  std::vector<v1::Event> out;
  std::unique_ptr<rocksdb::Iterator> it(
      h_->db->NewIterator(rocksdb::ReadOptions(), h_->events));
  for (it->Seek(RevisionKey(first));
       it->Valid() && static_cast<int>(out.size()) < max; it->Next()) {
    v1::Event e;
    if (!e.ParseFromArray(it->value().data(),
                          static_cast<int>(it->value().size()))) {
      return absl::DataLossError(absl::StrCat("corrupt event at revision ",
                                              DecodeRevision(it->key())));
    }
    out.push_back(std::move(e));
  }
  RETURN_IF_ERROR(FromRocks(it->status(), "reading events"));
  return out;
}

absl::StatusOr<std::vector<Decision>> RocksStore::LoadDecisions(
    const std::string& job_id) const {
  std::vector<Decision> out;
  const std::string prefix = absl::StrCat(job_id, std::string(1, '\0'));
  std::unique_ptr<rocksdb::Iterator> it(
      h_->db->NewIterator(rocksdb::ReadOptions(), h_->decisions));
  store::DecisionRecord dr;
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix);
       it->Next()) {
    if (!dr.ParseFromArray(it->value().data(),
                           static_cast<int>(it->value().size()))) {
      return absl::DataLossError(
          absl::StrCat("corrupt decision record of job '", job_id, "'"));
    }
    Decision d;
    d.sequence = dr.sequence();
    d.job_id = dr.job_id();
    d.kind = static_cast<DecisionKind>(dr.kind());
    d.reason = dr.reason();
    d.plan_generation = dr.plan_generation();
    d.time = absl::FromUnixMicros(dr.time_unix_micros());
    d.revision = dr.revision();
    d.requeue_cause = static_cast<v1::RequeueCause>(dr.requeue_cause());
    out.push_back(std::move(d));
  }
  RETURN_IF_ERROR(FromRocks(it->status(), "reading decisions"));
  return out;
}

absl::StatusOr<uint64_t> RocksStore::DiskUsageBytes() const {
  std::error_code ec;
  uint64_t total = 0;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    if (entry.is_regular_file(ec)) total += entry.file_size(ec);
  }
  if (ec) return FromErrorCode(ec, "measuring store size");
  return total;
}

}  // namespace berth
