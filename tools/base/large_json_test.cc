#include "tools/base/large_json.h"

#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "berth/v1/files.pb.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "planner/base/proto_json.h"
#include "tools/base/large_document.h"

namespace berth {
namespace {

using google::protobuf::util::MessageDifferencer;

std::string ReadExample(const std::string& name) {
  std::ifstream in("examples/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// ParseLargeJsonMessage gives exactly what the reference parser gives: the
// same status (code and text) and, when both succeed, equal messages.
template <typename M>
void ExpectSameAsReference(const std::string& json, int threads, LargeJsonStats* stats = nullptr) {
  M reference, large;
  const absl::Status want = ParseJsonMessage(json, "f.json", &reference);
  const absl::Status got =
      ParseLargeJsonMessage(json, "f.json", LargeJsonOptions{"jobs", threads}, &large, stats);
  ASSERT_EQ(got, want) << json;
  if (want.ok()) {
    EXPECT_TRUE(MessageDifferencer::Equals(reference, large)) << json;
  }
}

TEST(LargeJsonTest, ExamplesTakeTheFastPathAndEqualTheReference) {
  for (const char* name : {"burst.json", "starvation.json", "week.json"}) {
    const std::string json = ReadExample(name);
    ASSERT_FALSE(json.empty()) << name;
    for (int threads : {1, 3}) {
      LargeJsonStats stats;
      ExpectSameAsReference<v1::Workload>(json, threads, &stats);
      EXPECT_TRUE(stats.fast) << name;
      EXPECT_GT(stats.elements, 10) << name;
    }
  }
  for (const char* name : {"snapshot-demo.json", "snapshot-small.json"}) {
    LargeJsonStats stats;
    ExpectSameAsReference<v1::Snapshot>(ReadExample(name), 2, &stats);
    EXPECT_TRUE(stats.fast) << name;
  }
}

// Every field kind the jobs use, in both name forms.
constexpr char kRich[] = R"({"description":"d","startTime":"2026-11-23T09:00:00Z",
 "budgets":{"memoryBytes":"1099511627776","cpuMillis":"256000","maxWorkers":64,
   "pools":{"database":{"maxWorkers":8}},"workspaceMaxWorkers":16},
 "jobs":[
  {"spec":{"id":"a.1","workspace":"a","action":"x","image":"berth-test/busybox:1",
    "argv":["sh","-c","echo \"hi\" \u00e9"],"env":{"K":"V","L":""},"priority":-3,
    "resources":{"cpuMillis":2000,"memoryBytes":"1073741824"},"pool":"database",
    "expectedDuration":"600s","max_duration":"1.5s","dependsOn":[],
    "createdAt":"2026-11-22T01:02:03.250Z","labels":{"k":"v"}},
   "arrivalOffset":"-0.000000001s","actualDuration":"12s","fails":true,
   "actualPeakMemoryBytes":123},
  {"spec":{"id":"a.2","workspace":"a","depends_on":["a.1"],"priority":"7"}} ,
  { }
 ],
 "running":[{"spec":{"id":"r","workspace":"a"},"startedAt":"2026-11-23T08:00:00Z"}]})";

TEST(LargeJsonTest, EveryFieldKindEqualsTheReference) {
  LargeJsonStats stats;
  ExpectSameAsReference<v1::Workload>(kRich, 2, &stats);
  EXPECT_TRUE(stats.fast);
  EXPECT_EQ(stats.elements, 3);
}

TEST(LargeJsonTest, WhatTheFastPathLeavesGoesToTheReference) {
  // Each is either an error the reference reports or a form only it reads.
  const std::vector<std::string> cases = {
      R"({"jobs":[{"spec":null}]})",
      R"({"jobs":[{"spec":{"id":"a","id":"b"}}]})",
      R"({"jobs":[{"spec":{"id":"a","nope":1}}]})",
      R"({"jobs":[{"spec":{"priority":1.5}}]})",
      R"({"jobs":[{"spec":{"priority":"1e3"}}]})",
      R"({"jobs":[{"spec":{"createdAt":"2026-02-30T00:00:00Z"}}]})",
      R"({"jobs":[{"spec":{"createdAt":"2026-11-22T01:02:03+01:00"}}]})",
      R"({"jobs":[{"spec":{"expectedDuration":"10"}}]})",
      R"({"jobs":[{"spec":{"env":{"a":"1","a":"2"}}}]})",
      R"({"jobs":[{},,{}]})",
      R"({"jobs":[{},]})",
      R"({"jobs":[1]})",
      R"({"jobs":[{}],"jobs":[{}]})",
      R"({"jo\u0062s":[{}]})",
      R"({"jobs":{}})",
      R"({"jobs":[{"spec":{"id":"a"}}]} trailing)",
      R"({"jobs":[{"spec":{"id":"a"}})",
  };
  for (const std::string& json : cases) {
    LargeJsonStats stats;
    ExpectSameAsReference<v1::Workload>(json, 2, &stats);
    EXPECT_FALSE(stats.fast) << json;
  }
}

// Seeded mutations of kRich (bytes deleted, duplicated or replaced, values
// swapped for other JSON): the result always equals the reference's.
TEST(LargeJsonTest, MutationsEqualTheReference) {
  std::mt19937 rng(20261127);
  const std::string base = kRich;
  const std::vector<std::string> tokens = {"null", "true", "\"1\"", "-1", "1e3", "1.5", "\"\"",
                                           "{}", "[]", ",", ":", "\"a\":", "\"2026-11-22T01:02:03Z\"",
                                           "\"5s\"", "4294967296", "-2147483649", "\"\\u0000\""};
  int fast = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string json = base;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % json.size();
      switch (rng() % 3) {
        case 0: json.erase(at, 1 + rng() % 4); break;
        case 1: json.insert(at, tokens[rng() % tokens.size()]); break;
        default: json.insert(at, json.substr(rng() % json.size(), 1 + rng() % 12)); break;
      }
    }
    LargeJsonStats stats;
    ExpectSameAsReference<v1::Workload>(json, 1 + static_cast<int>(rng() % 3), &stats);
    if (HasFatalFailure()) return;
    fast += stats.fast;
  }
  // The mutations must exercise the fast path too, not only the fallback.
  EXPECT_GT(fast, 100);
}

TEST(LargeJsonTest, OnAnArenaTheElementsAreTheArenas) {
  const std::string json = ReadExample("burst.json");
  const std::unique_ptr<google::protobuf::Arena> arena = NewLargeDocumentArena();
  auto* on_arena = google::protobuf::Arena::CreateMessage<v1::Workload>(arena.get());
  LargeJsonStats stats;
  ASSERT_TRUE(ParseLargeJsonMessage(json, "f.json", LargeJsonOptions(), on_arena, &stats).ok());
  EXPECT_TRUE(stats.fast);
  v1::Workload reference;
  ASSERT_TRUE(ParseJsonMessage(json, "f.json", &reference).ok());
  EXPECT_TRUE(MessageDifferencer::Equals(reference, *on_arena));
  ASSERT_GT(on_arena->jobs_size(), 0);
  EXPECT_EQ(on_arena->jobs(0).GetArena(), arena.get());
}

TEST(MappedFileTest, MapsAFileReadsWhatCannotBeMappedAndNamesWhatIsMissing) {
  absl::StatusOr<std::unique_ptr<MappedFile>> f = MappedFile::Open("examples/burst.json");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)->contents(), ReadExample("burst.json"));
  // /proc files say size 0 but have contents: read, not mapped.
  f = MappedFile::Open("/proc/self/status");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_NE((*f)->contents().find("Name:"), absl::string_view::npos);
  f = MappedFile::Open("examples/no-such-file.json");
  EXPECT_EQ(f.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(f.status().message().find("no-such-file.json"), absl::string_view::npos);
}

}  // namespace
}  // namespace berth
