// plan-read-floor FILE: the floor of `berth-plan now` on a large workload —
// parse the file with simdjson (reading every job's id, workspace, priority,
// resources, created_at and expected duration: what the planner reads) and
// sort one 64-bit key per job — so that `now`'s cost can be given as a
// ratio to it, measured in the same run (docs/BENCHMARKS.md; e.g.
// farm-bench --vs 'plan-read-floor q1m.json' -- berth-plan now q1m.json).
// Prints the jobs read and the two times; exit 1 if the file cannot be read
// or parsed.
#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string_view>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tools/base/large_document.h"

namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// Hashes a string value or a number's text into `h`.
uint64_t Mix(uint64_t h, std::string_view s) {
  return h * 1099511628211ULL ^ std::hash<std::string_view>()(s);
}

uint64_t Mix(uint64_t h, element v) {
  std::string_view s;
  if (v.type() == element_type::STRING && !v.get_string().get(s)) return Mix(h, s);
  int64_t n = 0;
  if (!v.get_int64().get(n)) return h * 1099511628211ULL ^ static_cast<uint64_t>(n);
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: plan-read-floor WORKLOAD.json\n");
    return 2;
  }
  const absl::Time t0 = absl::Now();
  auto file = berth::MappedFile::Open(argv[1]);
  if (!file.ok()) {
    std::fprintf(stderr, "%s\n", std::string(file.status().message()).c_str());
    return 1;
  }
  // The DOM parser: the library picks the processor's fastest kernel at run
  // time, as berth-plan's reader (tools/plan/fast_workload.h) does.
  const simdjson::padded_string padded((*file)->contents().data(), (*file)->contents().size());
  simdjson::dom::parser parser;
  element doc;
  simdjson::dom::array jobs;
  if (parser.parse(padded).get(doc) || doc["jobs"].get_array().get(jobs)) return 1;
  std::vector<uint64_t> keys;
  keys.reserve(jobs.size());
  for (element job : jobs) {
    simdjson::dom::object spec;
    if (job["spec"].get_object().get(spec)) return 1;
    uint64_t h = 14695981039346656037ULL;
    for (auto [key, v] : spec) {
      if (key == "resources") {
        simdjson::dom::object res;
        if (v.get_object().get(res)) return 1;
        for (auto [rk, rv] : res) h = Mix(h, rv);
      } else if (key == "id" || key == "workspace" || key == "priority" || key == "createdAt" ||
                 key == "expectedDuration" || key == "pool") {
        h = Mix(h, v);
      }
    }
    keys.push_back(h);
  }
  const absl::Time t1 = absl::Now();
  std::sort(keys.begin(), keys.end());
  const absl::Time t2 = absl::Now();
  std::printf("jobs %zu parse %.3f s sort %.3f s (min key %llu)\n", keys.size(),
              absl::ToDoubleSeconds(t1 - t0), absl::ToDoubleSeconds(t2 - t1),
              static_cast<unsigned long long>(keys.empty() ? 0 : keys.front()));
  return 0;
}
