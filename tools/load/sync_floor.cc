#include "tools/load/sync_floor.h"

#include <sys/resource.h>

#include <filesystem>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "berth/v1/job.pb.h"
#include "rocksdb/db.h"
#include "rocksdb/iterator.h"
#include "rocksdb/options.h"
#include "rocksdb/write_batch.h"

namespace berth {
namespace {

// The process's CPU time (every thread, RocksDB's included).
absl::Duration ProcessCpu() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return absl::DurationFromTimeval(u.ru_utime) + absl::DurationFromTimeval(u.ru_stime);
}

// A job's stored record as berthd writes it when the job is new: one byte
// of stop intent (none), then the berth.v1.Job.
void AppendRecord(const v1::JobSpec& spec, const google::protobuf::Timestamp& queued_at,
                  uint64_t generation, v1::Job& job, std::string& out) {
  out.assign(1, '\0');
  *job.mutable_spec() = spec;
  job.set_state(v1::JOB_STATE_QUEUED);
  *job.mutable_queued_at() = queued_at;
  job.set_last_seen_generation(generation);
  job.AppendToString(&out);
}

absl::Status Rocks(const rocksdb::Status& s, const std::string& what) {
  if (s.ok()) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat("sync floor: ", what, ": ", s.ToString()));
}

}  // namespace

absl::StatusOr<SyncFloor> MeasureSyncFloor(const std::vector<v1::SyncSnapshotRequest>& messages,
                                           const std::string& dir) {
  // The wire bytes, as berthd receives them (made before the clock starts).
  std::vector<std::string> wire;
  wire.reserve(messages.size());
  for (const v1::SyncSnapshotRequest& m : messages) wire.push_back(m.SerializeAsString());
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("sync floor: mkdir ", dir, ": ", ec.message()));

  google::protobuf::Timestamp now;
  now.set_seconds(absl::ToUnixSeconds(absl::Now()));
  SyncFloor f;
  absl::flat_hash_map<std::string, std::string> written;  // id -> record
  {
    const absl::Duration cpu0 = ProcessCpu();
    rocksdb::Options options;
    options.create_if_missing = true;
    rocksdb::DB* raw = nullptr;
    if (absl::Status s = Rocks(rocksdb::DB::Open(options, dir + "/db", &raw), "open"); !s.ok()) {
      return s;
    }
    std::unique_ptr<rocksdb::DB> db(raw);
    uint64_t generation = 0;
    v1::SyncSnapshotRequest m;
    v1::Job job;
    std::string record;
    for (size_t k = 0; k < wire.size(); ++k) {
      if (!m.ParseFromString(wire[k])) {
        return absl::InvalidArgumentError(absl::StrCat("sync floor: message ", k, " does not parse"));
      }
      if (m.has_header()) generation = m.header().generation();
      if (!m.has_batch()) continue;
      rocksdb::WriteBatch batch;
      for (const v1::JobSpec& spec : m.batch().jobs()) {
        AppendRecord(spec, now, generation, job, record);
        batch.Put(spec.id(), record);
        ++f.written;
      }
      rocksdb::WriteOptions wo;
      wo.sync = k + 1 >= wire.size() || !messages[k + 1].has_batch();
      if (absl::Status s = Rocks(db->Write(wo, &batch), "write"); !s.ok()) return s;
    }
    f.first_cpu = ProcessCpu() - cpu0;
    // What was written, read back outside the measurement: the state an
    // unchanged re-sync compares with.
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      written.emplace(it->key().ToString(), it->value().ToString());
    }
    if (absl::Status s = Rocks(it->status(), "read back"); !s.ok()) return s;
  }
  {
    const absl::Duration cpu0 = ProcessCpu();
    uint64_t generation = 0;
    v1::SyncSnapshotRequest m;
    v1::Job job;
    std::string record;
    for (size_t k = 0; k < wire.size(); ++k) {
      if (!m.ParseFromString(wire[k])) {
        return absl::InvalidArgumentError(absl::StrCat("sync floor: message ", k, " does not parse"));
      }
      if (m.has_header()) generation = m.header().generation();
      for (const v1::JobSpec& spec : m.batch().jobs()) {
        AppendRecord(spec, now, generation, job, record);
        auto it = written.find(spec.id());
        if (it != written.end() && it->second == record) ++f.unchanged;
      }
    }
    f.unchanged_cpu = ProcessCpu() - cpu0;
  }
  std::filesystem::remove_all(dir, ec);
  return f;
}

}  // namespace berth
