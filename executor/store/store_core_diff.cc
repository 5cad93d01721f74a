// StoreCore::DiffSnapshot: a snapshot against the store, as one change set
// (see store_core.h). Applied by ApplySnapshot in store_core.cc.
#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "executor/store/spec_fingerprint.h"
#include "executor/store/store_core.h"
#include "executor/store/store_internal.h"
#include "executor/store/store_util.h"
#include "planner/base/status_macros.h"

namespace berth {

using berth::v1::Event;
using berth::v1::JobState;

absl::Status StoreCore::DiffSnapshot(const SnapshotRequest& request,
                                     SnapshotRequest* consumable, absl::Time now,
                                     SnapshotResult* result, ChangeSet* changes) {
  const uint64_t gen = request.generation;
  result->revision_before = meta_.revision;
  berth::v1::SyncSnapshotResponse& resp = result->response;
  resp.set_generation(gen);
  if (gen < meta_.last_generation) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "snapshot generation %d is older than the last applied generation %d",
        gen, meta_.last_generation));
  }
  if (gen == meta_.last_generation) {
    if (request.digest != 0 && meta_.snapshot_digest != 0 &&
        meta_.snapshot_digest_version == kFingerprintVersion &&
        request.digest != meta_.snapshot_digest) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "snapshot generation %d was already applied with different content; a "
          "changed snapshot needs a new generation (> %d)",
          gen, gen));
    }
    resp.set_already_applied(true);
    return absl::OkStatus();
  }
  const auto& jobs = jobs_;
  ChangeSet& c = *changes;
  c.sync = sync_writes_;
  c.meta = meta_;
  EventWriter ev(&c, now);
  const std::string gen_reason = absl::StrCat("snapshot generation ", gen);

  // Known non-terminal jobs present in the snapshot; when it equals the number
  // of non-terminal jobs, none is absent and the cancel scan is skipped.
  size_t present_active = 0;

  // Presence is marked on the in-memory entries (Entry::seen = pass), which
  // also finds repeated ids; new ids are tracked in new_ids (views into the
  // new records and into request.rejected). A failure midway discards the
  // change set; marks of an abandoned pass are never read again.
  const uint64_t pass = ++apply_pass_;
  absl::flat_hash_set<absl::string_view> new_ids;
  // Sized once for the specs given (a first sync's million are all new;
  // a re-sync's are the few changed ones), not rehashed as it fills.
  new_ids.reserve(request.jobs.size() + request.rejected.size());
  auto repeated = [](const std::string& id) {
    return absl::InvalidArgumentError(
        absl::StrCat("job id '", id, "' appears twice in the snapshot"));
  };
  auto empty_id = []() {
    return absl::InvalidArgumentError("job with an empty id");
  };

  const bool given = !request.fingerprints.empty();
  if (given && request.fingerprints.size() != request.jobs.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%d fingerprints for %d jobs", request.fingerprints.size(),
        request.jobs.size()));
  }

  // The spec of job i for a new record: moved out of the request when the
  // caller gave it up (and freed once its record is built), else copied.
  auto take_spec = [&](size_t i, v1::JobSpec* to) {
    if (consumable != nullptr) {
      *to = std::move(consumable->jobs[i]);
    } else {
      *to = request.jobs[i];
    }
  };

  // Present jobs: add, update or leave alone.
  for (size_t i = 0; i < request.jobs.size(); ++i) {
    if (i + kLookupPrefetchDistance < request.jobs.size()) {
      jobs.prefetch(request.jobs[i + kLookupPrefetchDistance].id());
    }
    const v1::JobSpec& spec = request.jobs[i];
    if (spec.id().empty()) return empty_id();
    auto it = jobs.find(spec.id());
    if (it == jobs.end()) {
      if (new_ids.contains(spec.id())) return repeated(spec.id());
      StoredJob sj;
      take_spec(i, sj.job.mutable_spec());
      sj.job.set_state(v1::JOB_STATE_QUEUED);
      *sj.job.mutable_queued_at() = ToProtoTime(now);
      sj.job.set_last_seen_generation(gen);
      ev.JobChanged(&sj.job, v1::JOB_STATE_UNSPECIFIED);
      if (given) {
        c.Put(sj, request.fingerprints[i]);
      } else {
        c.Put(sj);
      }
      new_ids.insert(c.put_jobs.back().record->id());
      resp.set_added(resp.added() + 1);
      continue;
    }
    const Entry& entry = it->second;
    if (entry.seen == pass) return repeated(spec.id());
    entry.seen = pass;
    const JobState state = entry.state;
    if (IsTerminal(state)) {
      resp.set_terminal_unchanged(resp.terminal_unchanged() + 1);
      continue;
    }
    ++present_active;
    const uint64_t fingerprint =
        given ? request.fingerprints[i] : SpecFingerprint(spec);
#ifndef NDEBUG
    if (given && fingerprint != SpecFingerprint(spec)) {
      return absl::InternalError(absl::StrCat(
          "fingerprints[", i, "] is not the fingerprint of job '", spec.id(),
          "'"));
    }
#endif
    if (fingerprint == entry.fingerprint) {
      resp.set_unchanged(resp.unchanged() + 1);
      continue;
    }
    StoredJob cur = entry.stored->Decode();
    std::vector<std::string> diff = DiffJobSpecs(cur.job.spec(), spec);
    if (diff.empty()) {
      resp.set_unchanged(resp.unchanged() + 1);
      continue;
    }
    if (state == v1::JOB_STATE_QUEUED) {
      const v1::JobSpec cur_spec = cur.job.spec();
      StoredJob sj = std::move(cur);
      take_spec(i, sj.job.mutable_spec());
      sj.job.set_last_seen_generation(gen);
      // The field names stay the diff (ignored.fields below depends on
      // them); the event says old -> new.
      ev.SpecUpdated(&sj.job, absl::StrCat("spec updated: ",
                                           DescribeSpecChanges(cur_spec, sj.job.spec(), diff)));
      c.Put(sj, fingerprint);
      resp.set_updated(resp.updated() + 1);
      continue;
    }
    // ADMITTED / RUNNING: only the priority is taken.
    std::vector<std::string> ignored;
    bool priority_changed = false;
    for (std::string& f : diff) {
      if (f == "priority") {
        priority_changed = true;
      } else {
        ignored.push_back(std::move(f));
      }
    }
    if (!ignored.empty()) {
      auto* ic = resp.add_ignored();
      ic->set_job_id(spec.id());
      for (auto& f : ignored) ic->add_fields(std::move(f));
    }
    if (priority_changed) {
      const int32_t old_priority = cur.job.spec().priority();
      StoredJob sj = std::move(cur);
      sj.job.mutable_spec()->set_priority(spec.priority());
      sj.job.set_last_seen_generation(gen);
      ev.SpecUpdated(&sj.job, absl::StrCat("priority updated ", old_priority,
                                           " -> ", spec.priority(), " while running"));
      c.Put(sj);
      resp.set_updated(resp.updated() + 1);
    } else {
      resp.set_unchanged(resp.unchanged() + 1);
    }
  }

  // Present without a spec: the caller found them stored unchanged.
  for (size_t i = 0; i < request.unchanged.size(); ++i) {
    if (i + kLookupPrefetchDistance < request.unchanged.size()) {
      jobs.prefetch(request.unchanged[i + kLookupPrefetchDistance].id);
    }
    const UnchangedJob& u = request.unchanged[i];
    auto it = jobs.find(u.id);
    const bool same = it != jobs.end() && (IsTerminal(it->second.state) ||
                                           it->second.fingerprint == u.fingerprint);
    if (!same) {
      return absl::AbortedError(absl::StrCat(
          "job '", u.id, "' changed while the snapshot was read (another sync or a "
          "compaction); nothing was applied: send the snapshot again"));
    }
    if (it->second.seen == pass) return repeated(u.id);
    it->second.seen = pass;
    if (IsTerminal(it->second.state)) {
      resp.set_terminal_unchanged(resp.terminal_unchanged() + 1);
    } else {
      ++present_active;
      resp.set_unchanged(resp.unchanged() + 1);
    }
  }

  // Rejected jobs: new ids are stored as REJECTED.
  for (const RejectedJob& r : request.rejected) {
    if (r.spec.id().empty()) return empty_id();
    auto it = jobs.find(r.spec.id());
    if (it == jobs.end() ? !new_ids.insert(r.spec.id()).second
                         : it->second.seen == pass) {
      return repeated(r.spec.id());
    }
    if (it != jobs.end()) it->second.seen = pass;
    *resp.add_rejections() = r.rejection;
    resp.mutable_rejections(resp.rejections_size() - 1)
        ->set_job_id(r.spec.id());
    if (it != jobs.end()) {  // known: left as it is
      if (!IsTerminal(it->second.state)) ++present_active;
      continue;
    }
    StoredJob sj;
    *sj.job.mutable_spec() = r.spec;
    sj.job.set_state(v1::JOB_STATE_REJECTED);
    sj.job.set_reject_reason(r.rejection.reason());
    sj.job.set_message(r.rejection.message());
    *sj.job.mutable_finished_at() = ToProtoTime(now);
    sj.job.set_last_seen_generation(gen);
    ev.JobChanged(&sj.job, v1::JOB_STATE_UNSPECIFIED);
    c.decisions.push_back(
        MakeDecision(&c.meta, r.spec.id(), DecisionKind::kReject,
                     r.rejection.message(), gen, now, sj.job.revision()));
    c.Put(sj);
    resp.set_rejected(resp.rejected() + 1);
  }

  // Absent non-terminal jobs: cancel (queued) or ask to stop (running).
  const int64_t running_total =
      static_cast<int64_t>(by_state_[v1::JOB_STATE_ADMITTED].size() +
                           by_state_[v1::JOB_STATE_RUNNING].size());
  const bool any_absent =
      present_active < by_state_[v1::JOB_STATE_QUEUED].size() +
                           by_state_[v1::JOB_STATE_ADMITTED].size() +
                           by_state_[v1::JOB_STATE_RUNNING].size();
  std::vector<const StoredRecord*> to_stop;
  for (JobState s : {v1::JOB_STATE_ADMITTED, v1::JOB_STATE_RUNNING}) {
    if (!any_absent) break;
    for (const auto& [id, record] : by_state_[s]) {
      if (jobs.at(id).seen == pass) continue;
      if (record->stop_intent() == StopIntent::kCancel) continue;  // already asked
      to_stop.push_back(record.get());
    }
  }
  if (!request.options.allow_mass_cancel && running_total > 0 &&
      to_stop.size() > static_cast<size_t>(std::max(0, request.options.mass_cancel_min_jobs)) &&
      static_cast<double>(to_stop.size()) >
          request.options.max_cancel_fraction *
              static_cast<double>(running_total)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "snapshot generation %d would cancel %d of %d running jobs (more "
        "than %.0f%% and more than %d); refused: set allow_mass_cancel if this is intended",
        gen, to_stop.size(), running_total,
        request.options.max_cancel_fraction * 100, request.options.mass_cancel_min_jobs));
  }
  const std::string cancel_reason =
      absl::StrCat("absent from ", gen_reason);
  for (const auto& [id, record] : by_state_[v1::JOB_STATE_QUEUED]) {
    if (!any_absent) break;
    if (jobs.at(id).seen == pass) continue;
    StoredJob sj = record->Decode();
    sj.job.set_state(v1::JOB_STATE_CANCELLED);
    sj.job.set_message(cancel_reason);
    *sj.job.mutable_finished_at() = ToProtoTime(now);
    ev.JobChanged(&sj.job, v1::JOB_STATE_QUEUED);
    c.decisions.push_back(MakeDecision(&c.meta, std::string(id),
                                       DecisionKind::kCancel, cancel_reason,
                                       gen, now, sj.job.revision()));
    c.Put(sj);
    result->cancelled_ids.emplace_back(id);
  }
  for (const StoredRecord* p : to_stop) {
    StoredJob sj = p->Decode();
    sj.stop_intent = StopIntent::kCancel;
    c.decisions.push_back(MakeDecision(&c.meta, sj.job.spec().id(),
                                       DecisionKind::kCancel, cancel_reason,
                                       gen, now, 0));
    result->stop_requested_ids.push_back(sj.job.spec().id());
    c.Put(sj);
  }
  resp.set_cancelled(static_cast<int32_t>(result->cancelled_ids.size() +
                                          result->stop_requested_ids.size()));

  // A sync that changed no job (no record, decision or event written; a
  // job-server pushing every few seconds sends mostly these) writes its
  // generation but no event: the event log is about jobs. The generation is
  // in the sync's answer and in GetPlan (last_applied_generation).
  if (!c.put_jobs.empty() || !c.decisions.empty() || !c.events.empty()) {
    Event applied;
    applied.set_type(v1::EVENT_TYPE_SNAPSHOT_APPLIED);
    applied.set_generation(gen);
    applied.set_message(absl::StrFormat(
        "generation %d: %d added, %d updated, %d unchanged, %d cancelled, %d "
        "rejected",
        gen, resp.added(), resp.updated(), resp.unchanged(), resp.cancelled(),
        resp.rejected()));
    ev.Append(std::move(applied));
  }
  c.meta.last_generation = gen;
  c.meta.snapshot_digest = request.digest;
  c.meta.snapshot_digest_version = request.digest != 0 ? kFingerprintVersion : 0;
  c.meta.requeue_oom_once = request.requeue_oom_once;
  resp.set_revision(c.meta.revision);
  result->job_writes = static_cast<int64_t>(c.put_jobs.size());
  return absl::OkStatus();
}

}  // namespace berth
