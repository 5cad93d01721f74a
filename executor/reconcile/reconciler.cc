#include "executor/reconcile/reconciler.h"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "executor/reconcile/pass_work.h"
#include "absl/strings/str_cat.h"
#include "planner/convert/convert.h"
#include "planner/explain/explain.h"
#include "planner/base/units.h"
#include "planner/base/crash_point.h"
#include "planner/base/log.h"
#include "planner/base/status_macros.h"

namespace berth {

namespace {

// Runs f(i) for i in [0, n) on at most `parallelism` threads.
template <typename F>
void ParallelFor(size_t n, int parallelism, F f) {
  if (n == 0) return;
  size_t threads = std::min<size_t>(n, std::max(1, parallelism));
  if (threads == 1) {
    for (size_t i = 0; i < n; ++i) f(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (size_t i = next++; i < n; i = next++) f(i);
    });
  }
  for (std::thread& th : pool) th.join();
}

}  // namespace

Reconciler::Reconciler(Store& store, Runtime& runtime, Clock& clock,
                       PlanCache& plans, ReconcilerOptions options)
    : store_(store),
      runtime_(runtime),
      clock_(clock),
      plans_(plans),
      options_(std::move(options)),
      start_retries_(options_.start_retries),
      starter_(options_.start_parallelism),
      log_keeper_(options_.log_capture_parallelism) {
  if (options_.hold_orphans_until_sync) orphan_hold_generation_ = store_.LastAppliedGeneration();
}

bool Reconciler::OnRuntimeEvent(const RuntimeEvent& event) {
  return exit_hints_.Note(event, clock_.Now());
}

bool Reconciler::runtime_healthy() const {
  absl::MutexLock lock(&mu_);
  return runtime_healthy_;
}

absl::StatusOr<PassStats> Reconciler::RunPass() {
  Work work;
  work.now = clock_.Now();
  // Starts that finish after this are not in the list below: Observe leaves
  // their jobs to the next pass.
  work.start_mark = starter_.Mark();
  absl::StatusOr<ContainerList> list = runtime_.List();
  {
    absl::MutexLock lock(&mu_);
    runtime_healthy_ = list.ok();
  }
  if (!list.ok()) {
    if (!outage_since_.has_value()) outage_since_ = last_ok_;
    // A runtime outage never fails a job: observe nothing, admit nothing.
    Log(LogLevel::kWarning, "runtime unavailable; pass skipped",
        {{"error", list.status().ToString()}});
    // Readers still get current plans: PlanCache::Get plans on demand.
    return work.stats;
  }
  work.stats.runtime_ok = true;
  work.containers = *std::move(list);
  if (options_.held != nullptr) {
    std::map<std::string, std::string> holds;
    for (const auto& [id, c] : work.containers) {
      if (!c.held.empty()) holds[id] = c.held;
    }
    options_.held->Replace(std::move(holds));
  }
  if (options_.node_budgets != nullptr) options_.node_budgets->ObserveTasks(work.containers);
  if (outage_since_.has_value()) {
    outage_from_ = *outage_since_;
    outage_to_ = work.now;
    outage_since_.reset();
    Log(LogLevel::kInfo, "runtime reachable again",
        {{"outage_from", absl::FormatTime(outage_from_)}, {"outage_to", absl::FormatTime(outage_to_)}});
  }
  last_ok_ = work.now;

  if (options_.node_budgets != nullptr) {
    // One node list per pass: drained or down nodes stop receiving jobs,
    // joined ones add capacity. On error the last inventory stays.
    absl::StatusOr<std::vector<NodeInfo>> nodes = runtime_.ListNodes();
    if (nodes.ok()) {
      options_.node_budgets->Update(*nodes);
      for (const NodeInfo& n : *nodes) {
        if (n.availability == NodeAvailability::kDrain) work.drained_nodes.insert(n.id);
      }
      ReportStrays(*nodes, work.now);
    } else {
      Log(LogLevel::kWarning, "node list failed; planning with the last one",
          {{"error", nodes.status().ToString()}});
    }
  }
  if (options_.usage != nullptr) {
    // One sweep of the cgroup files per pass; a runtime that cannot observe
    // usage (UNIMPLEMENTED) records run times only.
    absl::StatusOr<UsageSamples> samples = runtime_.SampleUsage(work.containers);
    if (samples.ok()) options_.usage->Record(*samples);
  }
  WriteOwedMetadata();  // the first pass only
  RETURN_IF_ERROR(Observe(work));
  ParallelFor(work.to_remove.size(), std::max(options_.start_parallelism, 8),
              [&](size_t i) { (void)runtime_.Remove(work.to_remove[i]); });
  if (options_.usage != nullptr) options_.usage->Retain(work.containers);
  RETURN_IF_ERROR(Plan(work));
  StartAdmitted(work);
  RETURN_IF_ERROR(StopRequested(work));
  exit_hints_.Expire(work.now);
  starter_.Prune(work.start_mark);
  log_keeper_.Prune(log_keeper_.Mark());
  work.stats.started += started_.exchange(0);
  work.stats.start_failed += start_failed_.exchange(0);
  work.stats.duration = clock_.Now() - work.now;
  return work.stats;
}

absl::Status Reconciler::Plan(Work& work) {
  // Held orphans reserve what the store cannot see: admitting anything
  // could overcommit. The pass after the hold ends plans as usual (the
  // planned revision is left unchanged).
  if (work.stats.orphans_held > 0) {
    if (!hold_reported_) {
      // Once per hold: an operator wondering why nothing starts finds why.
      Log(LogLevel::kWarning,
          "containers of jobs this restored store does not know are held; nothing is admitted "
          "until the first sync after the restore",
          {{"held", work.stats.orphans_held},
           {"generation", static_cast<int64_t>(store_.LastAppliedGeneration())}});
      hold_reported_ = true;
    }
    return absl::OkStatus();
  }
  absl::MutexLock admission(&admission_mu_);
  // Without a new event nothing can have become admissible (time alone only
  // narrows backfill: a job must end before the reservation), so a tick
  // that changed nothing skips the replan.
  const uint64_t revision = store_.CurrentRevision();
  const uint64_t nodes_version =
      options_.node_budgets != nullptr ? options_.node_budgets->version() : 0;
  if (revision == last_planned_revision_ && nodes_version == last_nodes_version_)
    return absl::OkStatus();
  absl::Time started = clock_.Now();
  // From the planner state the cache keeps across passes, updated from the
  // store's events: the admissions only (readers' whole plans are made when
  // a reader asks). Collected under the cache's lock, acted on after it.
  struct Planned {
    std::string id;
    std::string node;  // multi-node: where the planner placed it
  };
  std::vector<Planned> to_admit;
  std::vector<std::pair<std::string, std::string>> dependency_failed;  // id, message
  ASSIGN_OR_RETURN(
      PlanCache::PassPlan pass,
      plans_.PlanAdmissions([&](const planner::State& state, const planner::PlanResult& plan) {
        for (size_t k = 0; k < plan.decisions.size(); ++k) {
          const planner::Decision& d = plan.decisions[k];
          if (d.verdict == planner::Verdict::kAdmit) {
            Planned p{state.queued[d.job].id, ""};
            if (k < plan.placements.size() && plan.placements[k].node >= 0) {
              p.node = plan.nodes[plan.placements[k].node];
            }
            to_admit.push_back(std::move(p));
          } else if (d.verdict == planner::Verdict::kReject &&
                     d.reason == planner::Reason::kDependencyFailed) {
            // Names the dependency: "dependency prep-1 did not succeed".
            dependency_failed.emplace_back(state.queued[d.job].id,
                                           planner::DecisionSummary(state, plan, k));
          }
        }
      }));
  work.stats.plan_latency = clock_.Now() - started;
  work.stats.planned = true;

  const uint64_t generation = store_.LastAppliedGeneration();
  std::vector<DecisionRequest> admits;
  std::vector<ToStart> admitted;
  std::vector<std::pair<StoredJob, RunEvidence>> ran_already;
  for (Planned& p : to_admit) {
    // Few a pass: the whole job, for its container.
    absl::StatusOr<StoredJob> read = store_.GetJob(p.id);
    if (!read.ok() && read.status().code() != absl::StatusCode::kNotFound) return read.status();
    if (!read.ok() || read->job.state() != v1::JOB_STATE_QUEUED) {
      work.stats.more_work = true;  // the store moved under the plan: re-plan
      continue;
    }
    const StoredJob& stored = *read;
    if (std::optional<RunEvidence> e = EvidenceFor(stored.job, nullptr)) {
      ran_already.emplace_back(stored, *std::move(e));  // never run twice
      continue;
    }
    const v1::Job& job = stored.job;
    const v1::JobSpec& spec = job.spec();
    DecisionRequest r;
    r.job_id = spec.id();
    // Multi-node: the planner's node goes with the decision (Job.node) and
    // to the runtime (ContainerSpec::node).
    r.node = std::move(p.node);
    r.kind = DecisionKind::kAdmit;
    r.expected_state = v1::JOB_STATE_QUEUED;
    const int64_t memory = planner::EffectiveMemoryBytes(job);
    r.reason = absl::StrCat("fits: ", FormatBytes(memory), " memory",
                            memory != spec.resources().memory_bytes()
                                ? " (raised after an OOM kill)"
                                : "",
                            ", ", FormatCpu(spec.resources().cpu_millis()));
    r.plan_generation = generation;
    admitted.push_back(ToStart{spec, r.node, job.requeue_count(), memory});
    admits.push_back(std::move(r));
  }
  for (auto& [id, message] : dependency_failed) {
    TransitionRequest t;
    t.job_id = id;
    t.expected_state = v1::JOB_STATE_QUEUED;
    t.new_state = v1::JOB_STATE_FAILED;
    t.failure_cause = v1::FAILURE_CAUSE_DEPENDENCY_FAILED;
    t.message = std::move(message);
    absl::StatusOr<StoredJob> failed = store_.Transition(t, work.now);
    if (failed.ok()) {
      if (options_.on_job_finished) {
        options_.on_job_finished(v1::JOB_STATE_FAILED, v1::FAILURE_CAUSE_DEPENDENCY_FAILED);
      }
      ++work.stats.dependency_failed;
      work.stats.more_work = true;  // its dependants may fail next
    } else if (!IsStale(failed.status())) {
      return failed.status();
    }
  }
  // A run whose log is still being imported is recorded by a later pass:
  // this plan is made again then (its revision has not changed).
  bool replan = false;
  for (const auto& [job, e] : ran_already) {
    if (!RunLogSettled(job.job.spec(), e)) {
      replan = true;
      continue;
    }
    RETURN_IF_ERROR(FinishFromEvidence(work, job, e));
  }
  if (admits.empty()) {
    if (!replan) {
      last_planned_revision_ = pass.revision;
      last_nodes_version_ = pass.nodes_version;
    }
    return absl::OkStatus();
  }
  // Durable (WAL fsync) before any container exists for these jobs.
  // Stamped when committed, not when the pass began: planning and the
  // starts of earlier passes' containers may have taken a while since.
  absl::StatusOr<std::vector<Decision>> recorded =
      store_.RecordDecisions(admits, clock_.Now());
  if (!recorded.ok()) {
    if (IsStale(recorded.status())) {
      work.stats.more_work = true;  // the store moved under the plan: re-plan
      return absl::OkStatus();
    }
    return recorded.status();
  }
  CrashPoint("reconcile.after_admit");  // ADMITTED durable, no container yet
  if (!replan) {
    last_planned_revision_ = pass.revision;
    last_nodes_version_ = pass.nodes_version;
  }
  work.stats.admitted += static_cast<int>(admits.size());
  for (ToStart& s : admitted) work.to_start.push_back(std::move(s));
  return absl::OkStatus();
}

absl::Status Reconciler::StopRequested(Work& work) {
  work.stats.stop_requests = static_cast<int>(work.to_stop.size());
  if (work.to_stop.empty()) return absl::OkStatus();
  ParallelFor(work.to_stop.size(), std::max(options_.start_parallelism, 8),
              [&](size_t i) {
                absl::Status s = runtime_.Stop(work.to_stop[i], options_.stop_grace);
                if (!s.ok() && s.code() != absl::StatusCode::kNotFound) {
                  Log(LogLevel::kWarning, "stop failed; retried next pass",
                      {{"job", work.to_stop[i]}, {"error", s.ToString()}});
                }
              });
  work.stats.more_work = true;  // finalise the stopped jobs at once
  return absl::OkStatus();
}

void Reconciler::ReportStrays(const std::vector<NodeInfo>& nodes, absl::Time now) {
  std::set<std::string> seen;
  for (const NodeInfo& n : nodes) {
    for (const NodeInfo::Stray& s : n.strays) {
      seen.insert(s.task_id);
      if (reported_strays_.count(s.task_id) > 0) continue;
      // Before its container is known the task is named in its place.
      absl::StatusOr<uint64_t> rev = store_.RecordStrayTask(
          s.job_id, s.container_id.empty() ? s.task_id : s.container_id, s.note, now);
      if (!rev.ok()) {
        // Reported again next pass; the runtime's log line already names it.
        Log(LogLevel::kWarning, "could not record a stray task's event",
            {{"job", s.job_id}, {"task", s.task_id}, {"error", rev.status().ToString()}});
        continue;
      }
      reported_strays_.insert(s.task_id);
    }
  }
  // Tasks that ended are forgotten: the set stays as small as the strays.
  for (auto it = reported_strays_.begin(); it != reported_strays_.end();) {
    it = seen.count(*it) > 0 ? std::next(it) : reported_strays_.erase(it);
  }
}

}  // namespace berth
