#!/bin/bash
# Measures, for a berthd binary, how long after Docker's "die" event each job
# is finalised (Job.finished_at - die time): 40 sleep jobs of 0.2-1.5 s on
# budgets 4 GiB / 2 cores / 8 workers, --tick=500ms (docs/BENCHMARKS.md,
# "Event-driven reconciler"). Usage: exit_latency.sh BERTHD BERTHCTL TAG [JOBS]
set -euo pipefail
berthd=$1; ctl=$2; tag=$3; n=${4:-40}
d=$(mktemp -d /tmp/exitlat.XXXX); inst="exitlat-$tag-$$"
port=$((20000 + RANDOM % 20000))
tok=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
(umask 077; printf "pusher p %s\n" "$tok" > "$d/tokens")
mkdir -p "$d/ws/w"
"$berthd" --listen=127.0.0.1:$port --token_file=$d/tokens --data_dir=$d/state --instance=$inst \
  --allowed_images='berth-test/*' --memory=4Gi --cpus=2 --max_workers=8 --tick=500ms \
  2> $d/berthd.log &
pid=$!
trap 'kill $pid 2>/dev/null; kill $evpid 2>/dev/null; true' EXIT
docker events --filter label=berth.instance=$inst --filter event=die \
  --format '{{.TimeNano}} {{index .Actor.Attributes "berth.job"}}' > $d/die.txt &
evpid=$!
python3 - "$n" > $d/snap.json <<'PY'
import json,sys,random
random.seed(7); n=int(sys.argv[1])
jobs=[]
for i in range(n):
    s=round(random.uniform(0.2,1.5),2)
    jobs.append({"id":f"j{i:03d}","workspace":"w","action":"run","image":"berth-test/busybox:1",
      "argv":["sleep",str(s)],"priority":0,"resources":{"cpuMillis":"100","memoryBytes":str(32<<20)},
      "expectedDuration":f"{s}s","createdAt":f"2026-11-22T09:00:{i%60:02d}Z"})
print(json.dumps({"generation":"1","jobs":jobs}))
PY
export BERTH_SERVER=127.0.0.1:$port BERTH_TOKEN=$tok
for i in $(seq 100); do "$ctl" list >/dev/null 2>&1 && break; kill -0 $pid || { tail -3 $d/berthd.log; exit 1; }; sleep 0.1; done
"$ctl" push $d/snap.json > /dev/null
while true; do
  left=$("$ctl" --json list --state QUEUED --state ADMITTED --state RUNNING --all 2>/dev/null | python3 -c 'import sys,json
t=sys.stdin.read().strip()
print(len(json.loads(t).get("jobs",[])) if t else 0)')
  [ "$left" = 0 ] && break; sleep 0.5
done
sleep 1
"$ctl" --json list --all > $d/jobs.json
python3 - $d/die.txt $d/jobs.json "$tag" <<'PY'
import json,sys,datetime
die={}
for l in open(sys.argv[1]):
    t,j=l.split(); die.setdefault(j,int(t)/1e9)
jobs=json.load(open(sys.argv[2]))["jobs"]
def ts(s):
    s=s.rstrip("Z"); main,_,frac=s.partition(".")
    return datetime.datetime.strptime(main,"%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc).timestamp()+float("0."+(frac or "0"))
lat=sorted(ts(j["finishedAt"])-die[j["spec"]["id"]] for j in jobs if j["spec"]["id"] in die and "finishedAt" in j)
n=len(lat); within=sum(1 for x in lat if x<=0.1)
print(f"{sys.argv[3]}: n={n} within0.1s={within}/{n}={within/n:.2f} median={lat[n//2]*1000:.0f}ms p95={lat[int(n*0.95)]*1000:.0f}ms max={lat[-1]*1000:.0f}ms")
PY
