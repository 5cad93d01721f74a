// berthctl's human-readable output: tables and "key: value" blocks with
// human units ("16 GiB", "1.5 cores", "in 12m (14:20 UTC)"). Machine output
// is proto3 JSON (ToJson / CompactJson), not this.
//
// `now` is passed in (relative times, ETAs) so output is testable. All
// functions are pure and thread-safe.
#ifndef BERTH_TOOLS_CTL_FORMAT_H_
#define BERTH_TOOLS_CTL_FORMAT_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "berth/v1/executor.pb.h"
#include "google/protobuf/message.h"

namespace berth {
namespace ctl {

// Enum value names without their common prefix: JOB_STATE_QUEUED ->
// "QUEUED", EVENT_TYPE_PAUSED -> "PAUSED", REASON_ADMITTED -> "ADMITTED".
std::string StateName(v1::JobState state);
std::string ReasonName(v1::WaitReason reason);
std::string VerdictName(v1::Verdict verdict);
std::string EventTypeName(v1::EventType type);
std::string FailureCauseName(v1::FailureCause cause);
std::string RejectReasonName(v1::RejectReason reason);

// "queued", "JOB_STATE_QUEUED" or "QUEUED" -> JOB_STATE_QUEUED; usage error
// listing the states otherwise.
[[nodiscard]] absl::StatusOr<v1::JobState> ParseState(const std::string& text);

// One-line JSON (for `watch --json`, one event per line).
[[nodiscard]] absl::StatusOr<std::string> CompactJson(const google::protobuf::Message& m);

// "needs 16 GiB memory, 6 GiB free of 128 GiB".
std::string FormatShortfall(const v1::Shortfall& s);
// "in 12m (14:20:05 UTC)", "now", "-" when unset. `waiting` (a job that is
// not admitted): a start already past is "overdue (was 14:20:05 UTC)", never
// "now".
std::string FormatEta(const google::protobuf::Timestamp& t, absl::Time now,
                      bool waiting = false);
// A reserved start that moved later than first promised
// (Explanation.first_promised_start): ", overdue (was 14:20:05 UTC)" once
// that promise has passed, ", later than first promised (14:20:05 UTC)"
// before; "" when it did not move.
std::string FormatSlip(const google::protobuf::Timestamp& first_promised, absl::Time now);
// The START column and "expected start": FormatEta of `start`, except that
// a job beyond the bounded forecast (ETA_KIND_BEYOND_FORECAST) is "beyond the
// forecast (after 14:20:05 UTC, in 2h)" with its not_before, and a job with no
// start (ETA_KIND_UNKNOWN) is "unknown".
std::string FormatStart(const google::protobuf::Timestamp& start, v1::EtaKind kind,
                        const google::protobuf::Timestamp& not_before, absl::Time now,
                        bool waiting);
// "2026-11-22 14:20:05 UTC", "-" when unset.
std::string FormatTimestamp(const google::protobuf::Timestamp& t);

// A left-aligned text table; columns separated by two spaces.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void Print(std::ostream& out) const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

void PrintSync(const v1::SyncSnapshotResponse& r, bool dry_run, std::ostream& out);
void PrintPlan(const v1::Plan& plan, absl::Time now, std::ostream& out);
void PrintExplanation(const v1::Explanation& e, absl::Time now, std::ostream& out);
void PrintJobs(const std::vector<v1::Job>& jobs, absl::Time now, std::ostream& out);
void PrintJob(const v1::Job& job, absl::Time now, std::ostream& out);
void PrintBudgets(const v1::Budgets& b, std::ostream& out);
void PrintControlState(const v1::ControlState& s, std::ostream& out);
void PrintRequeued(const google::protobuf::RepeatedPtrField<std::string>& ids,
                   std::ostream& out);

}  // namespace ctl
}  // namespace berth

#endif  // BERTH_TOOLS_CTL_FORMAT_H_
