// The enum and ETA wording the pages share (pages.h).
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "planner/base/units.h"
#include "server/web/pages.h"

namespace berth::web {
namespace {

std::string Lower(absl::string_view name, absl::string_view prefix) {
  if (absl::StartsWith(name, prefix)) name.remove_prefix(prefix.size());
  return absl::AsciiStrToLower(name);
}

absl::Time FromTimestamp(const google::protobuf::Timestamp& t) {
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}

}  // namespace

std::string VerdictText(v1::Verdict v) { return Lower(v1::Verdict_Name(v), "VERDICT_"); }
std::string ReasonText(v1::WaitReason r) { return Lower(v1::WaitReason_Name(r), "REASON_"); }
std::string StateText(v1::JobState s) { return Lower(v1::JobState_Name(s), "JOB_STATE_"); }

std::string EtaText(const v1::PlanDecision& d) {
  const std::string kind = Lower(v1::EtaKind_Name(d.eta_kind()), "ETA_KIND_");
  if (!d.has_estimated_start()) return kind;
  return absl::StrCat(FormatTimeUtc(FromTimestamp(d.estimated_start())), " (", kind, ")");
}

}  // namespace berth::web
