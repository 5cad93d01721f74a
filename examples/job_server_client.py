#!/usr/bin/python3
"""Example job-server integration with Berth (the `berth` package, clients/python).

  job_server_client.py --server HOST:PORT --token-file FILE --state-dir DIR \
      sync [--allow-mass-cancel] RECORDS.json
  job_server_client.py --server HOST:PORT --token-file FILE --state-dir DIR \
      follow [--log EVENTS.jsonl] [--until-done]

sync    reads job-server records (a JSON list of dicts: id, workspace, image,
        argv, priority, memory, cpu, ...), sends them as the next snapshot
        generation (DIR/generation keeps generations increasing across runs;
        it starts above berthd's last applied generation) and remembers their
        ids (DIR/jobs.json); a stale generation file is corrected from
        berthd's refusal, no extra call. --allow-mass-cancel lets it cancel more than
        berthd's mass-cancel fraction of running jobs.
follow  follows Berth's events from DIR/revision, "updates job-server" for
        each one (here: appends it as a JSON line to --log, or prints it) and
        then stores its revision, so that a restarted follower resumes without
        gaps or repeats. When berthd stops or restarts it reconnects and
        resumes. SIGTERM / Ctrl-C stop it after the current event.
        --until-done exits once every job of the last sync is finished.

Run with a Python that has the package installed (docs/job-server.md).
Exit status: 0 ok, 1 berthd refused or failed, 2 bad input, 3 berthd
unreachable.
"""

import argparse
import json
import os
import sys

import berth
from berth.v1 import event_pb2
from berth.v1 import job_pb2


def cmd_sync(client, args):
    with open(args.records) as f:
        records = json.load(f)
    if not isinstance(records, list):
        print("%s: expected a JSON list of job records" % args.records, file=sys.stderr)
        return 2
    try:
        specs = berth.job_specs(records)
    except berth.InvalidSnapshot as e:
        print("%s: %s" % (args.records, e), file=sys.stderr)
        return 2
    # push: the next generation of the file, or above berthd's last applied
    # one if the file is new or lost (from the refusal's trailer).
    response = client.push(specs, berth.GenerationFile(os.path.join(args.state_dir, "generation")),
                           allow_mass_cancel=args.allow_mass_cancel)
    with open(os.path.join(args.state_dir, "jobs.json"), "w") as f:
        json.dump([s.id for s in specs], f)
    print(json.dumps({
        "generation": response.generation,
        "added": response.added,
        "updated": response.updated,
        "unchanged": response.unchanged,
        "cancelled": response.cancelled,
        "rejected": [{"job": r.job_id, "reason": job_pb2.RejectReason.Name(r.reason),
                      "message": r.message} for r in response.rejections],
        "revision": response.revision,
    }))
    return 0


def cmd_follow(client, args):
    follower = berth.EventFollower(
        client, berth.RevisionFile(os.path.join(args.state_dir, "revision")))
    follower.install_signal_handlers()

    pending = None
    if args.until_done:
        with open(os.path.join(args.state_dir, "jobs.json")) as f:
            wanted = set(json.load(f))
        # Jobs finished before this process started need no event; the
        # others' terminal events all come after the stored revision.
        pending = {j.spec.id for j in client.list_jobs()
                   if j.spec.id in wanted and j.state not in berth.TERMINAL_STATES}
        pending |= wanted - {j.spec.id for j in client.list_jobs()}
        if not pending:
            print("nothing to wait for", file=sys.stderr)
            return 0

    log = open(args.log, "a") if args.log else sys.stdout

    def handle(event):
        # A real job-server would update its database row here.
        log.write(berth.event_json(event) + "\n")
        log.flush()
        if log is not sys.stdout:
            os.fsync(log.fileno())  # durable before the revision is stored

    def done(event):
        if pending is None:
            return False
        if (event.type == event_pb2.EVENT_TYPE_JOB_STATE_CHANGED and
                event.state in berth.TERMINAL_STATES):
            pending.discard(event.job_id)
        return not pending

    def retrying(error, revision):
        what = str(error) if error else "stream ended"
        print("event stream ended (%s); reconnecting from revision %d" % (what, revision),
              file=sys.stderr, flush=True)

    try:
        last = follower.run(handle, until=done, on_retry=retrying)
    except berth.RevisionExpired as e:
        print("events are gone (%s): re-list jobs, then follow from revision %d"
              % (e, e.current), file=sys.stderr)
        return 1
    print("last revision %d" % last, file=sys.stderr)
    return 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", default=os.environ.get("BERTH_SERVER", "127.0.0.1:7070"))
    parser.add_argument("--token-file")
    parser.add_argument("--tls-ca")
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    parser.add_argument("--state-dir", required=True)
    sub = parser.add_subparsers(dest="command", required=True)
    sync = sub.add_parser("sync")
    sync.add_argument("records")
    sync.add_argument("--allow-mass-cancel", action="store_true",
                      help="allow this snapshot to cancel more than berthd's mass-cancel "
                           "fraction of running jobs")
    follow = sub.add_parser("follow")
    follow.add_argument("--log")
    follow.add_argument("--until-done", action="store_true")
    args = parser.parse_args(argv)

    token = os.environ.get("BERTH_TOKEN", "")
    if args.token_file:
        with open(args.token_file) as f:
            token = f.read().strip()
    if not token:
        print("no token: pass --token-file or set BERTH_TOKEN", file=sys.stderr)
        return 2
    os.makedirs(args.state_dir, exist_ok=True)
    with berth.BerthClient(args.server, token, ca_file=args.tls_ca,
                           cert_file=args.tls_cert, key_file=args.tls_key) as client:
        try:
            client.wait_ready(timeout=30)
        except berth.Unavailable:
            print("cannot connect to berthd at %s" % args.server, file=sys.stderr)
            return 3
        try:
            return cmd_sync(client, args) if args.command == "sync" else cmd_follow(client, args)
        except berth.InvalidSnapshot as e:
            print(e, file=sys.stderr)
            return 2
        except berth.BerthError as e:
            print(e, file=sys.stderr)
            return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
