// ImageCatalog: whether the container engine holds an image, for ingest
// (what is accepted must be able to run; images are never
// pulled). It caches the engine's image list (Runtime::ListImages: for a
// Swarm, the manager's) and answers per reference:
//   - kPresent: the last successful list names it;
//   - kMissing: a list taken after the question's miss (or within
//     min_refresh_interval before it) succeeded and does not name it;
//   - kUnknown: the last list failed (outage, timeout, or a runtime that
//     cannot list images): the caller must not refuse a job for it -- an
//     outage never turns into rejections.
// Refresh: a list older than max_age is taken again on the next question;
// a miss or a failed list lists again, but at most once per
// min_refresh_interval (a snapshot naming many missing images, or a sync
// during an outage, costs one engine call).
//
// References are compared in Docker's normalized form
// (NormalizeImageReference), so "busybox", "busybox:latest" and
// "docker.io/library/busybox:latest" are one image, and "repo:tag@sha256:x"
// is "repo@sha256:x" (the engine ignores the tag beside a digest).
//
// Thread-safe: questions are serialized (one engine call at a time).
#ifndef BERTH_EXECUTOR_RUNTIME_IMAGE_CATALOG_H_
#define BERTH_EXECUTOR_RUNTIME_IMAGE_CATALOG_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "executor/runtime/runtime.h"
#include "planner/base/clock.h"

namespace berth {

struct ImageCatalogOptions {
  // A list this old is taken again at the next question. Default 30 s:
  // an image removed from the engine is still "present" for up to this long
  // (its jobs then fail START_FAILED naming the image).
  absl::Duration max_age = absl::Seconds(30);
  // The least time between two lists caused by misses (or failed lists).
  // Default 1 s: an image loaded just before a sync is seen at once, while
  // a snapshot of many unknown images lists once.
  absl::Duration min_refresh_interval = absl::Seconds(1);
};

enum class ImagePresence { kPresent, kMissing, kUnknown };
absl::string_view ImagePresenceName(ImagePresence p);

// Pure. Docker's normalized form of an image reference: Docker Hub's
// "docker.io/" / "index.docker.io/" and "library/" dropped, ":latest" added
// when there is neither tag nor digest, the tag dropped when there is a
// digest. An image id ("sha256:<hex>") is returned as it is.
std::string NormalizeImageReference(absl::string_view ref);

class ImageCatalog {
 public:
  // `runtime` and `clock` must outlive the catalog.
  ImageCatalog(Runtime& runtime, Clock& clock, ImageCatalogOptions options = {});

  // Whether the engine holds `image` (see the contract above). May make one
  // engine call (Runtime::ListImages).
  ImagePresence Check(absl::string_view image);

 private:
  // Constant after construction.
  Runtime& runtime_;
  Clock& clock_;
  const ImageCatalogOptions options_;

  absl::Mutex mu_;
  // Normalized references of the last successful list.
  absl::flat_hash_set<std::string> refs_ ABSL_GUARDED_BY(mu_);
  // Whether the last list attempt succeeded, and when it was made.
  bool last_ok_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time last_attempt_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_IMAGE_CATALOG_H_
