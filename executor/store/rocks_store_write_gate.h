// WriteGate: whether a RocksStore may write, and the probe that reopens it.
//
// After the first I/O error (a write RocksDB refused, or a background error
// it reports: a flush or compaction that found the disk full), every write
// is refused here, before it reaches RocksDB, until a probe finds room on
// the store's file system and RocksDB's Resume() succeeds. The reason:
// Debian's librocksdb is built with its assertions on, and RocksDB asserts
// (aborts the process) when a file writer that has seen an error is written
// again; once in error, RocksDB's own retries and any write we would let
// through can reach such a writer. Resume() (with RocksDB's automatic
// recovery switched off, Listener()) is the one path that starts new files.
//
// Private to RocksStore. Thread-safe.
#ifndef BERTH_EXECUTOR_STORE_ROCKS_STORE_WRITE_GATE_H_
#define BERTH_EXECUTOR_STORE_ROCKS_STORE_WRITE_GATE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace rocksdb {
class DB;
class EventListener;
class Logger;
}  // namespace rocksdb

namespace berth {

class WriteGate {
 public:
  struct Options {
    // How often the probe looks at the disk while writes are refused.
    absl::Duration probe_interval = absl::Seconds(5);
    // Resume() is tried only while the file system has at least this many
    // bytes free (statvfs f_bavail): RocksDB writes its memtables out first.
    int64_t resume_min_free_bytes = int64_t{16} << 20;
    // Called on the probe's thread, never under a lock of the store or of
    // RocksDB: with the refusal when writes stop, with OK when they resume.
    std::function<void(const absl::Status&)> on_change;
  };

  explicit WriteGate(Options options);
  // Stops the probe.
  ~WriteGate();
  WriteGate(const WriteGate&) = delete;
  WriteGate& operator=(const WriteGate&) = delete;

  // OK while writes are accepted; otherwise the error every write gets:
  // the cause's code (RESOURCE_EXHAUSTED for a full disk, UNAVAILABLE for
  // other I/O errors) and a message that says writes resume by themselves.
  absl::Status Check() const ABSL_LOCKS_EXCLUDED(mu_);

  // Refuses writes from now on (the first cause is kept). REQUIRES: `cause`
  // is not OK. Cheap and non-blocking: RocksDB calls it under its mutex.
  void Fail(const absl::Status& cause) ABSL_LOCKS_EXCLUDED(mu_);

  // Starts the probe on `db` (not owned; must outlive Stop()), whose files
  // are in `dir`. Call once, after the database is open.
  void Start(rocksdb::DB* db, std::string dir) ABSL_LOCKS_EXCLUDED(mu_);
  // Stops and joins the probe. Idempotent.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

  // Probes made while writes were refused (for tests).
  int64_t probes() const ABSL_LOCKS_EXCLUDED(mu_);

  // The listener to put in RocksDB's options: reports background errors to
  // this gate and switches RocksDB's own recovery off (the probe resumes).
  static std::shared_ptr<rocksdb::EventListener> Listener(std::shared_ptr<WriteGate> gate);

 private:
  void ProbeLoop();
  // True if the disk has room and RocksDB's Resume() succeeded.
  bool TryResume();

  // Constant after construction.
  const Options options_;
  rocksdb::DB* db_ = nullptr;  // set by Start, before the thread
  std::string dir_;            // set by Start, before the thread
  std::thread probe_;

  mutable absl::Mutex mu_;
  absl::Status cause_ ABSL_GUARDED_BY(mu_);  // OK = writable
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  int64_t probes_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t failures_ ABSL_GUARDED_BY(mu_) = 0;  // Fail() calls
};

// RocksDB's information log sent to berthd's own log (warnings and errors
// only) instead of a LOG file in the store's directory: a full disk fails
// that file's writes too, and RocksDB asserts on its next line.
std::shared_ptr<rocksdb::Logger> NewStoreLogger();

}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_ROCKS_STORE_WRITE_GATE_H_
