#!/usr/bin/env bash
# The README's "run the main job" command: berthd with its embedded RocksDB,
# driving the real Docker engine, on an example workload.
#
#   bash tools/run.sh [--keep] [SNAPSHOT.json]      (default examples/snapshot-demo.json)
#
# Sets the machine up (tools/setup.sh), builds berthd and berthctl, starts
# berthd on 127.0.0.1:${BERTH_PORT:-7070} with its state in ./berth-data (a
# previous demo's state is moved to ./berth-data.prev), pushes the snapshot,
# prints the plan and why the big job waits, follows the event stream until
# every job has finished, prints the outcome, and stops berthd. --keep leaves
# berthd running (stop it with: kill $(cat berth-data/berthd.pid)).
set -euo pipefail
cd "$(dirname "$0")/.."

keep=0
snapshot=examples/snapshot-demo.json
for arg in "$@"; do
  case "$arg" in
    --keep) keep=1 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) snapshot="$arg" ;;
  esac
done
[ -f "$snapshot" ] || { echo "run: no such snapshot file: $snapshot" >&2; exit 2; }

bash tools/setup.sh
bazel build --color=no --curses=no //server:berthd //tools:berthctl
berthd="$PWD/bazel-bin/server/berthd"
ctl="$PWD/bazel-bin/tools/berthctl"

port="${BERTH_PORT:-7070}"
data="$PWD/berth-data"
if [ -d "$data" ]; then
  rm -rf "$data.prev"
  mv "$data" "$data.prev"
  echo "run: previous demo state moved to $data.prev"
fi
mkdir -p "$data"
token() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
pusher="$(token)"; operator="$(token)"
umask 077
printf 'pusher job-server %s\noperator ops %s\n' "$pusher" "$operator" > "$data/tokens"
printf '%s\n' "$operator" > "$data/operator.token"
umask 022

# Small budgets so that the demo shows waiting, reservations and backfill.
"$berthd" --listen="127.0.0.1:$port" --metrics_listen="127.0.0.1:$((port + 2394))" \
  --token_file="$data/tokens" --data_dir="$data/state" --instance=berth-demo \
  --allowed_images='berth-test/*' --memory=384Mi --cpus=2 --max_workers=4 \
  --pool_max=database=1 --tick=1s --stop_grace=5s 2> "$data/berthd.log" &
pid=$!
echo "$pid" > "$data/berthd.pid"
stop() {
  if [ "$keep" -eq 0 ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid"; wait "$pid" 2>/dev/null || true
    echo "run: berthd stopped (log: $data/berthd.log)"
  fi
}
trap stop EXIT

export BERTH_SERVER="127.0.0.1:$port"
for _ in $(seq 1 60); do
  if BERTH_TOKEN="$operator" "$ctl" budgets get > /dev/null 2>&1; then break; fi
  kill -0 "$pid" 2>/dev/null || { echo "run: berthd exited:"; tail -n 20 "$data/berthd.log"; exit 1; }
  sleep 0.5
done

echo; echo "== berthd is up on $BERTH_SERVER (state: $data/state, metrics: http://127.0.0.1:$((port + 2394))/metrics)"
echo "== dashboard: http://127.0.0.1:$((port + 2394))/ui (log in with the token in $data/operator.token)"
BERTH_TOKEN="$operator" "$ctl" budgets get

# The job-server's side: follow every event from the start.
BERTH_TOKEN="$pusher" "$ctl" watch --from 0 --follow > "$data/events.log" 2>&1 &
watcher=$!

echo; echo "== push $snapshot"
BERTH_TOKEN="$pusher" "$ctl" push "$snapshot"

sleep 1
echo; echo "== plan"
BERTH_TOKEN="$operator" "$ctl" plan
echo; echo "== why is big-c.genome not running?"
BERTH_TOKEN="$operator" "$ctl" explain big-c.genome || true

echo; echo "== events (until every job has finished)"
tail -n +1 -f "$data/events.log" &
tailer=$!
deadline=$((SECONDS + 300))
while :; do
  active=$(BERTH_TOKEN="$operator" "$ctl" --json list --state QUEUED --state ADMITTED --state RUNNING --all |
    grep -c '"id"' || true)
  [ "$active" -eq 0 ] && break
  [ "$SECONDS" -lt "$deadline" ] || { echo "run: jobs still active after 300 s"; break; }
  sleep 1
done
sleep 0.5
kill "$tailer" "$watcher" 2>/dev/null || true
wait "$tailer" "$watcher" 2>/dev/null || true

echo; echo "== outcome"
BERTH_TOKEN="$operator" "$ctl" list --all
echo; echo "== the complete log of big-c.genome, kept after its container is gone (berthctl logs)"
BERTH_TOKEN="$operator" "$ctl" logs big-c.genome
if [ "$keep" -eq 1 ]; then
  echo; echo "berthd keeps running (pid $pid). Try: BERTH_SERVER=$BERTH_SERVER BERTH_TOKEN=\$(cat $data/operator.token) $ctl plan"
fi
