#include "server/auth.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "planner/base/status_macros.h"
#include "planner/base/proto_json.h"

namespace berth {
namespace {

constexpr size_t kMinTokenLength = 16;
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
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(contents, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || absl::StartsWith(line, "#")) continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    auto where = [&] { return absl::StrCat(source, ":", line_number, ": "); };
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
    if (token.size() < kMinTokenLength) {
      return absl::InvalidArgumentError(absl::StrCat(
          where(), "token of '", fields[1], "' is shorter than ",
          kMinTokenLength, " characters"));
    }
    for (const Entry& e : auth.tokens_) {
      if (e.token == token) {
        return absl::InvalidArgumentError(absl::StrCat(
            where(), "token of '", fields[1], "' repeats the token of '",
            e.principal.name, "'"));
      }
    }
    auth.tokens_.push_back(
        Entry{std::string(token), Principal{std::string(fields[1]), role}});
  }
  if (auth.tokens_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": no tokens; every call would be refused"));
  }
  return auth;
}

absl::StatusOr<Authenticator> Authenticator::FromFile(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    std::string why = absl::StrCat("token file ", path, ": ", std::strerror(errno));
    if (errno == ENOENT) return absl::NotFoundError(why);
    return absl::PermissionDeniedError(why);
  }
  if (st.st_mode & S_IROTH) {
    return absl::PermissionDeniedError(absl::StrCat(
        "token file ", path, " is readable by other users; run: chmod o-rwx ",
        path));
  }
  ASSIGN_OR_RETURN(std::string contents, ReadFileToString(path));
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
      {"SetBudgets", {Role::kOperator}},
      {"Pause", {Role::kOperator}},
      {"Resume", {Role::kOperator}},
      {"SetPoolMaintenance", {Role::kOperator}},
      {"Drain", {Role::kOperator}},
  };
  auto it = kPolicy->find(method);
  if (it == kPolicy->end()) return {};
  return it->second;
}

absl::StatusOr<Principal> Authenticator::Authorize(
    absl::string_view method, absl::string_view authorization) const {
  ASSIGN_OR_RETURN(Principal who, Authenticate(authorization));
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
  const Entry* found = nullptr;
  for (const Entry& e : tokens_) {
    if (ConstantTimeEquals(e.token, token)) found = &e;
  }
  if (found == nullptr) return absl::UnauthenticatedError("unknown token");
  return found->principal;
}

}  // namespace berth
