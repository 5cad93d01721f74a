#include "server/api/auth.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "planner/base/status_macros.h"
#include "planner/base/proto_json.h"

namespace berth {
namespace {

constexpr size_t kMinTokenLength = 16;
constexpr size_t kMaxTokenLength = 4096;
constexpr size_t kMaxNameLength = 128;
constexpr off_t kMaxTokenFileBytes = 1 << 20;

// Printable ASCII without spaces: what a token or a name may hold.
bool IsPrintableWord(absl::string_view s) {
  for (char c : s) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}
constexpr absl::string_view kService = "/berth.v1.Executor/";

// Compares in time that depends only on the lengths, not on where the
// strings differ.
bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

bool ParseRole(absl::string_view s, Role* role) {
  if (s == "pusher") *role = Role::kPusher;
  else if (s == "operator") *role = Role::kOperator;
  else if (s == "reader") *role = Role::kReader;
  else return false;
  return true;
}

}  // namespace

absl::string_view RoleName(Role role) {
  switch (role) {
    case Role::kPusher: return "pusher";
    case Role::kOperator: return "operator";
    case Role::kReader: return "reader";
  }
  return "unknown";
}

absl::StatusOr<Authenticator> Authenticator::FromString(
    absl::string_view contents, absl::string_view source) {
  Authenticator auth;
  std::vector<Entry> entries;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(contents, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || absl::StartsWith(line, "#")) continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    auto where = [&] { return absl::StrCat(source, ":", line_number, ": "); };
    for (absl::string_view f : fields) {
      if (!IsPrintableWord(f)) {
        // The secret itself is never quoted.
        return absl::InvalidArgumentError(absl::StrCat(
            where(), "control or non-ASCII bytes; roles, names and tokens must be "
                     "printable ASCII"));
      }
    }
    if (fields.size() != 3) {
      return absl::InvalidArgumentError(absl::StrCat(
          where(), "expected \"<role> <name> <token>\", got ", fields.size(),
          " fields"));
    }
    Role role;
    if (!ParseRole(fields[0], &role)) {
      return absl::InvalidArgumentError(absl::StrCat(
          where(), "unknown role '", fields[0],
          "' (expected pusher, operator or reader)"));
    }
    absl::string_view token = fields[2];
    if (fields[1].size() > kMaxNameLength) {
      return absl::InvalidArgumentError(absl::StrCat(
          where(), "name is longer than ", kMaxNameLength, " characters"));
    }
    if (token.size() > kMaxTokenLength) {
      return absl::InvalidArgumentError(absl::StrCat(
          where(), "token of '", fields[1], "' is longer than ", kMaxTokenLength,
          " characters"));
    }
    if (token.size() < kMinTokenLength) {
      return absl::InvalidArgumentError(absl::StrCat(
          where(), "token of '", fields[1], "' is shorter than ",
          kMinTokenLength, " characters"));
    }
    for (const Entry& e : entries) {
      if (e.token == token) {
        return absl::InvalidArgumentError(absl::StrCat(
            where(), "token of '", fields[1], "' repeats the token of '",
            e.principal.name, "'"));
      }
    }
    entries.push_back(Entry{std::string(token), Principal{std::string(fields[1]), role}});
  }
  if (entries.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": no tokens; every call would be refused"));
  }
  auth.tokens_ = std::make_shared<const std::vector<Entry>>(std::move(entries));
  return auth;
}

absl::StatusOr<Authenticator> Authenticator::FromFile(const std::string& path) {
  // Opened once and checked through the descriptor: what is checked is what
  // is read. O_NOFOLLOW: a symbolic link is refused, like a file of another
  // user (whoever controls the link controls the tokens).
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  if (fd < 0) {
    std::string why = absl::StrCat("token file ", path, ": ", std::strerror(errno));
    if (errno == ENOENT) return absl::NotFoundError(why);
    if (errno == ELOOP) {
      return absl::PermissionDeniedError(
          absl::StrCat("token file ", path, " is a symbolic link; name the file itself"));
    }
    return absl::PermissionDeniedError(why);
  }
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  struct stat st;
  if (fstat(fd, &st) != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("token file ", path, ": ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::PermissionDeniedError(
        absl::StrCat("token file ", path, " is not a regular file"));
  }
  if (st.st_uid != geteuid()) {
    return absl::PermissionDeniedError(absl::StrCat(
        "token file ", path, " is owned by uid ", st.st_uid, ", not by berthd's uid ",
        geteuid(), "; run: chown ", geteuid(), " ", path));
  }
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return absl::PermissionDeniedError(absl::StrCat(
        "token file ", path, " has mode ", mode,
        ": group or other users may read or write it; run: chmod 600 ", path));
  }
  if (st.st_size > kMaxTokenFileBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "token file ", path, " is larger than ", kMaxTokenFileBytes, " bytes"));
  }
  std::string contents(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < contents.size()) {
    ssize_t n = read(fd, contents.data() + got, contents.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  contents.resize(got);
  return FromString(contents, path);
}

std::vector<Role> Authenticator::AllowedRoles(absl::string_view method) {
  if (!absl::ConsumePrefix(&method, kService)) return {};
  static const auto* const kPolicy = new absl::flat_hash_map<std::string, std::vector<Role>>{
      {"SyncSnapshot", {Role::kPusher}},
      {"DryRun", {Role::kPusher}},
      // Events are reads: operators follow them too (berthctl watch).
      {"WatchEvents", {Role::kPusher, Role::kOperator, Role::kReader}},
      {"GetPlan", {Role::kPusher, Role::kOperator, Role::kReader}},
      {"ListJobs", {Role::kPusher, Role::kOperator, Role::kReader}},
      {"GetJob", {Role::kPusher, Role::kOperator, Role::kReader}},
      {"ExplainJob", {Role::kPusher, Role::kOperator, Role::kReader}},
      {"GetBudgets", {Role::kPusher, Role::kOperator, Role::kReader}},
      {"RightSize", {Role::kPusher, Role::kOperator, Role::kReader}},
      {"SetBudgets", {Role::kOperator}},
      {"Pause", {Role::kOperator}},
      {"Resume", {Role::kOperator}},
      {"SetPoolMaintenance", {Role::kOperator}},
      {"Drain", {Role::kOperator}},
      {"Backup", {Role::kOperator}},
      // Job output is research data: readers only with
      // set_readers_read_logs (Authorize checks).
      {"ReadJobLog", {Role::kOperator, Role::kReader}},
  };
  auto it = kPolicy->find(method);
  if (it == kPolicy->end()) return {};
  return it->second;
}

absl::StatusOr<Principal> Authenticator::Authorize(
    absl::string_view method, absl::string_view authorization) const {
  ASSIGN_OR_RETURN(Principal who, Authenticate(authorization));
  if (who.role == Role::kReader && !readers_read_logs_ &&
      method == absl::StrCat(kService, "ReadJobLog")) {
    return absl::PermissionDeniedError(absl::StrCat(
        "role 'reader' of '", who.name, "' may not call ", method,
        " unless berthd runs with --readers_read_logs"));
  }
  for (Role role : AllowedRoles(method)) {
    if (role == who.role) return who;
  }
  return absl::PermissionDeniedError(absl::StrCat(
      "role '", RoleName(who.role), "' of '", who.name, "' may not call ", method));
}

absl::StatusOr<Principal> Authenticator::Authenticate(absl::string_view authorization) const {
  if (authorization.empty()) {
    return absl::UnauthenticatedError(
        "missing \"authorization: Bearer <token>\" metadata");
  }
  absl::string_view token = authorization;
  if (!absl::ConsumePrefix(&token, "Bearer ") &&
      !absl::ConsumePrefix(&token, "bearer ")) {
    return absl::UnauthenticatedError(
        "authorization metadata must be \"Bearer <token>\"");
  }
  const std::shared_ptr<const std::vector<Entry>> tokens = std::atomic_load(&tokens_);
  const Entry* found = nullptr;
  for (const Entry& e : *tokens) {
    if (ConstantTimeEquals(e.token, token)) found = &e;
  }
  if (found == nullptr) return absl::UnauthenticatedError("unknown token");
  return found->principal;
}

absl::Status Authenticator::ReloadFromFile(const std::string& path) {
  absl::StatusOr<Authenticator> next = FromFile(path);
  if (!next.ok()) return next.status();
  std::atomic_store(&tokens_, std::atomic_load(&next->tokens_));
  return absl::OkStatus();
}

size_t Authenticator::size() const { return std::atomic_load(&tokens_)->size(); }

}  // namespace berth
