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
using rocks_format::FromRecord;
using rocks_format::FromRocks;
using rocks_format::kDecisionsCf;
using rocks_format::kEventsCf;
using rocks_format::kJobsCf;
using rocks_format::kMetaCf;
using rocks_format::kSchemaKey;
using rocks_format::kStateKey;
using rocks_format::RevisionKey;
using rocks_format::ToRecord;

struct RocksStore::Handles {
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> cfs;  // owned; see ~RocksStore
  rocksdb::ColumnFamilyHandle* jobs = nullptr;
  rocksdb::ColumnFamilyHandle* events = nullptr;
  rocksdb::ColumnFamilyHandle* decisions = nullptr;
  rocksdb::ColumnFamilyHandle* meta = nullptr;
};

RocksStore::RocksStore(const RocksStoreOptions& options, std::string dir,
                       std::unique_ptr<Handles> handles)
    : StoreCore(options.retention, options.sync_writes),
      dir_(std::move(dir)),
      h_(std::move(handles)) {}

RocksStore::~RocksStore() {
  rocksdb::FlushOptions fo;
  (void)h_->db->Flush(fo, h_->cfs);  // best effort: only speeds up Open
  for (auto* cf : h_->cfs) (void)h_->db->DestroyColumnFamilyHandle(cf);
  (void)h_->db->Close();
}

namespace {

const std::vector<std::string>& OurFamilies() {
  static const auto* names =
      new std::vector<std::string>{rocksdb::kDefaultColumnFamilyName, kJobsCf,
                                   kEventsCf, kDecisionsCf, kMetaCf};
  return *names;
}

rocksdb::Options DbOptions(const RocksStoreOptions& options) {
  rocksdb::Options opts;
  opts.paranoid_checks = true;
  opts.max_open_files = 512;
  opts.allow_concurrent_memtable_write = false;  // vector memtable; one writer
  if (options.env != nullptr) opts.env = options.env;
  return opts;
}

// The jobs family is written in bulk (snapshots) and read only by Open, in
// one pass: a vector memtable inserts much faster than the skip list and
// sorts once when read or flushed. The others are read while written
// (events by watchers, decisions per job) and keep the skip list.
rocksdb::ColumnFamilyOptions FamilyOptions(const std::string& name,
                                           const rocksdb::Options& opts) {
  rocksdb::ColumnFamilyOptions cf(opts);
  if (name == kJobsCf) {
    cf.memtable_factory = std::make_shared<rocksdb::VectorRepFactory>();
  }
  return cf;
}

// Creates a complete, closed store in `tmp` (schema version and meta written
// and synced), to be renamed into place: a crash never leaves a half-created
// store where Open would find it.
absl::Status CreateStore(const std::string& tmp, rocksdb::Options opts) {
  opts.create_if_missing = true;
  opts.error_if_exists = true;
  opts.create_missing_column_families = true;
  std::vector<rocksdb::ColumnFamilyDescriptor> descs;
  for (const auto& n : OurFamilies()) {
    descs.emplace_back(n, FamilyOptions(n, opts));
  }
  std::vector<rocksdb::ColumnFamilyHandle*> cfs;
  rocksdb::DB* raw = nullptr;
  RETURN_IF_ERROR(FromRocks(rocksdb::DB::Open(opts, tmp, descs, &cfs, &raw),
                            absl::StrCat("creating store in '", tmp, "'")));
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::WriteBatch b;
  b.Put(cfs[4], kSchemaKey, std::to_string(kRocksStoreSchemaVersion));
  b.Put(cfs[4], kStateKey, ToRecord(StoreMeta()).SerializeAsString());
  rocksdb::WriteOptions wo;
  wo.sync = true;
  absl::Status st = FromRocks(db->Write(wo, &b), "initialising store");
  for (auto* cf : cfs) (void)db->DestroyColumnFamilyHandle(cf);
  if (st.ok()) st = FromRocks(db->Close(), "closing new store");
  return st;
}

// fsyncs a directory so that a rename in it is durable.
absl::Status SyncDir(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return FromErrorCode(std::error_code(errno, std::generic_category()),
                         absl::StrCat("opening '", dir.string(), "'"));
  }
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) {
    return FromErrorCode(std::error_code(err, std::generic_category()),
                         absl::StrCat("syncing '", dir.string(), "'"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<RocksStore>> RocksStore::Open(
    const std::string& dir, const RocksStoreOptions& options) {
  std::error_code ec;
  const fs::path target = fs::path(dir).lexically_normal();
  const bool exists = fs::exists(target, ec);
  if (ec) return FromErrorCode(ec, absl::StrCat("store directory '", dir, "'"));
  bool fresh = !exists;
  if (exists) {
    if (!fs::is_directory(target, ec)) {
      return absl::FailedPreconditionError(
          absl::StrCat("store path '", dir, "' is not a directory"));
    }
    fresh = fs::is_empty(target, ec);
    if (ec) {
      return FromErrorCode(ec, absl::StrCat("store directory '", dir, "'"));
    }
    if (!fresh && !fs::exists(target / "CURRENT", ec)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "'", dir,
          "' is not a Berth store: it is not empty and holds no RocksDB "
          "database; refusing to use it"));
    }
  }
  const rocksdb::Options opts = DbOptions(options);
  if (fresh) {
    // Build the store beside `dir`, then rename it into place.
    fs::path name = target.filename();
    if (name.empty()) name = target.parent_path().filename();
    const fs::path parent =
        target.has_parent_path() ? target.parent_path() : fs::path(".");
    const fs::path tmp = parent / ("." + name.string() + ".berth-init");
    fs::create_directories(parent, ec);
    if (ec) {
      return FromErrorCode(
          ec, absl::StrCat("cannot create store directory '", dir, "'"));
    }
    fs::remove_all(tmp, ec);  // left by a creation that was interrupted
    if (ec)
      return FromErrorCode(ec, absl::StrCat("removing '", tmp.string(), "'"));
    RETURN_IF_ERROR(CreateStore(tmp.string(), opts));
    if (exists) fs::remove(target, ec);  // the empty directory
    if (!ec) fs::rename(tmp, target, ec);
    if (ec) {
      return FromErrorCode(
          ec, absl::StrCat("moving the new store into '", dir, "'"));
    }
    RETURN_IF_ERROR(SyncDir(parent));
  }

  rocksdb::ColumnFamilyOptions cf_opts(opts);
  {
    std::vector<std::string> names;
    RETURN_IF_ERROR(
        FromRocks(rocksdb::DB::ListColumnFamilies(opts, dir, &names),
                  absl::StrCat("store '", dir, "': reading column families")));
    std::vector<std::string> a = names, b = OurFamilies();
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b) {
      // Either another RocksDB database or a damaged store whose MANIFEST no
      // longer lists our families: a read-only open tells them apart.
      std::vector<rocksdb::ColumnFamilyDescriptor> theirs;
      for (const auto& n : names) theirs.emplace_back(n, cf_opts);
      std::vector<rocksdb::ColumnFamilyHandle*> hs;
      rocksdb::DB* other = nullptr;
      RETURN_IF_ERROR(FromRocks(
          rocksdb::DB::OpenForReadOnly(opts, dir, theirs, &hs, &other),
          absl::StrCat("store '", dir, "'")));
      for (auto* cf : hs) (void)other->DestroyColumnFamilyHandle(cf);
      delete other;
      return absl::FailedPreconditionError(
          absl::StrCat("'", dir,
                       "' is a RocksDB database but not a Berth store (column "
                       "families: ",
                       absl::StrJoin(names, ", "), ")"));
    }
  }
  std::vector<rocksdb::ColumnFamilyDescriptor> descs;
  for (const auto& n : OurFamilies())
    descs.emplace_back(n, FamilyOptions(n, opts));
  auto h = std::make_unique<Handles>();
  rocksdb::DB* raw = nullptr;
  RETURN_IF_ERROR(FromRocks(rocksdb::DB::Open(opts, dir, descs, &h->cfs, &raw),
                            absl::StrCat("opening store '", dir, "'")));
  h->db.reset(raw);
  h->jobs = h->cfs[1];
  h->events = h->cfs[2];
  h->decisions = h->cfs[3];
  h->meta = h->cfs[4];
  rocksdb::DB* db = h->db.get();
  auto* meta_cf = h->meta;
  auto* jobs_cf = h->jobs;
  auto* events_cf = h->events;
  std::unique_ptr<RocksStore> store(new RocksStore(options, dir, std::move(h)));
  StoreMeta meta;

  std::string value;
  rocksdb::Status s =
      db->Get(rocksdb::ReadOptions(), meta_cf, kSchemaKey, &value);
  if (s.IsNotFound()) {
    return absl::FailedPreconditionError(
        absl::StrCat("'", dir, "' is not a Berth store (no schema version)"));
  }
  RETURN_IF_ERROR(FromRocks(s, "reading schema version"));
  int version = 0;
  if (!absl::SimpleAtoi(value, &version) || version < 1) {
    return absl::DataLossError(absl::StrCat(
        "store '", dir, "': corrupt schema version '", value, "'"));
  }
  if (version > kRocksStoreSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "store '", dir, "' has schema version ", version,
        ", newer than the supported version ", kRocksStoreSchemaVersion,
        " (written by a newer Berth); refusing to open it"));
  }
  s = db->Get(rocksdb::ReadOptions(), meta_cf, kStateKey, &value);
  if (s.IsNotFound()) {
    return absl::DataLossError(
        absl::StrCat("store '", dir, "': meta record missing"));
  }
  RETURN_IF_ERROR(FromRocks(s, "reading meta"));
  store::MetaRecord mr;
  if (!mr.ParseFromString(value)) {
    return absl::DataLossError(
        absl::StrCat("store '", dir, "': corrupt meta record"));
  }
  ASSIGN_OR_RETURN(meta, FromRecord(mr));

  // The last event must be the meta's revision (same WriteBatch).
  {
    std::unique_ptr<rocksdb::Iterator> it(
        db->NewIterator(rocksdb::ReadOptions(), events_cf));
    it->SeekToLast();
    RETURN_IF_ERROR(FromRocks(it->status(), "reading events"));
    const uint64_t last = it->Valid() ? DecodeRevision(it->key()) : 0;
    const uint64_t expect =
        meta.oldest_revision <= meta.revision ? meta.revision : 0;
    if (last != expect) {
      return absl::DataLossError(absl::StrCat("store '", dir,
                                              "': last event is revision ",
                                              last, " but meta says ", expect));
    }
  }

  std::vector<StoredJob> jobs;
  {
    std::unique_ptr<rocksdb::Iterator> it(
        db->NewIterator(rocksdb::ReadOptions(), jobs_cf));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      StoredJob sj;
      const rocksdb::Slice v = it->value();
      if (v.empty() || static_cast<unsigned char>(v[0]) > 3 ||
          !sj.job.ParseFromArray(v.data() + 1,
                                 static_cast<int>(v.size() - 1))) {
        return absl::DataLossError(absl::StrCat("store '", dir,
                                                "': corrupt job record '",
                                                it->key().ToString(), "'"));
      }
      sj.stop_intent = static_cast<StopIntent>(v[0]);
      jobs.push_back(std::move(sj));
    }
    RETURN_IF_ERROR(FromRocks(it->status(), "reading jobs"));
  }
  store->InitState(std::move(meta), std::move(jobs));
  return store;
}

absl::Status RocksStore::Persist(const ChangeSet& c) {
  rocksdb::WriteBatch b;
  std::string buf;
  for (const StoredJob& j : c.put_jobs) {
    buf.assign(1, static_cast<char>(j.stop_intent));
    j.job.AppendToString(&buf);
    b.Put(h_->jobs, j.job.spec().id(), buf);
  }
  for (const std::string& id : c.delete_jobs) {
    b.Delete(h_->jobs, id);
    b.DeleteRange(h_->decisions, absl::StrCat(id, std::string(1, '\0')),
                  absl::StrCat(id, std::string(1, '\1')));
  }
  if (c.delete_events_before > 0) {
    b.DeleteRange(h_->events, RevisionKey(0),
                  RevisionKey(c.delete_events_before));
  }
  for (const v1::Event& e : c.events) {
    e.SerializeToString(&buf);
    b.Put(h_->events, RevisionKey(e.revision()), buf);
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
    dr.SerializeToString(&buf);
    b.Put(h_->decisions, DecisionKey(d.job_id, d.sequence), buf);
  }
  ToRecord(c.meta).SerializeToString(&buf);
  b.Put(h_->meta, kStateKey, buf);
  rocksdb::WriteOptions wo;
  wo.sync = c.sync;
  return FromRocks(h_->db->Write(wo, &b), "writing to store");
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
