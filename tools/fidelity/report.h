// berth-fidelity's output: the result as text for people or as one JSON
// object (--json), and the admitted sets pass by pass (--passes).
//
// Thread-compatible: free functions over their arguments.
#ifndef BERTH_TOOLS_FIDELITY_REPORT_H_
#define BERTH_TOOLS_FIDELITY_REPORT_H_

#include <map>
#include <string>

#include "tools/fidelity/compare.h"

namespace berth::fidelity {

// Text, one line per fact: the workload, the real run, each simulation,
// the repeatability (the jittered simulations' taus: median, lowest, and
// how many reach 0.99) and, if any, the other real run. Ends with a newline.
std::string RenderText(const FidelityResult& result);

// One JSON object, keys as the Python tool wrote them (jobs,
// scale_s_per_min, seed, load_average, real_makespan_s, ...,
// simulations: {name: {...}}, stability_tau, repeatability: {start_jitter_s,
// taus}, against_real). NaN is null.
std::string RenderJson(const FidelityResult& result);

// The admitted sets per planning pass, real against simulated, from the
// first pass that differs to at most 8 more: "!= pass K: real T s [only
// real]  sim T s [only simulated]"; passes before the first difference
// print as "   pass K: real T s N  sim T s". The diagnosis of a low tau.
std::string RenderPasses(const std::map<std::string, double>& real_admitted,
                         const std::map<std::string, double>& simulated_admitted);

}  // namespace berth::fidelity

#endif  // BERTH_TOOLS_FIDELITY_REPORT_H_
