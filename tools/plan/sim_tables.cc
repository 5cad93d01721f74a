#include "tools/plan/sim_tables.h"

#include <algorithm>
#include <string>
#include <vector>

#include "planner/model/reasons.h"

namespace berth {
namespace plan {
namespace {

// Seconds since `start`, or null for InfiniteFuture().
Cell Offset(absl::Time t, absl::Time start) {
  if (t == absl::InfiniteFuture()) return Cell::Null();
  return Cell::Num(absl::ToDoubleSeconds(t - start));
}

bool Started(planner::SimOutcome o) {
  return o == planner::SimOutcome::kSucceeded || o == planner::SimOutcome::kFailed;
}

}  // namespace

absl::Duration ExecutorTolerance(const planner::SimOptions& opt) {
  auto pos = [](absl::Duration d) { return std::max(d, absl::ZeroDuration()); };
  const int64_t others = std::max<int64_t>(0, opt.start_parallelism - 1);
  return pos(opt.start_latency) + pos(opt.start_contention) * others +
         pos(opt.start_jitter) + pos(opt.finish_latency);
}

Table JobsTable(const planner::SimInput& in, const planner::SimResult& r,
                absl::Duration tolerance) {
  Table t;
  t.name = "jobs";
  t.title = "Jobs";
  t.columns = {{"job", "job"},
               {"workspace", "workspace"},
               {"priority", "prio"},
               {"outcome", "outcome"},
               {"arrival_s", "arrival"},
               {"ready_s", "ready"},
               {"admitted_s", "admitted"},
               {"started_s", "started"},
               {"finished_s", "finished"},
               {"wait_s", "wait"},
               {"promised_at_s", "reserved at"},
               {"promised_s", "promised start"},
               {"promise_late_s", "late by"},
               {"promise_kept", "kept"},
               {"main_wait_reason", "mostly waited for"}};
  t.rows.reserve(in.jobs.size());
  for (size_t i = 0; i < in.jobs.size() && i < r.jobs.size(); ++i) {
    const planner::QueuedJob& q = in.jobs[i].job;
    const planner::SimJobResult& j = r.jobs[i];
    const bool started = Started(j.outcome);
    const absl::Time never = absl::InfiniteFuture();
    Cell kept = Cell::Null();
    Cell late = Cell::Null();
    if (j.first_promise != never && started) {
      const absl::Duration by = std::max(absl::ZeroDuration(), j.start - j.first_promise);
      kept = Cell::Bool(by <= tolerance);
      late = Cell::Num(absl::ToDoubleSeconds(by));
    }
    t.rows.push_back({Cell::Str(q.id), Cell::Str(q.workspace), Cell::Int(q.priority),
                      Cell::Str(std::string(planner::SimOutcomeName(j.outcome))),
                      Offset(j.arrival, r.start), Offset(j.ready, r.start),
                      Offset(started ? j.start : never, r.start),
                      Offset(started ? j.run_start : never, r.start),
                      Offset(started ? j.run_end : never, r.start),
                      started ? Cell::Num(absl::ToDoubleSeconds(j.wait())) : Cell::Null(),
                      Offset(j.first_promised_at, r.start), Offset(j.first_promise, r.start),
                      std::move(late), std::move(kept),
                      j.main_wait_reason == planner::Reason::kUnspecified
                          ? Cell::Null()
                          : Cell::Str(std::string(planner::ReasonName(j.main_wait_reason)))});
  }
  return t;
}

Table TimelineTable(const planner::SimResult& r) {
  Table t;
  t.name = "timeline";
  t.title = "Usage timeline";
  t.columns = {{"time_s", "time"},
               {"memory_bytes", "memory reserved"},
               {"cpu_millis", "cpu reserved"},
               {"workers", "worker slots"},
               {"queued", "queued"}};
  t.rows.reserve(r.timeline.size());
  for (const planner::SimUsagePoint& p : r.timeline) {
    t.rows.push_back({Offset(p.time, r.start), Cell::Int(p.memory_bytes),
                      Cell::Int(p.cpu_millis), Cell::Int(p.workers), Cell::Int(p.queued)});
  }
  return t;
}

}  // namespace plan
}  // namespace berth
