// berthctl: the client and operator CLI of berthd (docs/api-cookbook.md).
//
//   berthctl [global flags] COMMAND [args] [flags]
//
// Exit codes: 0 ok, 1 the server returned an error, 2 usage or bad input,
// 3 berthd unreachable.
#include <signal.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "planner/base/status_macros.h"
#include "planner/base/build_info.h"
#include "tools/client/client.h"
#include "tools/ctl/args.h"
#include "tools/ctl/commands.h"
#include "planner/base/proto_json.h"
#include "planner/base/units.h"

namespace berth {
namespace ctl {
namespace {

const std::vector<FlagSpec>& GlobalFlags() {
  static const auto* flags = new std::vector<FlagSpec>{
      {"server"},  {"token"},   {"token-file"}, {"tls-ca"},        {"tls-cert"},
      {"tls-key"}, {"timeout"}, {"json", false}, {"help", false},
  };
  return *flags;
}

void PrintHelp(std::ostream& out) {
  out << "usage: berthctl [global flags] COMMAND [args] [flags]\n\ncommands:\n";
  for (const Command& c : Commands()) out << "  " << c.synopsis << "\n";
  out << "\nglobal flags:\n"
         "  --server HOST:PORT   berthd address (default $BERTH_SERVER or 127.0.0.1:7070)\n"
         "  --token TOKEN        bearer token (default $BERTH_TOKEN)\n"
         "  --token-file FILE    read the token from FILE\n"
         "  --tls-ca FILE        CA of berthd's certificate (enables TLS)\n"
         "  --tls-cert FILE, --tls-key FILE   client certificate and key (mTLS)\n"
         "  --timeout DURATION   per call and for connecting (default 30s)\n"
         "  --json               proto3 JSON output for scripts\n"
         "\nexit codes: 0 ok, 1 server error, 2 usage or bad input, 3 berthd unreachable\n";
}

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

absl::StatusOr<std::string> ResolveToken(const Args& args) {
  if (args.Has("token") && args.Has("token-file")) {
    return UsageError("pass --token or --token-file, not both");
  }
  if (args.Has("token")) return args.Get("token");
  if (args.Has("token-file")) {
    absl::StatusOr<std::string> text = ReadFileToString(args.Get("token-file"));
    if (!text.ok()) return AsUsageError(text.status());
    std::string token(absl::StripAsciiWhitespace(*text));
    if (token.empty()) {
      return UsageError(absl::StrCat("--token-file ", args.Get("token-file"), ": file is empty"));
    }
    return token;
  }
  if (const char* t = Env("BERTH_TOKEN")) return std::string(t);
  return UsageError("no token: pass --token or --token-file, or set BERTH_TOKEN");
}

// Waits until the channel is connected. Unreachable (exit 3) if it fails
// to connect (refused, TLS handshake failure) or the deadline passes.
absl::Status AwaitConnected(grpc::Channel& channel, const std::string& target,
                            absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  bool tried = false;
  while (true) {
    grpc_connectivity_state state = channel.GetState(/*try_to_connect=*/true);
    if (state == GRPC_CHANNEL_READY) return absl::OkStatus();
    if (state == GRPC_CHANNEL_TRANSIENT_FAILURE && tried) {
      return UnreachableError(
          absl::StatusCode::kUnavailable,
          absl::StrCat("cannot connect to berthd at ", target,
                       "\n  hint: is berthd running there? set --server or BERTH_SERVER; "
                       "for a TLS server pass --tls-ca (and --tls-cert/--tls-key for mTLS)"));
    }
    tried = tried || state == GRPC_CHANNEL_CONNECTING || state == GRPC_CHANNEL_TRANSIENT_FAILURE;
    if (!channel.WaitForStateChange(state, absl::ToChronoTime(deadline))) {
      return UnreachableError(absl::StatusCode::kDeadlineExceeded,
                              absl::StrCat("no connection to berthd at ", target, " within ",
                                           FormatHumanDuration(timeout),
                                           "\n  hint: check --server / BERTH_SERVER and the "
                                           "network; raise --timeout on a slow link"));
    }
  }
}

std::string GeneralHint(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kUnauthenticated:
      return "berthd did not accept the token: check --token / --token-file / BERTH_TOKEN "
             "against a line of berthd's --token_file";
    case absl::StatusCode::kPermissionDenied:
      return "this token's role may not do that: push needs a pusher token, budgets, "
             "pause, resume, maintenance and drain an operator token";
    default:
      return "";
  }
}

absl::Status Run(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  std::vector<FlagSpec> all = GlobalFlags();
  for (const Command& c : Commands()) all.insert(all.end(), c.flags.begin(), c.flags.end());
  if (!argv.empty() && (argv[0] == "--version" || argv[0] == "version")) {
    out << VersionLine("berthctl") << "\n";
    return absl::OkStatus();
  }
  size_t first = FirstPositional(argv, all);
  if (first == argv.size() || argv[first] == "help") {
    bool help = first < argv.size();
    for (const std::string& a : argv) help = help || a == "--help";
    if (help) {
      PrintHelp(out);
      return absl::OkStatus();
    }
    PrintHelp(err);
    return UsageError("no command given");
  }
  const Command* command = nullptr;
  for (const Command& c : Commands()) {
    if (c.name == argv[first]) command = &c;
  }
  if (command == nullptr) {
    return UsageError(absl::StrCat("unknown command \"", argv[first], "\" (see berthctl help)"));
  }
  std::vector<FlagSpec> specs = GlobalFlags();
  specs.insert(specs.end(), command->flags.begin(), command->flags.end());
  CommandContext ctx;
  ASSIGN_OR_RETURN(ctx.args, ParseArgs(argv, specs, command->name));
  if (ctx.args.Has("help")) {
    out << "usage: berthctl " << command->synopsis << "\n";
    return absl::OkStatus();
  }
  const size_t n = ctx.args.positional.size() - 1;
  if (n < command->min_args || n > command->max_args) {
    return UsageError(absl::StrCat("usage: berthctl ", command->synopsis));
  }

  ClientOptions options;
  if (ctx.args.Has("server")) {
    options.target = ctx.args.Get("server");
  } else if (const char* s = Env("BERTH_SERVER")) {
    options.target = s;
  }
  if (ctx.args.Has("timeout")) {
    absl::StatusOr<absl::Duration> t = ParseHumanDuration("--timeout", ctx.args.Get("timeout"));
    if (!t.ok()) return AsUsageError(t.status());
    if (*t <= absl::ZeroDuration()) return UsageError("--timeout: must be > 0");
    options.timeout = *t;
  }
  if (ctx.args.Has("tls-ca")) options.tls_ca_file = ctx.args.Get("tls-ca");
  if (ctx.args.Has("tls-cert")) options.tls_cert_file = ctx.args.Get("tls-cert");
  if (ctx.args.Has("tls-key")) options.tls_key_file = ctx.args.Get("tls-key");
  if (ctx.args.Has("tls-cert") != ctx.args.Has("tls-key")) {
    return UsageError("--tls-cert and --tls-key go together (a client certificate and its key)");
  }
  if (ctx.args.Has("tls-cert") && !ctx.args.Has("tls-ca")) {
    return UsageError("--tls-cert needs --tls-ca (the CA of berthd's certificate)");
  }
  ASSIGN_OR_RETURN(ctx.token, ResolveToken(ctx.args));
  options.token = ctx.token;
  ctx.json = ctx.args.Has("json");
  ctx.now = absl::Now();
  ctx.out = &out;
  ctx.err = &err;

  if (command->name == "watch" || command->name == "logs") {
    // Block SIGINT/SIGTERM before gRPC starts threads: watch turns them into
    // a clean stop that still reports the last revision.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
  }
  std::unique_ptr<BerthClient> client;
  ctx.connect = [&]() -> absl::StatusOr<BerthClient*> {
    if (client == nullptr) {
      absl::StatusOr<std::unique_ptr<BerthClient>> c = BerthClient::Connect(options);
      if (!c.ok()) return AsUsageError(c.status());
      RETURN_IF_ERROR(AwaitConnected(*(*c)->channel(), options.target, options.timeout));
      client = std::move(*c);
    }
    return client.get();
  };
  absl::Status status = command->run(ctx);
  if (!status.ok() && ExitCodeFor(status) == kExitServerError) {
    std::string hint = GeneralHint(status);
    if (!hint.empty() && status.message().find("hint:") == absl::string_view::npos) {
      return absl::Status(status.code(), absl::StrCat(status.message(), "\n  hint: ", hint));
    }
  }
  return status;
}

}  // namespace
}  // namespace ctl
}  // namespace berth

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  absl::Status status = berth::ctl::Run(args, std::cout, std::cerr);
  std::cout.flush();
  if (!status.ok()) {
    const int code = berth::ctl::ExitCodeFor(status);
    std::cerr << "berthctl: " << (code == berth::ctl::kExitUsage
                                      ? ""
                                      : absl::StrCat(absl::StatusCodeToString(status.code()), ": "))
              << status.message() << "\n";
    return code;
  }
  return 0;
}
