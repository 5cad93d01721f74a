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

using simdjson::ondemand::object;
using simdjson::ondemand::value;

// Hashes a string value or a number's text into `h`.
uint64_t Mix(uint64_t h, std::string_view s) {
  return h * 1099511628211ULL ^ std::hash<std::string_view>()(s);
}

bool Text(value v, std::string_view* out) {
  if (v.type() == simdjson::ondemand::json_type::string) return !v.get_string().get(*out);
  *out = v.raw_json_token();
  return true;
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
  const std::string_view json((*file)->contents().data(), (*file)->contents().size());
  simdjson::padded_string padded(json);  // simdjson reads 64 bytes past the end
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  if (parser.iterate(padded).get(doc)) return 1;
  std::vector<uint64_t> keys;
  object top;
  if (doc.get_object().get(top)) return 1;
  for (auto field : top) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return 1;
    if (key != "jobs") continue;
    simdjson::ondemand::array jobs;
    if (field.value().get_array().get(jobs)) return 1;
    for (auto element : jobs) {
      object job;
      if (element.get_object().get(job)) return 1;
      uint64_t h = 14695981039346656037ULL;
      for (auto jf : job) {
        std::string_view k;
        if (jf.unescaped_key().get(k)) return 1;
        if (k != "spec") continue;
        object spec;
        if (jf.value().get_object().get(spec)) return 1;
        for (auto sf : spec) {
          std::string_view sk, text;
          if (sf.unescaped_key().get(sk)) return 1;
          value v;
          if (sf.value().get(v)) return 1;
          if (sk == "resources") {
            object res;
            if (v.get_object().get(res)) return 1;
            for (auto rf : res) {
              value rv;
              if (rf.value().get(rv) || !Text(rv, &text)) return 1;
              h = Mix(h, text);
            }
          } else if (sk == "id" || sk == "workspace" || sk == "priority" || sk == "createdAt" ||
                     sk == "expectedDuration" || sk == "pool") {
            if (!Text(v, &text)) return 1;
            h = Mix(h, text);
          }
        }
      }
      keys.push_back(h);
    }
  }
  const absl::Time t1 = absl::Now();
  std::sort(keys.begin(), keys.end());
  const absl::Time t2 = absl::Now();
  std::printf("jobs %zu parse %.3f s sort %.3f s (min key %llu)\n", keys.size(),
              absl::ToDoubleSeconds(t1 - t0), absl::ToDoubleSeconds(t2 - t1),
              static_cast<unsigned long long>(keys.empty() ? 0 : keys.front()));
  return 0;
}
