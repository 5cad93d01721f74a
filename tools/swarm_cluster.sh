#!/usr/bin/env bash
# A real multi-node Docker Swarm on this one machine, for Berth's cluster
# tests, without touching the host's own dockerd:
#
#   bash tools/swarm_cluster.sh up       # build it (idempotent: a healthy cluster is kept)
#   bash tools/swarm_cluster.sh status   # the nodes as the manager sees them
#   bash tools/swarm_cluster.sh env      # BERTH_SWARM_MANAGER=unix:///... for tests
#   bash tools/swarm_cluster.sh down     # tear everything down (idempotent)
#
# `up` also starts a keeper (run it from a shell, not from inside a test:
# Bazel kills every process a test leaves behind): it restarts a node's
# dockerd that has died unless /run/berth-swarm/<node>/hold exists. A test
# that kills a worker's dockerd creates `hold` first and removes it to have
# the node back (executor/runtime/swarm/testing/swarm_test_util.h).
#
# Nodes: one manager and BERTH_SWARM_WORKERS workers (default 2). Each node is
# a dockerd in its own network namespace (ip netns), joined to the others by a
# veth into a host bridge on a private test subnet (BERTH_SWARM_SUBNET, default
# 10.231.0), with its own data-root, exec-root, pidfile, socket, containerd
# namespace and config file (the host's /etc/docker/daemon.json sets
# live-restore, which swarm mode refuses). The test image
# berth-test/busybox:1 (tools/setup.sh) is loaded into every node. Nothing is
# pulled and all traffic stays on the machine. Requires root.
#
# Everything lives under $BERTH_SWARM_ROOT (default /var/lib/berth-swarm) and
# /run/berth-swarm; `down` removes the daemons, namespaces, links, the
# iptables rule and those directories.
set -euo pipefail

workers="${BERTH_SWARM_WORKERS:-2}"
subnet="${BERTH_SWARM_SUBNET:-10.231.0}"
state_root="${BERTH_SWARM_ROOT:-/var/lib/berth-swarm}"
run_root="/run/berth-swarm"
bridge="brberthsw"
image="${BERTH_TEST_IMAGE:-berth-test/busybox:1}"

nodes=(mgr)
for i in $(seq 1 "$workers"); do nodes+=("w$i"); done

log() { echo "swarm_cluster: $*" >&2; }
die() { log "error: $*"; exit 1; }

ns_of() { echo "berthsw-$1"; }
sock_of() { echo "$run_root/$1/docker.sock"; }
addr_of() {  # mgr -> .2, w1 -> .3, ...
  if [ "$1" = mgr ]; then echo "$subnet.2"; else echo "$subnet.$((2 + ${1#w}))"; fi
}
dk() { local n="$1"; shift; docker -H "unix://$(sock_of "$n")" "$@"; }

# ---- network ----
net_up() {
  if ! ip link show "$bridge" >/dev/null 2>&1; then
    ip link add "$bridge" type bridge
    ip addr add "$subnet.1/24" dev "$bridge"
  fi
  ip link set "$bridge" up
  # The host's dockerd sets FORWARD policy DROP and bridged frames pass
  # through iptables here: let the test bridge talk to itself.
  iptables -C FORWARD -i "$bridge" -o "$bridge" -j ACCEPT 2>/dev/null ||
    iptables -I FORWARD -i "$bridge" -o "$bridge" -j ACCEPT
  for n in "${nodes[@]}"; do
    local ns; ns="$(ns_of "$n")"
    [ -e "/var/run/netns/$ns" ] || ip netns add "$ns"
    if ! ip link show "vh-$n" >/dev/null 2>&1; then
      ip link add "vh-$n" type veth peer name "vn-$n"
      ip link set "vn-$n" netns "$ns"
      ip link set "vh-$n" master "$bridge" up
      ip -n "$ns" link set "vn-$n" name eth0
      ip -n "$ns" addr add "$(addr_of "$n")/24" dev eth0
      ip -n "$ns" link set eth0 up
      ip -n "$ns" link set lo up
      ip -n "$ns" route add default via "$subnet.1" 2>/dev/null || true
    fi
  done
}

# ---- daemons ----
daemon_up() {
  local n="$1" dir="$run_root/$1" data="$state_root/$1"
  mkdir -p "$dir" "$data"
  if dk "$n" version >/dev/null 2>&1; then return 0; fi
  echo '{}' > "$dir/daemon.json"
  log "starting dockerd for $n ($(addr_of "$n"))"
  # nsenter, not `ip netns exec`: the latter remounts /sys and dockerd then
  # fails with "Devices cgroup isn't mounted".
  setsid nsenter --net="/var/run/netns/$(ns_of "$n")" \
    dockerd --config-file "$dir/daemon.json" \
      --data-root "$data/docker" --exec-root "$dir/exec" \
      --pidfile "$dir/docker.pid" -H "unix://$(sock_of "$n")" \
      --containerd-namespace "berthsw-$n" --containerd-plugins-namespace "berthsw-$n-plugins" \
      --bridge=none --iptables=false --ip-masq=false \
      > "$data/dockerd.log" 2>&1 < /dev/null &
  local deadline=$((SECONDS + 60))
  until dk "$n" version >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || { tail -n 20 "$data/dockerd.log" >&2; die "dockerd for $n never answered"; }
    sleep 0.2
  done
}

image_up() {
  local n="$1"
  if dk "$n" image inspect "$image" >/dev/null 2>&1; then return 0; fi
  docker image inspect "$image" >/dev/null 2>&1 || die "$image missing on the host: run tools/setup.sh"
  log "loading $image into $n"
  docker save "$image" | dk "$n" load >/dev/null
}

swarm_state() { dk "$1" info --format '{{.Swarm.LocalNodeState}}' 2>/dev/null || echo unknown; }

swarm_up() {
  if [ "$(swarm_state mgr)" != active ]; then
    log "swarm init on mgr"
    dk mgr swarm init --advertise-addr "$(addr_of mgr)" --listen-addr "$(addr_of mgr):2377" >/dev/null
  fi
  local token; token="$(dk mgr swarm join-token -q worker)"
  for n in "${nodes[@]:1}"; do
    if [ "$(swarm_state "$n")" != active ]; then
      log "swarm join $n"
      dk "$n" swarm join --token "$token" --advertise-addr "$(addr_of "$n")" \
        --listen-addr "$(addr_of "$n"):2377" "$(addr_of mgr):2377" >/dev/null
    fi
  done
  # Every node Ready before anyone uses the cluster.
  local deadline=$((SECONDS + 60)) want=${#nodes[@]}
  while true; do
    local ready
    ready="$(dk mgr node ls --format '{{.Status}}' 2>/dev/null | grep -c '^Ready$' || true)"
    [ "$ready" -ge "$want" ] && break
    [ "$SECONDS" -lt "$deadline" ] || { dk mgr node ls >&2 || true; die "only $ready of $want nodes Ready"; }
    sleep 0.5
  done
}

# ---- keeper: restarts dead daemons (outside any test's process tree) ----
keeper_pid() { cat "$run_root/keeper.pid" 2>/dev/null || true; }
keeper_alive() { local p; p="$(keeper_pid)"; [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

keep() {
  echo $$ > "$run_root/keeper.pid"
  while [ -d "$run_root" ]; do
    for n in "${nodes[@]}"; do
      [ -e "$run_root/$n/hold" ] && continue
      local pid; pid="$(cat "$run_root/$n/docker.pid" 2>/dev/null || true)"
      if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
        log "keeper: dockerd of $n is gone; restarting it"
        ( daemon_up "$n" ) || true
      fi
    done
    sleep 0.5
  done
}

keeper_up() {
  keeper_alive && return 0
  setsid bash "$(readlink -f "$0")" keep >> "$state_root/keeper.log" 2>&1 < /dev/null &
  local deadline=$((SECONDS + 10))
  until keeper_alive; do
    [ "$SECONDS" -lt "$deadline" ] || die "keeper did not start"
    sleep 0.1
  done
}

up() {
  [ "$(id -u)" = 0 ] || die "needs root (network namespaces, dockerd)"
  command -v dockerd >/dev/null || die "dockerd missing: run tools/setup.sh"
  net_up
  for n in "${nodes[@]}"; do rm -f "$run_root/$n/hold"; daemon_up "$n"; image_up "$n"; done
  swarm_up
  keeper_up
  log "up: ${#nodes[@]} nodes; manager at unix://$(sock_of mgr)"
}

down() {
  if keeper_alive; then
    local kp; kp="$(keeper_pid)"
    kill "$kp" 2>/dev/null || true
    local kdeadline=$((SECONDS + 10))
    while kill -0 "$kp" 2>/dev/null && [ "$SECONDS" -lt "$kdeadline" ]; do sleep 0.1; done
  fi
  for n in "${nodes[@]}"; do
    if dk "$n" version >/dev/null 2>&1; then
      dk "$n" swarm leave --force >/dev/null 2>&1 || true
    fi
    local pidfile="$run_root/$n/docker.pid"
    if [ -f "$pidfile" ]; then
      local pid; pid="$(cat "$pidfile")"
      if kill "$pid" 2>/dev/null; then
        local deadline=$((SECONDS + 30))
        while kill -0 "$pid" 2>/dev/null; do
          [ "$SECONDS" -lt "$deadline" ] || { kill -9 "$pid" 2>/dev/null || true; break; }
          sleep 0.2
        done
      fi
    fi
    ip link del "vh-$n" 2>/dev/null || true
    ip netns del "$(ns_of "$n")" 2>/dev/null || true
  done
  # The containerd shims of a daemon killed with -9 (the keeper tests) outlive
  # it, re-parented to init: stop those of this cluster, by their address.
  local shim
  for shim in $(pgrep -f -- "containerd-shim-runc-v2 .*-address $run_root/" || true); do
    kill "$shim" 2>/dev/null || true
  done
  iptables -D FORWARD -i "$bridge" -o "$bridge" -j ACCEPT 2>/dev/null || true
  ip link del "$bridge" 2>/dev/null || true
  # Mounts a daemon may leave behind (overlay, netns files) before removal.
  local m
  for m in $(grep -oE " ($state_root|$run_root)[^ ]*" /proc/mounts 2>/dev/null | sort -r || true); do
    umount -l "$m" 2>/dev/null || true
  done
  rm -rf "$run_root" "$state_root"
  log "down"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  keep) keep ;;
  status) dk mgr node ls ;;
  env) echo "BERTH_SWARM_MANAGER=unix://$(sock_of mgr)" ;;
  *) echo "usage: $0 up|down|status|env" >&2; exit 2 ;;  # (keep: internal)
esac
