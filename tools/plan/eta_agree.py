#!/usr/bin/python3
"""ETA agreement: berth-plan now vs berth-plan simulate, all jobs queued at 0, exact estimates.
usage: eta_agree.py BERTH_PLAN IN.json [N]"""
import json, subprocess, sys, re
bp, src = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3] else None
text = open(src).read()
doc = json.loads(text)
jobs = doc['jobs'][:n] if n else doc['jobs']
ids = {j['spec']['id'] for j in jobs}
for j in jobs:
    j['arrivalOffset'] = '0s'
    j.pop('actualDuration', None)
    j.pop('fails', None)
    s = j['spec']
    if 'dependsOn' in s:
        s['dependsOn'] = [d for d in s['dependsOn'] if d in ids]
doc['jobs'] = jobs
out = src.replace('.json', '') + '.queued%s.json' % (n or '')
out = '/tmp/wt28/' + out.split('/')[-1]
json.dump(doc, open(out, 'w'))
def run(*a):
    r = subprocess.run([bp, *a], capture_output=True, text=True)
    if r.returncode: sys.exit(r.stderr)
    return json.loads(r.stdout)
def table(rep, name):
    return rep['tables'][name]
now = run('now', out, '--json')
sim = run('simulate', out, '--json', *sys.argv[4:])
start = {r['job']: r['admitted_s'] for r in table(sim, 'jobs') if r.get('outcome') in ('SUCCEEDED', 'FAILED')}
waiting = agree = unknown = beyond = 0
worst = 0
for r in table(now, 'decisions'):
    if r['verdict'] != 'WAIT': continue
    waiting += 1
    k = r['eta_kind']
    if k == 'unknown': unknown += 1; continue
    if k == 'beyond_forecast': beyond += 1; continue
    s = start.get(r['job'])
    if s is None: continue
    eta = r['eta_s']
    err = abs(eta - s)
    worst = max(worst, err)
    if err <= max(60, 0.05 * s): agree += 1
print(f"{out}: waiting {waiting}, agree {agree} ({100*agree/max(waiting,1):.1f}%), unknown {unknown}, beyond {beyond}, worst error {worst/3600:.2f} h")
