#include "executor/runtime/docker/engine_images.h"

#include <utility>

#include "executor/runtime/docker/docker_http.h"
#include "executor/runtime/docker/engine_json.h"
#include "planner/base/status_macros.h"

namespace berth {

namespace {
constexpr absl::Duration kImageListTimeout = absl::Seconds(5);
}  // namespace

absl::StatusOr<std::vector<std::string>> ParseImageList(absl::string_view body) {
  ASSIGN_OR_RETURN(nlohmann::json j, engine_json::Parse(body, "docker API", "images"));
  if (!j.is_array()) {
    return absl::InternalError("docker API: the images answer is not a list");
  }
  std::vector<std::string> refs;
  auto add_all = [&refs](const nlohmann::json& image, const char* key, absl::string_view none) {
    const nlohmann::json* list = engine_json::Field(image, key);
    if (list == nullptr || !list->is_array()) return;
    for (const nlohmann::json& r : *list) {
      if (r.is_string() && r.get<std::string>() != none) refs.push_back(r.get<std::string>());
    }
  };
  for (const nlohmann::json& image : j) {
    add_all(image, "RepoTags", "<none>:<none>");
    add_all(image, "RepoDigests", "<none>@<none>");
    std::string id = engine_json::Str(image, "Id");
    if (!id.empty()) refs.push_back(std::move(id));
  }
  return refs;
}

absl::StatusOr<std::vector<std::string>> ListEngineImages(EngineClient& engine,
                                                          absl::string_view context) {
  HttpRequest req;
  req.path = "/images/json";
  // One attempt with a short limit: ingest asks while a sync waits, and an
  // engine that does not answer must not hold the sync for the retries.
  ASSIGN_OR_RETURN(HttpResponse resp, engine.Call("images", req, /*idempotent=*/false, context,
                                                  kImageListTimeout));
  RETURN_IF_ERROR(DockerErrorToStatus(0, "", resp.status, resp.body, context));
  return ParseImageList(resp.body);
}

}  // namespace berth
