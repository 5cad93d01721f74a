#include "executor/store/rocks_store_write_gate.h"

#include <sys/statvfs.h>

#include <cstdarg>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "executor/store/rocks_store_format.h"
#include "planner/base/log.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "rocksdb/listener.h"

namespace berth {
namespace {

class GateListener : public rocksdb::EventListener {
 public:
  explicit GateListener(std::shared_ptr<WriteGate> gate) : gate_(std::move(gate)) {}
  const char* Name() const override { return "berth.WriteGate"; }

  void OnBackgroundError(rocksdb::BackgroundErrorReason /*reason*/,
                         rocksdb::Status* error) override {
    if (error != nullptr && !error->ok()) {
      gate_->Fail(rocks_format::FromRocks(*error, "writing to store"));
    }
  }
  // RocksDB's own recovery (its file manager polls free space and resumes)
  // writes its log and files on its own schedule; the gate's probe resumes
  // instead, with writes held off.
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason /*reason*/,
                            rocksdb::Status /*error*/, bool* auto_recovery) override {
    if (auto_recovery != nullptr) *auto_recovery = false;
  }

 private:
  const std::shared_ptr<WriteGate> gate_;
};

class StoreLogger : public rocksdb::Logger {
 public:
  StoreLogger() : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL) {}

  void Logv(const char* format, va_list ap) override {
    Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap);
  }
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    if (level < GetInfoLogLevel() || level == rocksdb::InfoLogLevel::HEADER_LEVEL) return;
    char buf[2048];
    const int n = std::vsnprintf(buf, sizeof(buf), format, ap);
    if (n < 0) return;
    absl::string_view line(buf, std::min(static_cast<size_t>(n), sizeof(buf) - 1));
    while (!line.empty() && line.back() == '\n') line.remove_suffix(1);
    Log(level >= rocksdb::InfoLogLevel::ERROR_LEVEL ? LogLevel::kError : LogLevel::kWarning,
        "rocksdb", {{"message", line}});
  }
};

}  // namespace

WriteGate::WriteGate(Options options) : options_(std::move(options)) {}

WriteGate::~WriteGate() { Stop(); }

absl::Status WriteGate::Check() const {
  absl::MutexLock lock(&mu_);
  if (cause_.ok()) return absl::OkStatus();
  return absl::Status(
      cause_.code(),
      absl::StrCat("the store refuses writes after an I/O error (", cause_.message(),
                   "); it checks the disk every ",
                   absl::FormatDuration(options_.probe_interval),
                   " and accepts writes again by itself once the disk has room"));
}

void WriteGate::Fail(const absl::Status& cause) {
  absl::MutexLock lock(&mu_);
  ++failures_;
  if (cause_.ok()) cause_ = cause.ok() ? absl::UnknownError("store write failed") : cause;
}

int64_t WriteGate::probes() const {
  absl::MutexLock lock(&mu_);
  return probes_;
}

void WriteGate::Start(rocksdb::DB* db, std::string dir) {
  db_ = db;
  dir_ = std::move(dir);
  probe_ = std::thread([this] { ProbeLoop(); });
}

void WriteGate::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (probe_.joinable()) probe_.join();
}

bool WriteGate::TryResume() {
  struct statvfs vfs {};
  if (::statvfs(dir_.c_str(), &vfs) != 0) return false;
  const uint64_t free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  if (free_bytes < static_cast<uint64_t>(options_.resume_min_free_bytes)) return false;
  // Resume() writes the memtables out to new files and starts a new
  // write-ahead log; the files that failed are never written again.
  const rocksdb::Status s = db_->Resume();
  if (!s.ok()) {
    Log(LogLevel::kWarning, "store still refuses writes: resuming failed",
        {{"error", s.ToString()}, {"free_bytes", static_cast<int64_t>(free_bytes)}});
  }
  return s.ok();
}

void WriteGate::ProbeLoop() {
  absl::MutexLock lock(&mu_);
  bool reported = false;  // the current refusal was reported
  while (!stop_) {
    if (cause_.ok()) {
      auto failed_or_stopped = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_ || !cause_.ok();
      };
      mu_.Await(absl::Condition(&failed_or_stopped));
      continue;
    }
    if (!reported) {
      reported = true;
      const absl::Status cause = cause_;
      mu_.Unlock();
      Log(LogLevel::kError, "store refuses writes",
          {{"dir", dir_}, {"error", cause.ToString()},
           {"probe_seconds", absl::ToDoubleSeconds(options_.probe_interval)}});
      if (options_.on_change) options_.on_change(Check());
      mu_.Lock();
      continue;
    }
    mu_.AwaitWithTimeout(absl::Condition(&stop_), options_.probe_interval);
    if (stop_) break;
    ++probes_;
    const int64_t failures = failures_;
    mu_.Unlock();
    const bool resumed = TryResume();
    mu_.Lock();
    // A failure reported while Resume() ran keeps the gate shut.
    if (!resumed || failures_ != failures) continue;
    cause_ = absl::OkStatus();
    reported = false;
    mu_.Unlock();
    Log(LogLevel::kInfo, "store accepts writes again", {{"dir", dir_}});
    if (options_.on_change) options_.on_change(absl::OkStatus());
    mu_.Lock();
  }
}

std::shared_ptr<rocksdb::EventListener> WriteGate::Listener(std::shared_ptr<WriteGate> gate) {
  return std::make_shared<GateListener>(std::move(gate));
}

std::shared_ptr<rocksdb::Logger> NewStoreLogger() { return std::make_shared<StoreLogger>(); }

}  // namespace berth
