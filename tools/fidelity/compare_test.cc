#include "tools/fidelity/compare.h"

#include <cmath>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "tools/fidelity/gate.h"
#include "tools/fidelity/kept_run.h"
#include "tools/fidelity/report.h"
#include "tools/fidelity/simulate.h"

namespace berth::fidelity {
namespace {

using google::protobuf::util::TimeUtil;
using testing::ElementsAre;
using testing::HasSubstr;

google::protobuf::Timestamp At(double seconds) {
  return TimeUtil::NanosecondsToTimestamp(static_cast<int64_t>(std::llround(seconds * 1e9)));
}

v1::Job Succeeded(const std::string& id, double admitted, double started, double finished) {
  v1::Job job;
  job.mutable_spec()->set_id(id);
  job.set_state(v1::JOB_STATE_SUCCEEDED);
  *job.mutable_admitted_at() = At(admitted);
  *job.mutable_started_at() = At(started);
  *job.mutable_finished_at() = At(finished);
  return job;
}

// Three jobs pushed at t0 = 1000: a and b admitted by the first pass, c
// later.
KeptRun ThreeJobs() {
  KeptRun run;
  run.t0 = 1000;
  run.jobs["a.000.x"] = Succeeded("a.000.x", 1000.5, 1001.0, 1005.0);
  run.jobs["b.001.x"] = Succeeded("b.001.x", 1000.5, 1001.5, 1006.0);
  run.jobs["c.002.x"] = Succeeded("c.002.x", 1005.2, 1005.4, 1010.0);
  run.died = {{"a.000.x", 1004.9}, {"b.001.x", 1005.8}, {"c.002.x", 1009.5}};
  return run;
}

TEST(MeasureRealTest, OffsetsLatenciesAndMakespan) {
  absl::StatusOr<RealMeasures> real = MeasureReal(ThreeJobs(), 3, 4);
  ASSERT_TRUE(real.ok()) << real.status();
  EXPECT_THAT(real->ids, ElementsAre("a.000.x", "b.001.x", "c.002.x"));
  EXPECT_NEAR(real->admitted.at("c.002.x"), 5.2, 1e-6);
  EXPECT_NEAR(real->makespan_s, 10.0, 1e-6);
  ASSERT_EQ(real->held.size(), 3u);
  EXPECT_NEAR(real->held[1], 0.2, 1e-6);
  // No expected durations: the finish latency is the held median.
  EXPECT_TRUE(real->after_run.empty());
  EXPECT_NEAR(CalibratedFinishLatency(*real), 0.2, 1e-6);  // 0.1, 0.2, 0.5
  const planner::StartFit model = CalibratedStartModel(*real);
  // c alone took 0.2 s; a and b, one pass, 0.5 and 1.0 s (Quantile's
  // median: 1.0): 0.8 s of contention, capped at the 0.2 s alone.
  EXPECT_NEAR(absl::ToDoubleSeconds(model.alone), 0.2, 1e-6);
  EXPECT_NEAR(absl::ToDoubleSeconds(model.contention), 0.2, 1e-6);
}

// With expected durations, the finish latency is how long after its
// nominal run dated from RUNNING each container died: 4.9 - 1.0 - 3.75,
// 5.8 - 1.5 - 4.25, 9.5 - 5.4 - 3.9.
TEST(MeasureRealTest, FinishLatencyCountsFromTheNominalRun) {
  KeptRun run = ThreeJobs();
  const std::map<std::string, double> durations = {
      {"a.000.x", 3.75}, {"b.001.x", 4.25}, {"c.002.x", 3.9}};
  for (const auto& [id, seconds] : durations) {
    google::protobuf::Duration* d = run.jobs[id].mutable_spec()->mutable_expected_duration();
    d->set_seconds(static_cast<int64_t>(seconds));
    d->set_nanos(static_cast<int32_t>((seconds - static_cast<int64_t>(seconds)) * 1e9));
  }
  absl::StatusOr<RealMeasures> real = MeasureReal(run, 3, 4);
  ASSERT_TRUE(real.ok()) << real.status();
  ASSERT_EQ(real->after_run.size(), 3u);
  EXPECT_NEAR(CalibratedFinishLatency(*real), 0.15, 1e-6);  // 0.15, 0.05, 0.2
}

TEST(MeasureRealTest, FailedJobsAreRefused) {
  KeptRun run = ThreeJobs();
  run.jobs["b.001.x"].set_state(v1::JOB_STATE_FAILED);
  absl::StatusOr<RealMeasures> real = MeasureReal(run, 3, 4);
  EXPECT_EQ(real.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(real.status().message(), HasSubstr("1 jobs did not succeed: ['b.001.x']"));
  EXPECT_EQ(MeasureReal(ThreeJobs(), 4, 4).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

Simulation Simulated(double a, double b, double c, double finish_latency) {
  Simulation sim;
  sim.start_latency_s = 0.5;
  sim.finish_latency_s = finish_latency;
  sim.jobs = {{"a.000.x", {a, a + 4}}, {"b.001.x", {b, b + 5}}, {"c.002.x", {c, 9.5}}};
  return sim;
}

TEST(ScoreTest, MakespanErrorTauAndStartError) {
  const RealMeasures real = *MeasureReal(ThreeJobs(), 3, 4);
  absl::StatusOr<SimulationScore> score = Score(real, Simulated(0.5, 0.5, 4.7, 0.0));
  ASSERT_TRUE(score.ok()) << score.status();
  EXPECT_NEAR(score->makespan_s, 9.5, 1e-9);
  EXPECT_NEAR(score->makespan_error, -0.05, 1e-6);
  EXPECT_DOUBLE_EQ(score->tau, 1.0);  // same passes, same order
  EXPECT_NEAR(score->start_error_median_s, 0.0, 1e-6);
  EXPECT_NEAR(score->start_error_p95_s, 0.5, 1e-6);
  // The finish latency counts towards the makespan.
  EXPECT_NEAR(Score(real, Simulated(0.5, 0.5, 4.7, 0.5))->makespan_s, 10.0, 1e-9);
  // Splitting the first pass: a tie on the real side only.
  EXPECT_LT(Score(real, Simulated(0.5, 0.6, 4.7, 0))->tau, 1.0);
}

TEST(ScoreTest, MissingJobIsNotFound) {
  const RealMeasures real = *MeasureReal(ThreeJobs(), 3, 4);
  Simulation sim = Simulated(0.5, 0.5, 4.7, 0);
  sim.jobs.erase("b.001.x");
  EXPECT_EQ(Score(real, sim).status().code(), absl::StatusCode::kNotFound);
}

TEST(RepeatabilityTest, TauOfEachJitteredRunInOrder) {
  const RealMeasures real = *MeasureReal(ThreeJobs(), 3, 4);
  const Simulation calibrated = Simulated(0.5, 0.5, 4.7, 0);
  // c moves before a and b in the second.
  absl::StatusOr<std::vector<double>> taus =
      RepeatTaus(real, calibrated, {calibrated, Simulated(0.5, 0.5, 0.1, 0)});
  ASSERT_TRUE(taus.ok()) << taus.status();
  ASSERT_EQ(taus->size(), 2u);
  EXPECT_DOUBLE_EQ((*taus)[0], 1.0);
  EXPECT_LT((*taus)[1], 0.0);
  EXPECT_TRUE(RepeatTaus(real, calibrated, {})->empty());
}

TEST(RepeatabilityTest, StartNoiseIsTheCountWeightedSpreadElseTheDeviationOfAll) {
  RealMeasures real;
  EXPECT_DOUBLE_EQ(StartNoise(real), 0);
  // No level: every start about the median (0.30): deviations 0.1, 0, 0.02.
  real.start_latency = {0.2, 0.3, 0.32};
  EXPECT_NEAR(StartNoise(real), 0.02, 1e-12);
  real.start_levels = {{1, 0.2, 3, 0.010}, {2, 0.3, 1, 0.050}};
  EXPECT_DOUBLE_EQ(StartNoise(real), (3 * 0.010 + 0.050) / 4);
}

TEST(CompareAgainstTest, SameWorkloadUpToTheTag) {
  const RealMeasures real = *MeasureReal(ThreeJobs(), 3, 4);
  KeptRun other;
  other.t0 = 2000;
  other.jobs["a.000.y"] = Succeeded("a.000.y", 2000.5, 2001, 2005);
  other.jobs["b.001.y"] = Succeeded("b.001.y", 2000.5, 2001, 2006);
  other.jobs["c.002.y"] = Succeeded("c.002.y", 2005.2, 2006, 2011);
  absl::StatusOr<AgainstReal> against = CompareAgainst(real, other, "/kept/other");
  ASSERT_TRUE(against.ok()) << against.status();
  EXPECT_DOUBLE_EQ(against->tau, 1.0);
  EXPECT_NEAR(against->makespan_difference, 0.1, 1e-6);
  other.jobs.erase("c.002.y");
  EXPECT_EQ(CompareAgainst(real, other, "/kept/other").status().code(),
            absl::StatusCode::kInvalidArgument);
}

FidelityResult Result(double calibrated_error, double calibrated_tau, double stability) {
  FidelityResult r;
  SimulationScore calibrated;
  calibrated.makespan_error = calibrated_error;
  calibrated.tau = calibrated_tau;
  SimulationScore planner_only;
  planner_only.makespan_error = -0.14;
  planner_only.tau = 0.9;
  r.simulations = {{"planner_only", planner_only}, {"calibrated", calibrated}};
  r.stability_tau = stability;
  return r;
}

GateOptions CiGate() {
  GateOptions gate;
  gate.max_makespan_error = 0.05;
  gate.min_tau = 0.95;
  gate.min_stability = 0.99;
  return gate;
}

TEST(GateTest, DefaultGateIsCalibrated) {
  // planner_only misses both bounds but is not gated.
  absl::StatusOr<std::vector<std::string>> problems = GateProblems(Result(0.03, 0.97, 1.0), CiGate());
  ASSERT_TRUE(problems.ok());
  EXPECT_TRUE(problems->empty());
}

TEST(GateTest, EachBoundFailsOnItsOwn) {
  EXPECT_THAT(*GateProblems(Result(-0.06, 0.97, 1.0), CiGate()),
              ElementsAre("calibrated: makespan error -6.0% beyond ±5.0%"));
  EXPECT_THAT(*GateProblems(Result(0.01, 0.94, 1.0), CiGate()),
              ElementsAre("calibrated: tau 0.940 below 0.95"));
  EXPECT_THAT(*GateProblems(Result(0.01, 0.97, 0.98), CiGate()),
              ElementsAre(HasSubstr("near-tie (repeatability: median tau 0.980 of the simulation")));
  // On the bound passes.
  EXPECT_TRUE(GateProblems(Result(0.05, 0.95, 0.99), CiGate())->empty());
}

TEST(GateTest, NamedGatesAndMissingSimulation) {
  GateOptions gate = CiGate();
  gate.gates = {"calibrated", "planner_only"};
  EXPECT_THAT(*GateProblems(Result(0.01, 0.97, 1.0), gate),
              ElementsAre("planner_only: makespan error -14.0% beyond ±5.0%",
                          "planner_only: tau 0.900 below 0.95"));
  gate.gates = {"metrics"};
  EXPECT_EQ(GateProblems(Result(0.01, 0.97, 1.0), gate).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(GateTest, NoBoundsNoProblems) {
  EXPECT_TRUE(GateProblems(Result(-0.5, 0.1, 0.1), GateOptions{})->empty());
}

TEST(ParseSimulationReportTest, ReadsSummaryAndJobs) {
  absl::StatusOr<Simulation> sim = ParseSimulationReport(R"({
    "title": "Simulation", "summary": {"start_latency_s": 0.25, "finish_latency_s": 0.1},
    "tables": {"jobs": [{"job": "a", "admitted_s": 0, "finished_s": 4.5},
                        {"job": "b", "admitted_s": 1.5, "finished_s": 6}]}})");
  ASSERT_TRUE(sim.ok()) << sim.status();
  EXPECT_DOUBLE_EQ(sim->start_latency_s, 0.25);
  EXPECT_DOUBLE_EQ(sim->finish_latency_s, 0.1);
  EXPECT_DOUBLE_EQ(sim->jobs.at("b").admitted_s, 1.5);
  EXPECT_DOUBLE_EQ(sim->jobs.at("a").finished_s, 4.5);
  EXPECT_EQ(ParseSimulationReport("{\"summary\": {}}").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseSimulationReport("not json").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ReportTest, PassesShowTheFirstDifference) {
  // Pass 0 agrees; the real pass 1 admitted b and c together, the
  // simulation b alone.
  const std::string out = RenderPasses({{"a", 0.5}, {"b", 5.2}, {"c", 5.2}},
                                       {{"a", 0.5}, {"b", 5.1}, {"c", 5.3}});
  EXPECT_EQ(out,
            "   pass 0: real     0.50s 1  sim     0.50s \n"
            "!= pass 1: real     5.20s ['c']  sim     5.10s []\n"
            "!= pass 2: real      nans []  sim     5.30s ['c']\n");
}

TEST(KeptRunTest, WriteThenRead) {
  const std::string dir = testing::TempDir();
  KeptRun run = ThreeJobs();
  run.scale = 1.0;
  run.seed = 7;
  run.load_average = 0.5;
  ASSERT_TRUE(WriteRealJson(dir, run).ok());
  ASSERT_TRUE(WriteDieFile(dir, {{1004900000000, "a.000.x"}, {1009500000000, "c.002.x"},
                                 {1009600000000, "c.002.x"}})
                  .ok());
  absl::StatusOr<KeptRun> read = ReadKeptRun(dir);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_DOUBLE_EQ(read->t0, 1000);
  EXPECT_DOUBLE_EQ(read->scale, 1.0);
  EXPECT_EQ(read->seed, 7u);
  ASSERT_EQ(read->jobs.size(), 3u);
  EXPECT_EQ(read->jobs.at("c.002.x").admitted_at().nanos(), 200000000);
  // The first exit of a job counts.
  EXPECT_THAT(read->died, ElementsAre(testing::Pair("a.000.x", 1004.9),
                                      testing::Pair("c.002.x", 1009.5)));
  EXPECT_EQ(ReadKeptRun(absl::StrCat(dir, "/missing")).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace berth::fidelity
