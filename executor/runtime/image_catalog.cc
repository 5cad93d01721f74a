#include "executor/runtime/image_catalog.h"

#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace berth {

absl::string_view ImagePresenceName(ImagePresence p) {
  switch (p) {
    case ImagePresence::kPresent:
      return "present";
    case ImagePresence::kMissing:
      return "missing";
    case ImagePresence::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::string NormalizeImageReference(absl::string_view ref) {
  if (absl::StartsWith(ref, "sha256:")) return std::string(ref);
  absl::string_view name = ref;
  absl::string_view digest;
  if (size_t at = ref.find('@'); at != absl::string_view::npos) {
    name = ref.substr(0, at);
    digest = ref.substr(at + 1);
  }
  absl::string_view tag;
  size_t slash = name.rfind('/');
  size_t colon = name.rfind(':');
  if (colon != absl::string_view::npos && (slash == absl::string_view::npos || colon > slash)) {
    tag = name.substr(colon + 1);
    name = name.substr(0, colon);
  }
  for (absl::string_view hub : {"docker.io/", "index.docker.io/"}) {
    if (absl::ConsumePrefix(&name, hub)) break;
  }
  // "library/busybox" is Docker Hub's "busybox" only without a registry
  // (a first component with '.' or ':' or "localhost" is a registry).
  size_t first = name.find('/');
  absl::string_view head = first == absl::string_view::npos ? "" : name.substr(0, first);
  bool registry = absl::StrContains(head, '.') || absl::StrContains(head, ':') ||
                  head == "localhost";
  if (!registry) absl::ConsumePrefix(&name, "library/");
  if (!digest.empty()) return absl::StrCat(name, "@", digest);
  return absl::StrCat(name, ":", tag.empty() ? "latest" : tag);
}

ImageCatalog::ImageCatalog(Runtime& runtime, Clock& clock, ImageCatalogOptions options)
    : runtime_(runtime), clock_(clock), options_(std::move(options)) {}

ImagePresence ImageCatalog::Check(absl::string_view image) {
  const std::string ref = NormalizeImageReference(image);
  absl::MutexLock l(&mu_);
  const absl::Time now = clock_.Now();
  const bool fresh = last_ok_ && now - last_attempt_ < options_.max_age;
  if (fresh && refs_.contains(ref)) return ImagePresence::kPresent;
  // Stale, a miss, or the last list failed: list again, at most once per
  // min_refresh_interval (an outage costs one failed call per interval).
  if (now - last_attempt_ >= options_.min_refresh_interval) {
    last_attempt_ = now;
    absl::StatusOr<std::vector<std::string>> listed = runtime_.ListImages();
    last_ok_ = listed.ok();
    if (listed.ok()) {
      refs_.clear();
      for (const std::string& r : *listed) refs_.insert(NormalizeImageReference(r));
    }
  }
  if (!last_ok_) return ImagePresence::kUnknown;
  return refs_.contains(ref) ? ImagePresence::kPresent : ImagePresence::kMissing;
}

}  // namespace berth
