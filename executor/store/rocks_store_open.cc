// Opening a RocksStore: creating a new store atomically, checking the schema,
// and loading the state into memory.
#include "executor/store/rocks_store.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "executor/store/rocks_store_files.h"
#include "executor/store/rocks_store_format.h"
#include "executor/store/rocks_store_handles.h"
#include "executor/store/rocks_store_migrate.h"
#include "executor/store/rocks_store_write_gate.h"
#include "executor/store/store.pb.h"
#include "executor/store/store_util.h"
#include "rocksdb/cache.h"
#include "rocksdb/db.h"
#include "rocksdb/memtablerep.h"
#include "rocksdb/options.h"
#include "rocksdb/slice_transform.h"
#include "rocksdb/table.h"
#include "rocksdb/write_batch.h"
#include "planner/base/status_macros.h"

namespace berth {

namespace fs = std::filesystem;
using rocks_format::DecodeRevision;
using rocks_format::EmptyDirectory;
using rocks_format::kCreatingMarker;
using rocks_format::RefuseNewerLayout;
using rocks_format::SyncDir;
using rocks_format::WriteSyncedFile;
using rocks_format::FromErrorCode;
using rocks_format::FromRecord;
using rocks_format::FromRocks;
using rocks_format::kDecisionsCf;
using rocks_format::kEventsCf;
using rocks_format::kJobsCf;
using rocks_format::kMetaCf;
using rocks_format::Families;
using rocks_format::kSchemaKey;
using rocks_format::kUsageCf;
using rocks_format::kWriterKey;
using rocks_format::kStateKey;
using rocks_format::RevisionKey;
using rocks_format::ToRecord;

namespace {

rocksdb::Options DbOptions(const RocksStoreOptions& options) {
  rocksdb::Options opts;
  opts.paranoid_checks = true;
  opts.max_open_files = 512;
  opts.allow_concurrent_memtable_write = false;  // vector memtable; one writer
  if (options.env != nullptr) opts.env = options.env;
  // RocksDB's information log goes to berthd's log, not to a file in the
  // store (rocks_store_write_gate.h).
  opts.info_log = NewStoreLogger();
  opts.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  // RocksDB's memory, bounded and stated (without these, each family keeps
  // up to two 64 MiB memtables and its own block cache, and a long run's RSS
  // climbs for tens of minutes until they fill): all memtables together are
  // flushed at memtable_budget_bytes, and one block cache serves every
  // family.
  opts.db_write_buffer_size = static_cast<size_t>(options.memtable_budget_bytes);
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = rocksdb::NewLRUCache(static_cast<size_t>(options.block_cache_bytes));
  opts.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return opts;
}

// Events are appended in revision order (big-endian keys), a first sync's
// million in one write. With an insert hint, each skip-list insert starts
// where the last one ended instead of searching from the head (perf at 1M:
// the events memtable insert was a quarter of the sync's work). All event
// keys share one hint (an empty prefix). Only event keys are in the domain,
// not the begin key of the retention's DeleteRange (RevisionKey(0), never
// an event's: revisions start at 1): RocksDB 7.8 keeps one hint map per
// memtable for both its point and its range-deletion table, and a point
// hint used in the range-deletion table points into the other table.
class EventInsertHint : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "berth.EventInsertHint"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    return rocksdb::Slice(key.data(), 0);
  }
  bool InDomain(const rocksdb::Slice& key) const override {
    static const std::string kNoEvent = RevisionKey(0);
    return key.size() == kNoEvent.size() && key != rocksdb::Slice(kNoEvent);
  }
};

// The jobs family is written in bulk (snapshots) and read only by Open, in
// one pass: a vector memtable inserts much faster than the skip list and
// sorts once when read or flushed. The others are read while written
// (events by watchers, decisions per job) and keep the skip list; events
// insert with a hint (EventInsertHint).
rocksdb::ColumnFamilyOptions FamilyOptions(const std::string& name,
                                           const rocksdb::Options& opts) {
  rocksdb::ColumnFamilyOptions cf(opts);
  if (name == kJobsCf) {
    cf.memtable_factory = std::make_shared<rocksdb::VectorRepFactory>();
  }
  if (name == kEventsCf) {
    cf.memtable_insert_with_hint_prefix_extractor = std::make_shared<EventInsertHint>();
  }
  return cf;
}

// Creates a complete, closed store in `tmp` (schema version and meta written
// and synced), to be renamed into place: a crash never leaves a half-created
// store where Open would find it.
absl::Status CreateStore(const std::string& tmp, rocksdb::Options opts) {
  opts.create_if_missing = true;
  opts.error_if_exists = true;
  // Creating a database logs an error about the directory it has yet to
  // make: not worth an operator's attention.
  opts.info_log = NewStoreLogger();
  opts.info_log->SetInfoLogLevel(rocksdb::InfoLogLevel::FATAL_LEVEL);
  opts.create_missing_column_families = true;
  std::vector<rocksdb::ColumnFamilyDescriptor> descs;
  for (const auto& n : Families()) {
    descs.emplace_back(n, FamilyOptions(n, opts));
  }
  std::vector<rocksdb::ColumnFamilyHandle*> cfs;
  rocksdb::DB* raw = nullptr;
  RETURN_IF_ERROR(FromRocks(rocksdb::DB::Open(opts, tmp, descs, &cfs, &raw),
                            absl::StrCat("creating store in '", tmp, "'")));
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::WriteBatch b;
  rocksdb::ColumnFamilyHandle* meta = cfs[4];  // Families()' order
  b.Put(meta, kSchemaKey, std::to_string(kRocksStoreSchemaVersion));
  b.Put(meta, kStateKey, ToRecord(StoreMeta()).SerializeAsString());
  rocksdb::WriteOptions wo;
  wo.sync = true;
  absl::Status st = FromRocks(db->Write(wo, &b), "initialising store");
  for (auto* cf : cfs) (void)db->DestroyColumnFamilyHandle(cf);
  if (st.ok()) st = FromRocks(db->Close(), "closing new store");
  return st;
}

using Handles = RocksStore::Handles;

void Assign(Handles& h, const std::string& name, rocksdb::ColumnFamilyHandle* cf) {
  if (name == kJobsCf) h.jobs = cf;
  if (name == kEventsCf) h.events = cf;
  if (name == kDecisionsCf) h.decisions = cf;
  if (name == kMetaCf) h.meta = cf;
  if (name == kUsageCf) h.usage = cf;
}

// Opens the families that are on disk, creating none, after checking that
// `dir` has at least the families every version of the layout has: anything
// else is another RocksDB database or a damaged store. The schema version,
// not the families, then says which layout the store is in.
absl::StatusOr<std::unique_ptr<Handles>> OpenFamilies(const std::string& dir,
                                                      const rocksdb::Options& opts) {
  std::vector<std::string> names;
  RETURN_IF_ERROR(FromRocks(rocksdb::DB::ListColumnFamilies(opts, dir, &names),
                            absl::StrCat("store '", dir, "': reading column families")));
  bool berth = true;
  for (const char* n : {kJobsCf, kEventsCf, kDecisionsCf, kMetaCf}) {
    berth = berth && std::find(names.begin(), names.end(), n) != names.end();
  }
  if (!berth) {
    // Either another RocksDB database or a damaged store whose MANIFEST no
    // longer lists our families: a read-only open tells them apart.
    std::vector<rocksdb::ColumnFamilyDescriptor> theirs;
    for (const auto& n : names) theirs.emplace_back(n, rocksdb::ColumnFamilyOptions(opts));
    std::vector<rocksdb::ColumnFamilyHandle*> hs;
    rocksdb::DB* other = nullptr;
    RETURN_IF_ERROR(FromRocks(rocksdb::DB::OpenForReadOnly(opts, dir, theirs, &hs, &other),
                              absl::StrCat("store '", dir, "'")));
    for (auto* cf : hs) (void)other->DestroyColumnFamilyHandle(cf);
    delete other;
    return absl::FailedPreconditionError(
        absl::StrCat("'", dir, "' is a RocksDB database but not a Berth store (column families: ",
                     absl::StrJoin(names, ", "), ")"));
  }
  std::vector<rocksdb::ColumnFamilyDescriptor> descs;
  for (const auto& n : names) descs.emplace_back(n, FamilyOptions(n, opts));
  auto h = std::make_unique<Handles>();
  rocksdb::DB* raw = nullptr;
  RETURN_IF_ERROR(FromRocks(rocksdb::DB::Open(opts, dir, descs, &h->cfs, &raw),
                            absl::StrCat("opening store '", dir, "'")));
  h->db.reset(raw);
  for (size_t i = 0; i < names.size(); ++i) Assign(*h, names[i], h->cfs[i]);
  return h;
}

// The store's schema version, if this code reads it (after a migration).
absl::StatusOr<int> CheckVersion(Handles& h, const std::string& dir) {
  std::string value;
  rocksdb::Status s = h.db->Get(rocksdb::ReadOptions(), h.meta, kSchemaKey, &value);
  if (s.IsNotFound()) {
    return absl::FailedPreconditionError(
        absl::StrCat("'", dir, "' is not a Berth store (no schema version)"));
  }
  RETURN_IF_ERROR(FromRocks(s, "reading schema version"));
  int version = 0;
  if (!absl::SimpleAtoi(value, &version) || version < 1) {
    return absl::DataLossError(
        absl::StrCat("store '", dir, "': corrupt schema version '", value, "'"));
  }
  if (version > kRocksStoreSchemaVersion) {
    std::string writer;
    if (!h.db->Get(rocksdb::ReadOptions(), h.meta, kWriterKey, &writer).ok()) writer.clear();
    return rocks_format::NewerLayoutError(dir, version, writer);
  }
  if (version < rocks_format::kOldestMigratableVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "store '", dir, "' has schema version ", version, ", older than any this Berth upgrades"));
  }
  if (version == kRocksStoreSchemaVersion) {
    for (const auto& n : Families()) {
      bool have = false;
      for (auto* cf : h.cfs) have = have || cf->GetName() == n;
      if (!have) {
        return absl::DataLossError(absl::StrCat("store '", dir, "': schema version ", version,
                                                " but no column family '", n, "'"));
      }
    }
  }
  return version;
}

// Creates the families of the current layout that an older store lacks
// (empty; reused if an upgrade was interrupted after creating them).
absl::Status AddMissingFamilies(Handles& h, const rocksdb::Options& opts,
                                const std::string& dir) {
  for (const auto& n : Families()) {
    bool have = false;
    for (auto* cf : h.cfs) have = have || cf->GetName() == n;
    if (have) continue;
    rocksdb::ColumnFamilyHandle* cf = nullptr;
    RETURN_IF_ERROR(FromRocks(h.db->CreateColumnFamily(FamilyOptions(n, opts), n, &cf),
                              absl::StrCat("store '", dir, "': adding column family '", n, "'")));
    h.cfs.push_back(cf);
    Assign(h, n, cf);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<RocksStore>> RocksStore::Open(
    const std::string& dir, const RocksStoreOptions& options) {
  std::error_code ec;
  fs::path target = fs::path(dir).lexically_normal();
  if (!target.has_filename() && target.has_parent_path()) target = target.parent_path();  // "d/"
  const bool exists = fs::exists(target, ec);
  if (ec) return FromErrorCode(ec, absl::StrCat("store directory '", dir, "'"));
  if (!exists) {
    // Only the last component is created: a missing parent is far more
    // often a typo than a wish, and a new empty store under a mistyped path
    // would look as if every job had been lost.
    fs::path parent = target.parent_path();
    if (parent.empty()) parent = ".";
    if (!fs::is_directory(parent, ec)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "store directory '", dir, "' does not exist and neither does its parent '",
          parent.string(),
          "': only the last component is created; check the path, or create the parent first"));
    }
    fs::create_directory(target, ec);
    if (ec) return FromErrorCode(ec, absl::StrCat("cannot create store directory '", dir, "'"));
    RETURN_IF_ERROR(SyncDir(parent));
  } else if (!fs::is_directory(target, ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat("store path '", dir, "' is not a directory"));
  }
  const fs::path marker = target / kCreatingMarker;
  const bool interrupted = fs::exists(marker, ec);
  if (ec) return FromErrorCode(ec, absl::StrCat("store directory '", dir, "'"));
  bool fresh = fs::is_empty(target, ec);
  if (ec) return FromErrorCode(ec, absl::StrCat("store directory '", dir, "'"));
  if (!fresh && !interrupted && !fs::exists(target / "CURRENT", ec)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "'", dir,
        "' is not a Berth store: it is not empty and holds no RocksDB "
        "database; refusing to use it"));
  }
  const rocksdb::Options opts = DbOptions(options);
  if (fresh || interrupted) {
    // The store is created inside `dir` (its parent may be read-only to
    // berthd, as under a service's sandbox). The marker, written first and
    // removed last, says the creation is not complete: a creation that was
    // interrupted is wiped and redone, everything in `dir` being its own.
    if (interrupted) RETURN_IF_ERROR(EmptyDirectory(target));
    RETURN_IF_ERROR(WriteSyncedFile(marker));
    RETURN_IF_ERROR(SyncDir(target));
    RETURN_IF_ERROR(CreateStore(target.string(), opts));
    fs::remove(marker, ec);
    if (ec) return FromErrorCode(ec, absl::StrCat("removing '", marker.string(), "'"));
    RETURN_IF_ERROR(SyncDir(target));
  } else {
    // A store of a newer layout is refused before anything opens it for
    // writing: a read-write open alone replays the write-ahead log into a
    // new table file and may compact.
    RETURN_IF_ERROR(RefuseNewerLayout(dir, opts));
  }

  WriteGate::Options gate_options;
  gate_options.probe_interval = options.write_probe_interval;
  gate_options.resume_min_free_bytes = options.resume_min_free_bytes;
  gate_options.on_change = options.on_write_health;
  auto gate = std::make_shared<WriteGate>(std::move(gate_options));
  rocksdb::Options gated = opts;
  gated.listeners.push_back(WriteGate::Listener(gate));
  ASSIGN_OR_RETURN(std::unique_ptr<Handles> h, OpenFamilies(dir, gated));
  ASSIGN_OR_RETURN(const int version, CheckVersion(*h, dir));
  if (version < kRocksStoreSchemaVersion) {
    RETURN_IF_ERROR(AddMissingFamilies(*h, opts, dir));
    RETURN_IF_ERROR(rocks_format::MigrateStore(*h, version, dir));
  }
  if (!options.writer.empty()) {
    rocksdb::WriteOptions wo;
    wo.sync = true;
    RETURN_IF_ERROR(FromRocks(h->db->Put(wo, h->meta, kWriterKey, options.writer),
                              absl::StrCat("store '", dir, "': writing ", kWriterKey)));
  }
  rocksdb::DB* db = h->db.get();
  auto* meta_cf = h->meta;
  auto* events_cf = h->events;
  gate->Start(db, dir);
  std::unique_ptr<RocksStore> store(new RocksStore(options, dir, std::move(h), std::move(gate)));
  store->migrated_from_ = version < kRocksStoreSchemaVersion ? version : 0;
  StoreMeta meta;

  std::string value;
  rocksdb::Status s;
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

  ASSIGN_OR_RETURN(StoreEpoch epoch, rocks_format::OpenEpoch(*store->h_, dir, meta.revision,
                                                                    meta.last_generation));
  store->InitEpoch(std::move(epoch));
  store->InitMeta(std::move(meta));
  store->before_load_ = options.before_background_load;
  store->after_load_ = options.after_background_load;
  if (options.background_load) {
    store->StartLoading();
    RocksStore* loading = store.get();
    store->loader_ = std::thread([loading] {
      absl::Status loaded = loading->LoadJobs();
      // A failure is reported before the waiting calls are released with
      // it (an owner may stop before anything acts on a store without jobs).
      if (!loaded.ok() && loading->after_load_) loading->after_load_(loaded, 0);
      loading->FinishLoading(loaded);
      if (loaded.ok() && loading->after_load_) loading->after_load_(loaded, loading->JobCount());
    });
    return store;
  }
  RETURN_IF_ERROR(store->LoadJobs());
  return store;
}

}  // namespace berth
