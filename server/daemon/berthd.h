// Berthd: the assembled service — RocksDB store, Docker runtime, planner,
// reconcile loop, gRPC server (Executor + health + reflection) and the
// HTTP port (Prometheus /metrics and the /ui dashboard, server/web/
// dashboard.h). main() only parses flags into a BerthdConfig.
//
// Health (grpc.health.v1): "" and "berth.v1.Executor" are NOT_SERVING while
// berthd recovers (the gRPC server starts before the store is opened: health
// and reflection answer, the Executor's RPCs answer UNAVAILABLE
// "berthd is recovering ..."), SERVING once the store is open and the
// reconcile loop started (the jobs then load in the background: calls that
// need them wait for the load, GetJob reads RocksDB meanwhile; see
// RocksStoreOptions::background_load), NOT_SERVING again once shutdown
// begins; "berth.runtime" tells
// whether the last reconcile pass reached Docker — a runtime outage is
// reported there, it is not fatal; "berth.store" whether the store accepts
// writes — NOT_SERVING after an I/O error (a full disk) until the store's
// probe finds room (RocksStoreOptions::write_probe_interval): reads go on,
// syncs and the passes' writes get the store's RESOURCE_EXHAUSTED.
//
// Thread-safe.
#ifndef BERTH_SERVER_DAEMON_BERTHD_H_
#define BERTH_SERVER_DAEMON_BERTHD_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/daemon/config.h"

namespace berth {

// For tests only.
struct BerthdTestHooks {
  // Called on Start()'s thread once gRPC serves (recovering) and before the
  // store is opened, with the bound gRPC port; recovery waits for it.
  std::function<void(int port)> while_recovering;
  // Called on the store's loading thread before it reads the first job
  // (RocksStoreOptions::before_background_load); the load waits for it.
  std::function<void()> before_jobs_load;
};

class Berthd {
 public:
  // Opens the store, connects to Docker (waiting up to 30 s for it when
  // budgets are "auto"), starts the reconcile loop (whose first pass is the
  // recovery), the gRPC server and the metrics endpoint.
  // Errors: the config's, the store's (FAILED_PRECONDITION for a directory
  // that is not a Berth store, ...), UNAVAILABLE when a port cannot be bound.
  // The gRPC server is started first and serves health while the store
  // loads (see above); Start() returns once berthd is SERVING.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Berthd>> Start(
      const BerthdConfig& config, const BerthdTestHooks& hooks = {});

  ~Berthd();

  // The bound gRPC and metrics ports (useful with port 0).
  int port() const;
  int metrics_port() const;

  // Blocks until Shutdown() is called from another thread.
  void Wait();

  // Re-reads --token_file (SIGHUP): new calls see the new tokens. On any
  // error the old tokens stay; logged either way, and the status says why.
  // Thread-safe.
  absl::Status ReloadTokens();

  // Stops accepting calls, ends watch streams, stops the loop, closes the
  // store. Idempotent.
  void Shutdown();

 private:
  struct Parts;
  [[nodiscard]] static absl::Status Recover(Parts& parts, const BerthdTestHooks& hooks);
  explicit Berthd(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> p_;
};

}  // namespace berth

#endif  // BERTH_SERVER_DAEMON_BERTHD_H_
