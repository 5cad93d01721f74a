#include "tools/ctl/watch.h"

#include <signal.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "planner/base/status_macros.h"
#include "tools/ctl/args.h"
#include "tools/ctl/format.h"
#include "tools/ctl/format_event.h"
#include "tools/ctl/stop_on_signal.h"
#include "planner/base/proto_json.h"

namespace berth {
namespace ctl {
namespace {

// --follow reconnects after UNAVAILABLE (berthd stopped or unreachable)
// with this backoff, doubling up to the maximum.
constexpr absl::Duration kFirstRetry = absl::Milliseconds(100);
constexpr absl::Duration kMaxRetry = absl::Seconds(5);

// The --save-revision file: "<revision>" or "<revision> <epoch>" (the
// history epoch the revision belongs to; files from before epochs have none).
absl::StatusOr<uint64_t> ReadRevisionFile(const std::string& path, std::string* epoch) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) {
    if (text.status().code() == absl::StatusCode::kNotFound) return 0;
    return AsUsageError(text.status());
  }
  const std::vector<std::string> parts =
      absl::StrSplit(absl::StripAsciiWhitespace(*text), ' ', absl::SkipEmpty());
  uint64_t rev = 0;
  if (parts.empty() || parts.size() > 2 || !absl::SimpleAtoi(parts[0], &rev)) {
    return UsageError(absl::StrCat(path, ": expected a revision number (and an epoch), found \"",
                                   absl::StripAsciiWhitespace(*text), "\""));
  }
  if (parts.size() == 2) *epoch = parts[1];
  return rev;
}

// The trailer `key` of a finished call, "" if absent.
std::string Trailer(const grpc::ClientContext& context, const char* key) {
  const auto& trailers = context.GetServerTrailingMetadata();
  auto it = trailers.find(key);
  return it == trailers.end() ? std::string() : std::string(it->second.data(), it->second.size());
}

}  // namespace

absl::Status RunWatch(CommandContext& ctx) {
  const bool follow = ctx.args.Has("follow");
  const std::string save = ctx.args.Has("save-revision") ? ctx.args.Get("save-revision") : "";
  uint64_t from = 0;
  // The history epoch of the events read so far (Event.epoch): sent back on
  // every reconnect, so that a berthd restored from a backup refuses to
  // continue a history it does not have instead of reusing revisions.
  std::string epoch = ctx.args.Has("epoch") ? ctx.args.Get("epoch") : "";
  if (ctx.args.Has("from")) {
    ASSIGN_OR_RETURN(int64_t f, ParseInt("--from", ctx.args.Get("from"), 0,
                                         std::numeric_limits<int64_t>::max()));
    from = static_cast<uint64_t>(f);
  } else if (!save.empty()) {
    ASSIGN_OR_RETURN(from, ReadRevisionFile(save, &epoch));
  }
  int64_t limit = 0;
  if (ctx.args.Has("limit")) {
    ASSIGN_OR_RETURN(limit, ParseInt("--limit", ctx.args.Get("limit"), 1,
                                     std::numeric_limits<int64_t>::max()));
  }
  // Without --follow: stop at the revision current when the command started.
  uint64_t until = 0;
  ASSIGN_OR_RETURN(BerthClient* client, ctx.connect());
  if (!follow) {
    ASSIGN_OR_RETURN(v1::Plan plan, client->GetPlan(1));
    until = plan.revision();
  }
  if (!follow && from > until) {
    // The same answer as WatchEvents gives --follow.
    return WithHint(
        absl::FailedPreconditionError(absl::StrCat(
            "--from ", from, ": revision ", from, " is ahead of the current revision ", until)),
        "revisions are never reused: re-read state with `berthctl list --all`, then "
        "`berthctl watch --from <a revision not above the current one>`");
  }
  uint64_t last = from;
  int64_t count = 0;
  absl::Status result;
  StopOnSignal stop;
  absl::Duration retry = kFirstRetry;
  bool reconnect = false;
  while (follow || from < until) {
    grpc::ClientContext context;
    if (!ctx.token.empty()) context.AddMetadata("authorization", "Bearer " + ctx.token);
    // A reconnect waits for berthd to come back (a signal still stops it).
    if (reconnect) context.set_wait_for_ready(true);
    stop.Attach(&context);
    v1::WatchEventsRequest request;
    request.set_from_revision(last);
    request.set_epoch(epoch);
    std::unique_ptr<grpc::ClientReader<v1::Event>> reader =
        client->stub().WatchEvents(&context, request);
    v1::Event e;
    bool done = false;
    while (!done && reader->Read(&e)) {
      if (ctx.json) {
        ASSIGN_OR_RETURN(std::string line, CompactJson(e));
        *ctx.out << line << "\n";
      } else {
        *ctx.out << EventLine(e) << "\n";
      }
      ctx.out->flush();
      last = e.revision();
      if (!e.epoch().empty()) epoch = e.epoch();
      ++count;
      retry = kFirstRetry;
      if (!save.empty()) {
        RETURN_IF_ERROR(WriteFileAtomically(
            save, absl::StrCat(last, epoch.empty() ? "" : " ", epoch, "\n")));
      }
      done = (limit > 0 && count >= limit) || (!follow && last >= until);
    }
    if (done) context.TryCancel();
    grpc::Status status = reader->Finish();
    stop.Attach(nullptr);
    if (done || stop.stopped()) break;
    // Not stopped here, so a CANCELLED came from berthd's side (a call
    // caught in its shutdown) like an UNAVAILABLE.
    if (follow && (status.ok() || status.error_code() == grpc::StatusCode::UNAVAILABLE ||
                   status.error_code() == grpc::StatusCode::CANCELLED)) {
      // berthd stopped (or is not reachable): resume where this left off.
      *ctx.err << "berthctl: event stream ended ("
               << absl::StatusCodeToString(FromGrpcStatus(status).code()) << ": "
               << status.error_message()
               << "); reconnecting from revision " << last << "\n";
      ctx.err->flush();
      if (stop.WaitFor(retry)) break;
      retry = std::min(retry * 2, kMaxRetry);
      reconnect = true;
      continue;
    }
    if (!status.ok()) {
      result = FromGrpcStatus(status);
      if (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION &&
          !Trailer(context, "berth-epoch").empty()) {
        // The store's history is not the one this follower read (restored
        // from a backup) or the revision is beyond it: stop, never guess.
        const std::string resume = Trailer(context, "berth-resume-revision");
        const std::string now_epoch = Trailer(context, "berth-epoch");
        result = WithHint(
            result,
            absl::StrCat("berthd's event history is now epoch ", now_epoch,
                         ": events after revision ", resume,
                         " that this follower read are not in it. Re-read state with "
                         "`berthctl list --all`, then `berthctl watch --from ", resume,
                         " --epoch ", now_epoch, "`",
                         save.empty() ? "" : absl::StrCat(" (and remove ", save, ")")));
      }
      if (status.error_code() == grpc::StatusCode::OUT_OF_RANGE) {
        std::string current;
        auto trailers = context.GetServerTrailingMetadata();
        if (auto it = trailers.find("berth-current-revision"); it != trailers.end()) {
          current = std::string(it->second.data(), it->second.size());
        }
        result = WithHint(result, absl::StrCat(
            "events before that are gone: re-read state with `berthctl list --all`, then "
            "`berthctl watch --from ", current.empty() ? "<current revision>" : current, "`"));
      }
    } else {
      result = absl::UnavailableError("the event stream ended before the current revision");
    }
    break;
  }
  if (result.ok() || count > 0) {
    *ctx.err << "berthctl: last revision " << last << " (resume with: berthctl watch --from "
             << last << ")\n";
  }
  return result;
}

}  // namespace ctl
}  // namespace berth
