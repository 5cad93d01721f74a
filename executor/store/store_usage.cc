// StoreCore's usage history (usage_history.h): runs added with their final
// transition, bounded per key and in keys, published with the write.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/store/store_core.h"
#include "planner/base/status_macros.h"
#include "planner/convert/convert.h"

namespace berth {

void StoreCore::AddUsageRun(const v1::Job& job, v1::JobState state,
                            v1::FailureCause cause, const v1::ResourceUsage& used,
                            absl::Time now, ChangeSet* c) const {
  const v1::JobSpec& spec = job.spec();
  UsageRun run;
  run.peak_memory_bytes = used.peak_memory_bytes();
  run.peak_exact = used.peak_exact();
  run.cpu_seconds = used.cpu_seconds();
  run.run_time = absl::Seconds(used.run_seconds());
  run.finished = now;
  run.state = state;
  run.failure_cause = cause;
  // The limit it ran with (planner/convert EffectiveMemoryBytes).
  run.asked_memory_bytes = planner::EffectiveMemoryBytes(job);
  run.asked_cpu_millis = spec.resources().cpu_millis();
  if (spec.has_expected_duration()) {
    run.asked_duration = planner::FromProto(spec.expected_duration());
  }

  const std::string key = UsageKey(spec.workspace(), spec.action());
  UsageHistory history;
  auto it = usage_.find(key);
  if (it != usage_.end()) {
    history = it->second;
  } else {
    history.workspace = spec.workspace();
    history.action = spec.action();
    if (static_cast<int64_t>(usage_.size()) >= std::max(1, retention_.usage.max_keys)) {
      // Full: the key whose last run is oldest makes room.
      auto stalest = usage_.end();
      for (auto k = usage_.begin(); k != usage_.end(); ++k) {
        if (stalest == usage_.end() ||
            k->second.runs.back().finished < stalest->second.runs.back().finished) {
          stalest = k;
        }
      }
      if (stalest != usage_.end()) c->delete_usage.push_back(stalest->first);
    }
  }
  AppendRun(&history, std::move(run), retention_.usage.runs_per_key);
  c->put_usage.push_back(std::move(history));
}

void StoreCore::PublishUsage(ChangeSet& c) {
  for (const std::string& key : c.delete_usage) usage_.erase(key);
  for (UsageHistory& h : c.put_usage) {
    const std::string key = UsageKey(h.workspace, h.action);
    usage_[key] = std::move(h);
  }
}

void StoreCore::InitUsage(std::vector<UsageHistory> histories) {
  absl::MutexLock lock(&mu_);
  for (UsageHistory& h : histories) {
    if (h.runs.empty()) continue;
    const std::string key = UsageKey(h.workspace, h.action);
    usage_[key] = std::move(h);
  }
}

std::vector<UsageHistory> StoreCore::UsageHistories() const {
  std::vector<UsageHistory> out;
  if (!WaitLoaded().ok()) return out;
  absl::ReaderMutexLock lock(&mu_);
  out.reserve(usage_.size());
  for (const auto& [key, h] : usage_) out.push_back(h);
  return out;
}

absl::StatusOr<UsageHistory> StoreCore::UsageHistoryOf(const std::string& workspace,
                                                       const std::string& action) const {
  RETURN_IF_ERROR(WaitLoaded());
  absl::ReaderMutexLock lock(&mu_);
  auto it = usage_.find(UsageKey(workspace, action));
  if (it == usage_.end()) {
    return absl::NotFoundError(absl::StrCat("no usage history for workspace '", workspace,
                                            "', action '", action, "'"));
  }
  return it->second;
}

}  // namespace berth
