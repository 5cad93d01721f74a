// now: the plan for the file as-is.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "planner/forecast/eta.h"
#include "planner/explain/explain.h"
#include "planner/simulator/simulator.h"
#include "planner/plan/plan.h"
#include "planner/model/reasons.h"
#include "planner/base/status_macros.h"
#include "tools/plan/commands.h"
#include "tools/plan/common.h"
#include "tools/plan/state_at.h"
#include "planner/base/units.h"

namespace berth {
namespace plan {
namespace {

// What the listing renders from: the plan and its forecast, kept until the
// report is written. The per-job tables make their rows from these on demand
// (Table::make_row), so a million-job listing holds no cells.
struct NowListing {
  planner::State state;
  planner::PlanResult plan;
  // Made as far as the listed rows need (a listing cut by --limit pays for
  // the forecast plans that start its rows, not for the whole queue's).
  std::unique_ptr<planner::StartEstimateTable> estimates;
  // Decisions listed (the first `shown`) and, of them, those with a binding
  // dimension (the shortfalls table's rows).
  size_t shown = 0;
  std::vector<size_t> with_shortfall;
  Report report;
};

Cell Amount(planner::Dimension dim, int64_t v) {
  if (v == planner::Amounts::kUnlimited) return Cell::Int(v, "unlimited");
  switch (dim) {
    case planner::Dimension::kMemory: return BytesCell(v);
    case planner::Dimension::kCpu: return CpuCell(v);
    default: return Cell::Int(v, absl::StrCat(v, v == 1 ? " job" : " jobs"));
  }
}

// Row k of the decisions table: decision k (ranking order).
std::vector<Cell> DecisionRow(const NowListing& l, size_t k) {
  const planner::Decision& d = l.plan.decisions[k];
  const planner::QueuedJob& q = l.state.queued[d.job];
  const planner::StartEstimate e = (*l.estimates)[k];
  Cell eta_cell = Cell::Null();
  if (e.kind != planner::EtaKind::kUnknown) {
    const absl::Duration in_t = e.time - l.plan.now;
    std::string human = "now";
    if (e.kind == planner::EtaKind::kReserved) {
      human = absl::StrCat("+", FormatHumanDuration(in_t), " (reserved)");
    } else if (e.kind == planner::EtaKind::kIfEstimatesHold) {
      human = absl::StrCat("~+", FormatHumanDuration(in_t));
    } else if (e.kind == planner::EtaKind::kBeyondForecast) {
      human = absl::StrCat(">+", FormatHumanDuration(in_t));
    }
    eta_cell = Cell::Num(absl::ToDoubleSeconds(in_t), human);
  }
  const int32_t aged = planner::EffectivePriority(q, l.plan);
  const std::optional<planner::Suggestion> suggestion =
      planner::SuggestionOf(l.state, l.plan, k);
  std::vector<Cell> row;
  row.reserve(13);
  row.push_back(Cell::Int(static_cast<int64_t>(k) + 1));
  row.push_back(Cell::Str(q.id));
  row.push_back(Cell::Str(q.workspace));
  row.push_back(Cell::Int(q.priority));
  row.push_back(BytesCell(q.resources.memory_bytes));
  row.push_back(CpuCell(q.resources.cpu_millis));
  row.push_back(Cell::Str(std::string(planner::VerdictName(d.verdict))));
  row.push_back(Cell::Str(std::string(planner::ReasonName(d.reason))));
  row.push_back(Cell::Str(planner::DecisionSummary(l.state, l.plan, k)));
  row.push_back(std::move(eta_cell));
  row.push_back(Cell::Str(std::string(planner::EtaKindName(e.kind))));
  row.push_back(aged != q.priority ? Cell::Int(aged) : Cell::Null(""));
  row.push_back(suggestion ? Cell::Str(suggestion->text) : Cell::Null(""));
  return row;
}

// Row i of the shortfalls table: the i-th listed waiting job with a binding
// dimension.
std::vector<Cell> ShortfallRow(const NowListing& l, size_t i) {
  const planner::Decision& d = l.plan.decisions[l.with_shortfall[i]];
  const planner::Shortfall sf = *planner::ShortfallOf(d);
  return {Cell::Str(l.state.queued[d.job].id),
          Cell::Str(std::string(planner::DimensionName(sf.dimension))),
          Amount(sf.dimension, sf.needed), Amount(sf.dimension, sf.free),
          Amount(sf.dimension, sf.capacity), Amount(sf.dimension, sf.shortfall)};
}

}  // namespace

absl::StatusOr<CommandOutput> RunNow(const std::vector<std::string>& argv,
                                     const CommandEnv& env) {
  ASSIGN_OR_RETURN(Setup s, Prepare(argv, "now",
                                    {{"at"}, {"timings", false}, {"limit"}, {"state-out"}}, false));
  // --limit N: list only the first N queued jobs in ranking order (the
  // summary counts all of them).
  int64_t limit = -1;
  if (s.args.Has("limit")) {
    const std::string text = s.args.Get("limit");
    if (!absl::SimpleAtoi(text, &limit) || limit < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--limit: \"", text, "\": expected a whole number >= 0"));
    }
  }
  planner::Budgets budgets = OnlyBudgets(s);
  absl::Duration at = absl::ZeroDuration();
  if (s.args.Has("at")) {
    ASSIGN_OR_RETURN(at, ParseHumanDuration("--at", s.args.Get("at")));
  }
  planner::SimInput in = std::move(s.input.sim);
  CommandOutput out;
  if (at > absl::ZeroDuration()) {
    // The moment `at` of the run `simulate` makes: jobs that ran by then
    // ran, those running hold their capacity (state_at.h).
    ASSIGN_OR_RETURN(in, RunUntil(s, std::move(in), budgets, at, false, &out));
  }
  // Jobs not yet in the queue (their own arrival, or a dependency's, is
  // later) are absent, as in `simulate`.
  const std::vector<absl::Time> arrival = planner::ArrivalTimes(in);
  auto listing = std::make_shared<NowListing>();
  planner::State& state = listing->state;
  state.running = in.running;
  // What the plans before this moment left (the file's plannerMemory, or
  // the run's at --at): holder, fair turns, aging's top.
  planner::RestoreMemory(in.memory, state);
  state.queued.reserve(in.jobs.size());
  for (size_t i = 0; i < in.jobs.size(); ++i) {
    if (arrival[i] > in.start) continue;
    state.queued.push_back(std::move(in.jobs[i].job));
    // Dated from when it was first seen, as the simulator and berthd do:
    // queued at its arrival (what aging and fair turns count from).
    if (state.queued.back().created_at <= absl::UnixEpoch()) {
      state.queued.back().created_at = arrival[i];
    }
    if (state.queued.back().queued_at <= absl::UnixEpoch()) {
      state.queued.back().queued_at = arrival[i];
    }
  }
  const absl::Time plan_start = absl::Now();
  listing->plan = planner::Plan(state, budgets, s.policy, in.start);
  const planner::PlanResult& plan = listing->plan;
  const absl::Time eta_start = absl::Now();
  // ETAs: the planner's bounded forward forecast of this state
  // (planner/forecast/eta.h), as berthd computes them: on the executor
  // model `simulate` plays.
  planner::ForecastOptions forecast_options;
  forecast_options.executor = ExecutorModelOf(s);
  listing->estimates = std::make_unique<planner::StartEstimateTable>(state, budgets, s.policy,
                                                                     plan, forecast_options);
  const planner::StartEstimateTable& estimates = *listing->estimates;
  const size_t shown = limit < 0 ? plan.decisions.size()
                                 : std::min(plan.decisions.size(), static_cast<size_t>(limit));
  if (limit < 0) {
    estimates.Complete();
  } else {
    for (size_t k = 0; k < shown; ++k) (void)estimates[k];
  }
  const absl::Time eta_end = absl::Now();
  (void)env;

  Report& rep = listing->report;
  rep.title = absl::StrCat("Plan now: ", s.input.description.empty() ? s.input.path
                                                                    : s.input.description);
  auto add = [&rep](std::string key, std::string label, Cell c) {
    rep.summary.push_back({std::move(key), std::move(label), std::move(c)});
  };
  add("file", "file", Cell::Str(s.input.path));
  if (s.args.Has("timings")) {
    // Wall times of this run (not deterministic: only with --timings).
    add("load_s", "reading the file", DurationCell(s.load_time));
    add("plan_s", "planning", DurationCell(eta_start - plan_start));
    add("estimates_s", "start estimates", DurationCell(eta_end - eta_start));
  }
  add("now", "now", Cell::Str(absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", in.start, absl::UTCTimeZone())));
  if (s.input.start_from_file_times) {
    add("now_from", "now taken from",
        Cell::Str("the file's latest createdAt, queuedAt or startedAt (it has no startTime)"));
  }
  add("budgets", "budgets", Cell::Str(DescribeBudgets(budgets)));
  add("running", "running", Cell::Int(static_cast<int64_t>(in.running.size())));
  add("queued", "queued", Cell::Int(static_cast<int64_t>(state.queued.size())));
  add("admitted", "admitted now", Cell::Int(plan.admitted_count));
  if (!estimates.complete()) {
    add("forecast_covers_s", "ETA forecast covers",
        Cell::Null("the listed jobs (--limit): made no further"));
  } else if (estimates.bounded()) {
    add("forecast_covers_s", "ETA forecast covers",
        DurationCell(estimates.covered() - in.start));
  }
  if (limit >= 0) add("shown", "jobs listed (--limit)", Cell::Int(static_cast<int64_t>(shown)));
  add("memory_used_before_bytes", "memory in use", BytesCell(plan.used_before.memory_bytes));
  add("memory_used_after_bytes", "memory after plan", BytesCell(plan.used_after.memory_bytes));
  add("cpu_used_after_millis", "cpu after plan", CpuCell(plan.used_after.cpu_millis));
  add("workers_after", "workers after plan", Cell::Int(plan.used_after.workers));
  if (plan.reserved_decision >= 0) {
    const planner::Decision& d = plan.decisions[plan.reserved_decision];
    add("reservation_job", "reservation for", Cell::Str(state.queued[d.job].id));
    add("reservation_in_s", "  starting in",
        DurationCell(plan.reservation_start - plan.now));
  }
  // The input's jobs were moved into the state; what is left of them is not
  // needed while the listing is written.
  std::vector<planner::SimJob>().swap(in.jobs);
  listing->shown = shown;
  for (size_t k = 0; k < shown; ++k) {
    const planner::Decision& d = plan.decisions[k];
    if (d.verdict == planner::Verdict::kWait && planner::ShortfallOf(d)) {
      listing->with_shortfall.push_back(k);
    }
  }
  // Both per-job tables make their rows on demand from the plan.
  const NowListing* l = listing.get();
  Table t;
  t.name = "decisions";
  t.title = "Queued jobs in ranking order";
  t.columns = {{"position", "#"},
               {"job", "job"},
               {"workspace", "workspace"},
               {"priority", "prio"},
               {"memory_bytes", "memory"},
               {"cpu_millis", "cpu"},
               {"verdict", "verdict"},
               {"reason", "reason"},
               {"summary", "why"},
               {"eta_s", "ETA"},
               {"eta_kind", "ETA kind"},
               {"aged_priority", "aged to"},
               {"smallest_change", "smallest change"}};
  t.row_count = shown;
  t.make_row = [l](size_t k) { return DecisionRow(*l, k); };
  Table shortfalls;
  shortfalls.name = "shortfalls";
  shortfalls.title = "Binding dimension of each waiting job";
  shortfalls.columns = {{"job", "job"},           {"dimension", "dimension"},
                        {"needed", "needs"},       {"free", "free"},
                        {"capacity", "capacity"},  {"shortfall", "short by"}};
  shortfalls.row_count = listing->with_shortfall.size();
  shortfalls.make_row = [l](size_t i) { return ShortfallRow(*l, i); };
  rep.tables.push_back(std::move(t));
  rep.tables.push_back(std::move(shortfalls));
  rep.notes.push_back(
      "ETA: \"(reserved)\" is the head-of-line reservation, a start Berth keeps unless "
      "estimates prove wrong or a higher priority arrives; \"~\" is when the job starts "
      "if every estimate holds and nothing else arrives (the planner's forward forecast "
      "of this state, as berthd's); \">\": beyond the forecast's bound, after that; "
      "\"-\": no start exists (paused, rejected, never fits). \"aged to\": the "
      "priority aging ranked a job with (--aging-interval). Binding dimension: for "
      "WAITING_FOR_PRIORITY, \"free\" is what the reservation leaves spare when it starts "
      "(the job fits what is free now, and would still be running then); a negative "
      "\"free\" means running jobs hold more than a budget set below them.");
  for (const std::string& note : s.budgets.notes) rep.notes.push_back(note);
  // Rendered as main() writes it: the listing is never held as cells or text.
  out.write = [listing, format = s.format](std::ostream* os) {
    Render(listing->report, format, os);
  };
  return out;
}

}  // namespace plan
}  // namespace berth
