#include "server/ingest/stored_spec_filter.h"

#include <utility>

namespace berth {

StoredSpecFilter::StoredSpecFilter(const Store& store, ValidationConfig config)
    : store_(store), config_(std::move(config)), checker_(config_) {}

void StoredSpecFilter::Begin(uint64_t generation) {
  drop_all_ = generation <= store_.LastAppliedGeneration();
}

void StoredSpecFilter::Filter(const google::protobuf::RepeatedPtrField<v1::JobSpec>& specs,
                              const std::vector<uint64_t>& fingerprints,
                              std::vector<bool>* drop) {
  const size_t n = static_cast<size_t>(specs.size());
  if (drop_all_) {
    drop->assign(n, true);
    dropped_ += n;
    return;
  }
  drop->assign(n, false);
  ids_.clear();
  for (const v1::JobSpec& spec : specs) ids_.push_back(spec.id());
  store_.LookupSpecs(ids_, &found_);
  for (size_t i = 0; i < n; ++i) {
    const SpecLookup& f = found_[i];
    const v1::JobSpec& spec = specs[static_cast<int>(i)];
    if (!f.known || (!f.terminal && f.fingerprint != fingerprints[i])) continue;
    if (spec.depends_on_size() > 0) continue;
    if (checker_.Check(spec).has_value()) continue;
    (*drop)[i] = true;
    ++dropped_;
  }
}

}  // namespace berth
