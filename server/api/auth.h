// Bearer-token authentication and role-based authorisation for berthd.
//
// Token file: one token per line, "<role> <name> <token>", where role is
// pusher | operator | reader, name identifies the client in logs, and token is
// 16-4096 characters of printable ASCII without spaces (names 1-128 such
// characters). Blank lines and lines starting with '#' are ignored. The file
// holds secrets (like an ssh key): it must be a regular file (not a symbolic
// link) owned by berthd's user with no permission bits for group or others
// (mode 600 or 400), at most 1 MiB.
//
// Roles (the one table: Authenticator::AllowedRoles):
//   reads     GetPlan, ListJobs, GetJob, ExplainJob, GetBudgets and
//             WatchEvents (events are reads)          every role;
//   pusher    SyncSnapshot, DryRun                     pusher only;
//   operator  SetBudgets, Pause, Resume, SetPoolMaintenance, Drain
//                                                      operator only;
//   logs      ReadJobLog (job output is research data) operator, and reader
//                                                      only with
//                                                      set_readers_read_logs
//                                                      (berthd
//                                                      --readers_read_logs).
// grpc.health.v1 and server reflection are open to everyone (they reveal only
// liveness and the schema), as grpcurl expects.
//
// Thread-safe after construction (immutable).
#ifndef BERTH_SERVER_API_AUTH_H_
#define BERTH_SERVER_API_AUTH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace berth {

enum class Role { kPusher, kOperator, kReader };

absl::string_view RoleName(Role role);

// Who made a call.
struct Principal {
  std::string name;
  Role role;
};

class Authenticator {
 public:
  // Parses a token file's contents. INVALID_ARGUMENT naming the line for a
  // malformed line, an unknown role, a short, long or repeated token, or
  // control / non-ASCII bytes (the token is never quoted in the message).
  [[nodiscard]] static absl::StatusOr<Authenticator> FromString(
      absl::string_view contents, absl::string_view source);

  // Reads and parses `path`. NOT_FOUND if missing; PERMISSION_DENIED if it
  // is a symbolic link or not a regular file, is owned by another user than
  // berthd's effective uid, or has any group/other permission bit (0640,
  // 0620, 0602, ...); INVALID_ARGUMENT if larger than 1 MiB or malformed.
  [[nodiscard]] static absl::StatusOr<Authenticator> FromFile(
      const std::string& path);

  // Who the "authorization" metadata names, whatever the method:
  // UNAUTHENTICATED as Authorize. (For logs: a refused call names its caller.)
  [[nodiscard]] absl::StatusOr<Principal> Authenticate(
      absl::string_view authorization) const;

  // Checks the value of the "authorization" metadata for a call to
  // `method` ("/berth.v1.Executor/GetPlan").
  //   UNAUTHENTICATED   no header, not "Bearer <token>", unknown token;
  //   PERMISSION_DENIED known token whose role may not call `method`, or a
  //                     method with no policy (fail closed).
  [[nodiscard]] absl::StatusOr<Principal> Authorize(
      absl::string_view method, absl::string_view authorization) const;

  // The roles allowed to call a method; empty if the method has no policy
  // (which Authorize refuses). Open methods (health, reflection) are not
  // checked here: the server never calls Authorize for them.
  static std::vector<Role> AllowedRoles(absl::string_view method);

  // Replaces the tokens with those of `path`, read as FromFile reads it;
  // calls already past Authenticate keep their principal, later ones see the
  // new tokens. On any error (FromFile's codes) the old tokens stay and the
  // status says why. Thread-safe: may run while calls are authorised.
  [[nodiscard]] absl::Status ReloadFromFile(const std::string& path);

  // The number of tokens.
  size_t size() const;

  // Lets readers call ReadJobLog (default: operators only). Set before
  // serving; not thread-safe against Authorize.
  void set_readers_read_logs(bool allow) { readers_read_logs_ = allow; }
  bool readers_read_logs() const { return readers_read_logs_; }

 private:
  struct Entry {
    std::string token;
    Principal principal;
  };
  // Never null once built; replaced whole (std::atomic_load/atomic_store),
  // never changed in place.
  std::shared_ptr<const std::vector<Entry>> tokens_;
  bool readers_read_logs_ = false;
};

}  // namespace berth

#endif  // BERTH_SERVER_API_AUTH_H_
