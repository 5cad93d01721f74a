// Berthd: the assembled service — RocksDB store, Docker runtime, planner,
// reconcile loop, gRPC server (Executor + health + reflection) and the
// Prometheus endpoint. main() only parses flags into a BerthdConfig.
//
// Health (grpc.health.v1): "" and "berth.v1.Executor" are SERVING while the
// store is open (NOT_SERVING once shutdown begins); "berth.runtime" tells
// whether the last reconcile pass reached Docker — a runtime outage is
// reported there, it is not fatal.
//
// Thread-safe.
#ifndef BERTH_SERVER_BERTHD_H_
#define BERTH_SERVER_BERTHD_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/config.h"

namespace berth {

class Berthd {
 public:
  // Opens the store, connects to Docker (waiting up to 30 s for it when
  // budgets are "auto"), starts the reconcile loop (whose first pass is the
  // recovery), the gRPC server and the metrics endpoint.
  // Errors: the config's, the store's (FAILED_PRECONDITION for a directory
  // that is not a Berth store, ...), UNAVAILABLE when a port cannot be bound.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Berthd>> Start(
      const BerthdConfig& config);

  ~Berthd();

  // The bound gRPC and metrics ports (useful with port 0).
  int port() const;
  int metrics_port() const;

  // Blocks until Shutdown() is called from another thread.
  void Wait();

  // Stops accepting calls, ends watch streams, stops the loop, closes the
  // store. Idempotent.
  void Shutdown();

 private:
  struct Parts;
  explicit Berthd(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> p_;
};

}  // namespace berth

#endif  // BERTH_SERVER_BERTHD_H_
