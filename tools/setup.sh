#!/usr/bin/env bash
# Idempotent machine setup for Berth: Debian packages, a running dockerd, the test image.
#
# Safe to run any number of times; takes seconds when everything is present.
# Needs root (or sudo) only when something is missing.
#
# Environment:
#   BERTH_TEST_IMAGE   name:tag of the busybox test image (default berth-test/busybox:1)
#   BERTH_SKIP_DOCKER  if set to 1, do not start dockerd or build the image
set -euo pipefail

TEST_IMAGE="${BERTH_TEST_IMAGE:-berth-test/busybox:1}"
DOCKER_SOCK=/var/run/docker.sock
DOCKERD_LOG=/var/log/berth-dockerd.log

PACKAGES=(
  bazel-bootstrap pkg-config g++ clang libclang-rt-14-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler grpc-proto
  libabsl-dev librocksdb-dev libsimdjson-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcurl4-openssl-dev nlohmann-json3-dev libcpp-httplib-dev libjemalloc-dev
  python3-grpcio python3-protobuf python3-setuptools python3-venv python3-pip python3-wheel
  postgresql-15 python3-psycopg2
  docker.io containerd runc busybox-static
  prometheus systemd
  chromium chromium-driver python3-selenium
)

log() { printf 'setup: %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

install_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    # dpkg-query prints "install ok installed" only for fully installed packages.
    if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
      missing+=("$p")
    fi
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    log "all ${#PACKAGES[@]} Debian packages present"
    return
  fi
  log "installing: ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# Only promtool (tools/run_operator_tests.sh) is wanted from the prometheus
# package; on a machine with systemd its server must not run (it would
# scrape nothing and hold port 9090).
stop_prometheus_service() {
  if command -v systemctl >/dev/null 2>&1 && systemctl is-enabled --quiet prometheus 2>/dev/null; then
    log "disabling the prometheus service (only promtool is used)"
    as_root systemctl disable --now prometheus >/dev/null 2>&1 || true
  fi
}

docker_api() {
  # Asks the Engine API directly: a daemon that answers /_ping is usable.
  curl -sf --max-time 5 --unix-socket "$DOCKER_SOCK" http://localhost/_ping >/dev/null 2>&1
}

# live-restore keeps containers running while dockerd restarts: without it a
# daemon restart kills every job (exit 143), which Berth must not take for the
# job's own failure. It is reloadable, so a running daemon gets SIGHUP.
configure_live_restore() {
  local conf=/etc/docker/daemon.json
  if [ -f "$conf" ] && grep -q '"live-restore"[[:space:]]*:[[:space:]]*true' "$conf"; then
    return
  fi
  log "enabling live-restore in $conf"
  as_root mkdir -p /etc/docker
  if [ -s "$conf" ]; then
    as_root /usr/bin/python3 - "$conf" <<'PY'
import json, sys
path = sys.argv[1]
with open(path) as f:
    conf = json.load(f)
conf["live-restore"] = True
with open(path, "w") as f:
    json.dump(conf, f, indent=2)
PY
  else
    echo '{"live-restore": true}' | as_root tee "$conf" >/dev/null
  fi
  if docker_api; then
    as_root pkill -HUP -x dockerd || true
  fi
}

live_restore_enabled() {
  curl -sf --max-time 5 --unix-socket "$DOCKER_SOCK" http://localhost/info 2>/dev/null |
    grep -q '"LiveRestoreEnabled":true'
}

start_dockerd() {
  configure_live_restore
  if docker_api; then
    log "dockerd answers on $DOCKER_SOCK"
    for _ in $(seq 1 20); do live_restore_enabled && return; sleep 0.25; done
    log "warning: dockerd runs without live-restore; a daemon restart will stop jobs"
    return
  fi
  local dockerd_bin
  dockerd_bin="$(command -v dockerd || true)"
  [ -n "$dockerd_bin" ] || { log "dockerd not found after install"; exit 1; }
  log "starting dockerd (log: $DOCKERD_LOG)"
  # containerd is started by dockerd itself when it is not running.
  as_root setsid "$dockerd_bin" >>"$DOCKERD_LOG" 2>&1 < /dev/null &
  for _ in $(seq 1 120); do
    if docker_api; then log "dockerd is up"; return; fi
    sleep 0.5
  done
  log "dockerd did not answer on $DOCKER_SOCK within 60 s; last log lines:"
  tail -n 30 "$DOCKERD_LOG" >&2 || true
  exit 1
}

build_test_image() {
  local ref="${TEST_IMAGE}"
  if curl -sf --max-time 10 --unix-socket "$DOCKER_SOCK" \
       "http://localhost/images/${ref}/json" >/dev/null 2>&1; then
    log "test image $ref present"
    return
  fi
  log "building test image $ref from busybox-static"
  local root
  root="$(mktemp -d)"
  trap 'rm -rf "$root"' RETURN
  mkdir -p "$root/bin" "$root/tmp" "$root/workspace" "$root/etc" "$root/proc" "$root/sys" "$root/dev"
  cp /bin/busybox "$root/bin/busybox"
  for applet in $(/bin/busybox --list); do
    [ "$applet" = busybox ] || ln -sf busybox "$root/bin/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' > "$root/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"
  chmod 1777 "$root/tmp"
  tar -C "$root" -c . | as_root docker import \
    -c 'ENV PATH=/bin' -c 'WORKDIR /workspace' - "$ref" >/dev/null
  log "test image $ref built"
}

install_packages
stop_prometheus_service
if [ "${BERTH_SKIP_DOCKER:-0}" != 1 ]; then
  start_dockerd
  build_test_image
fi
log "done"
