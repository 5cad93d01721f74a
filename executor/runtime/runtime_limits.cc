#include "executor/runtime/runtime_limits.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "planner/base/units.h"

namespace berth {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// component := [a-z0-9]+ (separator [a-z0-9]+)*
bool IsPathComponent(absl::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  auto alnum_run = [&] {
    size_t start = i;
    while (i < n && IsLowerAlnum(s[i])) ++i;
    return i > start;
  };
  if (!alnum_run()) return false;
  while (i < n) {
    if (s[i] == '.') {
      ++i;
    } else if (s[i] == '_') {
      ++i;
      if (i < n && s[i] == '_') ++i;
    } else if (s[i] == '-') {
      while (i < n && s[i] == '-') ++i;
    } else {
      return false;
    }
    if (!alnum_run()) return false;
  }
  return true;
}

// host [":" port]; host := label ("." label)*;
// label := [A-Za-z0-9] ([A-Za-z0-9-]* [A-Za-z0-9])?
bool IsDomain(absl::string_view s) {
  absl::string_view host = s;
  size_t colon = s.find(':');
  if (colon != absl::string_view::npos) {
    absl::string_view port = s.substr(colon + 1);
    if (port.empty() || port.size() > 5) return false;
    for (char c : port) {
      if (!IsDigit(c)) return false;
    }
    host = s.substr(0, colon);
  }
  if (host.empty()) return false;
  for (absl::string_view label : absl::StrSplit(host, '.')) {
    if (label.empty() || !IsAlnum(label.front()) || !IsAlnum(label.back())) return false;
    for (char c : label) {
      if (!IsAlnum(c) && c != '-') return false;
    }
  }
  return true;
}

bool IsTag(absl::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  auto word = [](char c) { return IsAlnum(c) || c == '_'; };
  if (!word(s[0])) return false;
  for (char c : s) {
    if (!word(c) && c != '.' && c != '-') return false;
  }
  return true;
}

bool IsDigest(absl::string_view s) {
  size_t colon = s.find(':');
  if (colon == absl::string_view::npos || colon == 0) return false;
  absl::string_view algorithm = s.substr(0, colon);
  absl::string_view hex = s.substr(colon + 1);
  if (!((algorithm[0] >= 'a' && algorithm[0] <= 'z') ||
        (algorithm[0] >= 'A' && algorithm[0] <= 'Z'))) {
    return false;
  }
  for (char c : algorithm) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '+' && c != '.') return false;
  }
  if (hex.size() < 32) return false;
  for (char c : hex) {
    if (!IsDigit(c) && !(c >= 'a' && c <= 'f') && !(c >= 'A' && c <= 'F')) return false;
  }
  return true;
}

SpecProblem Problem(std::string field, std::string message) {
  return SpecProblem{std::move(field), std::move(message)};
}

// Parses a decimal id in 1..kMaxContainerId written canonically.
bool ParseId(absl::string_view s, uint32_t* out, std::string* why) {
  if (s.empty()) {
    *why = "is empty";
    return false;
  }
  for (char c : s) {
    if (!IsDigit(c)) {
      *why = "is not a decimal number (names, signs and spaces are refused)";
      return false;
    }
  }
  if (s.size() > 1 && s[0] == '0') {
    *why = "has a leading zero (write it without)";
    return false;
  }
  if (s.size() > 10) {
    *why = "is out of range 1..2147483647";
    return false;
  }
  uint64_t v = 0;
  for (char c : s) v = v * 10 + static_cast<uint64_t>(c - '0');
  if (v == 0) {
    *why = "is 0 (root): jobs never run as root";
    return false;
  }
  if (v > kMaxContainerId) {
    *why = "is out of range 1..2147483647";
    return false;
  }
  *out = static_cast<uint32_t>(v);
  return true;
}

}  // namespace

std::string QuoteForMessage(absl::string_view text) {
  constexpr size_t kMax = 64;
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < kMax; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7f || c == '\'' || c == '\\') {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  out += "'";
  if (text.size() > kMax) absl::StrAppend(&out, "... (", FormatBytes(text.size()), ")");
  return out;
}

bool IsValidName(absl::string_view name) {
  if (name.empty() || name.size() > kMaxIdBytes || name == "." || name == "..") {
    return false;
  }
  for (char c : name) {
    if (!IsAlnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

std::optional<SpecProblem> CheckMemoryBytes(int64_t memory_bytes) {
  if (memory_bytes <= 0) {
    return Problem("resources.memory_bytes",
                   absl::StrCat("resources.memory_bytes is ", memory_bytes, "; must be > 0"));
  }
  if (memory_bytes < kMinMemoryBytes) {
    return Problem("resources.memory_bytes",
                   absl::StrCat("resources.memory_bytes is ",
                                FormatBytesBeside(memory_bytes, kMinMemoryBytes),
                                "; Docker's minimum memory limit is ",
                                FormatBytes(kMinMemoryBytes)));
  }
  return std::nullopt;
}

std::optional<SpecProblem> CheckCpuMillis(int64_t cpu_millis) {
  if (cpu_millis <= 0) {
    return Problem("resources.cpu_millis",
                   absl::StrCat("resources.cpu_millis is ", cpu_millis, "; must be > 0"));
  }
  if (cpu_millis < kMinCpuMillis) {
    return Problem("resources.cpu_millis",
                   absl::StrCat("resources.cpu_millis is ", FormatCpu(cpu_millis),
                                "; the minimum is ", FormatCpu(kMinCpuMillis),
                                " (a CPU quota of at least 1 ms per 100 ms period)"));
  }
  if (cpu_millis > kMaxCpuMillis) {
    return Problem("resources.cpu_millis",
                   absl::StrCat("resources.cpu_millis is ", FormatCpu(cpu_millis),
                                "; the maximum is ", FormatCpu(kMaxCpuMillis)));
  }
  return std::nullopt;
}

std::optional<SpecProblem> CheckResources(int64_t cpu_millis, int64_t memory_bytes) {
  if (cpu_millis <= 0 && memory_bytes <= 0) {
    return Problem("resources",
                   absl::StrCat("resources.cpu_millis (", cpu_millis,
                                ") and resources.memory_bytes (", memory_bytes,
                                ") are both required and must be > 0"));
  }
  if (auto p = CheckCpuMillis(cpu_millis)) return p;
  return CheckMemoryBytes(memory_bytes);
}

std::optional<SpecProblem> CheckImageReference(absl::string_view image) {
  auto bad = [&](absl::string_view why) {
    return Problem("image", absl::StrCat("image ", QuoteForMessage(image),
                                         " is not a valid image reference: ", why));
  };
  if (image.empty()) return Problem("image", "image is required");
  if (image.size() > kMaxImageReferenceBytes) {
    return bad(absl::StrCat("longer than ", kMaxImageReferenceBytes, " characters"));
  }
  absl::string_view rest = image;
  size_t at = rest.find('@');
  if (at != absl::string_view::npos) {
    if (!IsDigest(rest.substr(at + 1))) return bad("malformed digest after '@'");
    rest = rest.substr(0, at);
  }
  size_t slash = rest.rfind('/');
  size_t colon = rest.rfind(':');
  if (colon != absl::string_view::npos &&
      (slash == absl::string_view::npos || colon > slash)) {
    if (!IsTag(rest.substr(colon + 1))) {
      return bad("the tag must be 1-128 of [A-Za-z0-9_.-], not starting with '.' or '-'");
    }
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) return bad("no name");
  if (rest.size() > kMaxImageNameBytes) {
    return bad(absl::StrCat("the name is longer than ", kMaxImageNameBytes, " characters"));
  }
  std::vector<absl::string_view> parts = absl::StrSplit(rest, '/');
  size_t first = 0;
  if (parts.size() > 1) {
    absl::string_view p = parts[0];
    // Not "has uppercase" (newer distribution/reference): the engine here
    // (Docker 20.10) refuses "BERTH-TEST/x" as "repository name must be
    // lowercase", so it must be INVALID_FIELD, not a registry host.
    if (p.find('.') != absl::string_view::npos || p.find(':') != absl::string_view::npos ||
        p == "localhost") {
      if (!IsDomain(p)) return bad(absl::StrCat("malformed registry host ", QuoteForMessage(p)));
      first = 1;
    }
  }
  for (size_t i = first; i < parts.size(); ++i) {
    if (!IsPathComponent(parts[i])) {
      return bad(absl::StrCat("path component ", QuoteForMessage(parts[i]),
                              " must be lowercase [a-z0-9] separated by '.', '_', '__' or "
                              "'-' (no empty, '.' or '..' components)"));
    }
  }
  return std::nullopt;
}

bool IsValidEnvKey(absl::string_view key) {
  if (key.empty() || key.size() > kMaxEnvKeyBytes) return false;
  for (size_t i = 0; i < key.size(); ++i) {
    const char c = key[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(IsDigit(c) && i > 0)) return false;
  }
  return true;
}

void ArgumentCheck::Fail(std::string field, std::string message) {
  if (!problem_) problem_ = Problem(std::move(field), std::move(message));
}

void ArgumentCheck::AddArg(absl::string_view arg) {
  const size_t i = argv_++;
  if (problem_) return;
  // Field names are built only on failure: this runs for every argv string
  // of every job of a snapshot.
  auto field = [i] { return absl::StrCat("argv[", i, "]"); };
  if (argv_ > kMaxArgvEntries) {
    return Fail("argv", absl::StrCat("more than ", kMaxArgvEntries, " argv entries"));
  }
  if (i == 0 && arg.empty()) {
    // The engine would accept it and the job would exit 127 (not found).
    return Fail("argv[0]", "argv[0], the program to run, is empty");
  }
  if (arg.find('\0') != absl::string_view::npos) {
    return Fail(field(), absl::StrCat(field(), " contains a NUL byte"));
  }
  if (arg.size() > kMaxArgStringBytes) {
    return Fail(field(), absl::StrCat(field(), " is ", FormatBytes(arg.size()),
                                      "; the limit is ", FormatBytes(kMaxArgStringBytes + 1),
                                      " with its terminating NUL (Linux MAX_ARG_STRLEN)"));
  }
  total_ += arg.size() + 1;
  if (total_ > kMaxArgEnvTotalBytes) {
    return Fail(field(), absl::StrCat("argv and env together exceed ",
                                      FormatBytes(kMaxArgEnvTotalBytes), " at ", field()));
  }
}

void ArgumentCheck::AddEnv(absl::string_view key, absl::string_view value) {
  ++env_;
  if (problem_) return;
  auto field = [key] { return absl::StrCat("env[", QuoteForMessage(key), "]"); };
  if (env_ > kMaxEnvEntries) {
    return Fail("env", absl::StrCat("more than ", kMaxEnvEntries, " env entries"));
  }
  if (!IsValidEnvKey(key)) {
    return Fail(field(), absl::StrCat("env key ", QuoteForMessage(key),
                                      " must be 1-256 of [A-Za-z_][A-Za-z0-9_]*"));
  }
  if (value.find('\0') != absl::string_view::npos) {
    return Fail(field(), absl::StrCat("env value of ", QuoteForMessage(key),
                                      " contains a NUL byte"));
  }
  const size_t entry = key.size() + 1 + value.size();
  if (entry > kMaxArgStringBytes) {
    return Fail(field(), absl::StrCat("env entry ", QuoteForMessage(key), " is ",
                                      FormatBytes(entry), "; the limit is ",
                                      FormatBytes(kMaxArgStringBytes + 1),
                                      " with its terminating NUL (Linux MAX_ARG_STRLEN)"));
  }
  total_ += entry + 1;
  if (total_ > kMaxArgEnvTotalBytes) {
    return Fail(field(), absl::StrCat("argv and env together exceed ",
                                      FormatBytes(kMaxArgEnvTotalBytes), " at ", field()));
  }
}

std::optional<SpecProblem> CheckContainerSpec(const ContainerSpec& spec) {
  if (!IsValidName(spec.job_id)) {
    return Problem("id", absl::StrCat("id ", QuoteForMessage(spec.job_id),
                                      " must be 1-128 characters of [A-Za-z0-9._-], "
                                      "not '.' or '..'"));
  }
  if (!IsValidName(spec.workspace)) {
    return Problem("workspace", absl::StrCat("workspace ", QuoteForMessage(spec.workspace),
                                             " must be 1-128 characters of [A-Za-z0-9._-], "
                                             "not '.' or '..'"));
  }
  if (auto p = CheckImageReference(spec.image)) return p;
  ArgumentCheck args;
  for (const std::string& a : spec.argv) args.AddArg(a);
  for (const auto& [k, v] : spec.env) args.AddEnv(k, v);
  if (args.Result()) return args.Result();
  return CheckResources(spec.cpu_millis, spec.memory_bytes);
}

absl::StatusOr<ContainerUser> ParseContainerUser(absl::string_view text) {
  const size_t colon = text.find(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "container_user ", QuoteForMessage(text),
        " must be numeric \"uid:gid\" (a missing gid would be the image's, possibly 0)"));
  }
  ContainerUser u;
  std::string why;
  if (!ParseId(text.substr(0, colon), &u.uid, &why)) {
    return absl::InvalidArgumentError(
        absl::StrCat("container_user ", QuoteForMessage(text), ": the uid ", why));
  }
  if (!ParseId(text.substr(colon + 1), &u.gid, &why)) {
    return absl::InvalidArgumentError(
        absl::StrCat("container_user ", QuoteForMessage(text), ": the gid ", why));
  }
  return u;
}

}  // namespace berth
