// The engine's image list (GET /images/json), shared by DockerRuntime and
// SwarmRuntime (whose ListImages asks the manager): Runtime::ListImages'
// answer, every reference that names a local image.
//
// Thread-safe (stateless; EngineClient is thread-safe).
#ifndef BERTH_EXECUTOR_RUNTIME_DOCKER_ENGINE_IMAGES_H_
#define BERTH_EXECUTOR_RUNTIME_DOCKER_ENGINE_IMAGES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "executor/runtime/docker/engine_client.h"

namespace berth {

// Pure. The references in an /images/json answer: each image's RepoTags
// (but "<none>:<none>"), RepoDigests (but "<none>@<none>") and Id. INTERNAL
// when the body is not a JSON array.
absl::StatusOr<std::vector<std::string>> ParseImageList(absl::string_view body);

// One GET /images/json, counted as "images": one attempt of at most 5 s (no
// retries: ImageCatalog asks while a sync waits, and treats a failure as
// "unknown"). Errors: the engine's (UNAVAILABLE, DEADLINE_EXCEEDED,
// INTERNAL), messages prefixed with `context` (e.g. "docker images").
absl::StatusOr<std::vector<std::string>> ListEngineImages(EngineClient& engine,
                                                          absl::string_view context);

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_DOCKER_ENGINE_IMAGES_H_
