#include "executor/store/store.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace berth {

const char* StopIntentName(StopIntent intent) {
  switch (intent) {
    case StopIntent::kNone:
      return "NONE";
    case StopIntent::kCancel:
      return "CANCEL";
    case StopIntent::kTimeout:
      return "TIMEOUT";
    case StopIntent::kRequeue:
      return "REQUEUE";
  }
  return "?";
}

const char* DecisionKindName(DecisionKind kind) {
  switch (kind) {
    case DecisionKind::kAdmit:
      return "ADMIT";
    case DecisionKind::kCancel:
      return "CANCEL";
    case DecisionKind::kRequeue:
      return "REQUEUE";
    case DecisionKind::kReject:
      return "REJECT";
    case DecisionKind::kTimeout:
      return "TIMEOUT";
  }
  return "?";
}

bool IsTerminal(berth::v1::JobState state) {
  return state == berth::v1::JOB_STATE_SUCCEEDED ||
         state == berth::v1::JOB_STATE_FAILED ||
         state == berth::v1::JOB_STATE_CANCELLED ||
         state == berth::v1::JOB_STATE_REJECTED;
}

}  // namespace berth

namespace berth {

std::string NewEpochId() {
  std::random_device rd;
  const uint64_t v = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return absl::StrFormat("%016x", v);
}

absl::StatusOr<BackupInfo> Store::Backup(const std::string& dir, const BackupExtraCopy&) {
  return absl::UnimplementedError(
      absl::StrCat("this store cannot back up with files beside it (asked for ", dir, ")"));
}

}  // namespace berth
