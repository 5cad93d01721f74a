#!/usr/bin/python3
"""A reference job-server integration with Berth on PostgreSQL (the `berth`
package and Debian's python3-psycopg2).

    jobserver_pg.py --dsn DSN --server HOST:PORT --token-file FILE \
        [--interval 1.0] [--allow-mass-cancel] {init,run}

init  creates job-server's tables (idempotent):
        job_requests   what users asked for (id, workspace, image, argv,
                       memory, cpu, priority, cancelled)
        jobs           what Berth says of each: state, failure cause, exit
                       code, message, and the revision that set it
        applied_events every event revision applied (job, state): an audit
                       trail that shows no event was applied twice
        berth_cursor   one row: the last event revision handled (and its
                       history epoch) and the last generation reserved
run   pushes the desired list — requests not cancelled whose job has not
      finished — every --interval seconds, and follows Berth's events in a
      thread, writing each event's outcome AND its revision in one
      transaction. So an event is applied exactly once across restarts and
      kill -9 (of this loop or of berthd): a crash before the commit loses
      the write and the revision together, and the event is delivered again;
      after it, the follower resumes past it. SIGTERM stops it cleanly.

A generation is reserved in the database (committed) before it is sent, so
generations keep increasing across restarts; a refused stale one continues
above berthd's last applied generation. Exit status: 0 stopped, 1 a fatal
Berth error (e.g. HistoryForked: re-list and reset the cursor), 2 bad usage.
"""

import argparse
import json
import os
import signal
import sys
import threading

import psycopg2

import berth
from berth.v1 import event_pb2
from berth.v1 import job_pb2

SCHEMA = """
CREATE TABLE IF NOT EXISTS job_requests (
  id         text PRIMARY KEY,
  workspace  text NOT NULL,
  image      text NOT NULL,
  argv       jsonb NOT NULL DEFAULT '[]',
  memory     text NOT NULL DEFAULT '64Mi',
  cpu        text NOT NULL DEFAULT '100m',
  priority   integer NOT NULL DEFAULT 0,
  cancelled  boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS jobs (
  id            text PRIMARY KEY,
  state         text NOT NULL,
  failure_cause text,
  exit_code     integer,
  message       text NOT NULL DEFAULT '',
  revision      bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS applied_events (
  revision bigint NOT NULL,
  job_id   text NOT NULL,
  state    text NOT NULL
);
CREATE TABLE IF NOT EXISTS berth_cursor (
  one        boolean PRIMARY KEY DEFAULT true CHECK (one),
  revision   bigint NOT NULL DEFAULT 0,
  epoch      text NOT NULL DEFAULT '',
  generation bigint NOT NULL DEFAULT 0
);
INSERT INTO berth_cursor DEFAULT VALUES ON CONFLICT DO NOTHING;
"""

TERMINAL = tuple(job_pb2.JobState.Name(s) for s in berth.TERMINAL_STATES)


def desired_records(cur):
    """The whole list job-server wants run now."""
    cur.execute("""SELECT r.id, r.workspace, r.image, r.argv, r.memory, r.cpu, r.priority
                   FROM job_requests r LEFT JOIN jobs j ON j.id = r.id
                   WHERE NOT r.cancelled AND (j.state IS NULL OR j.state NOT IN %s)
                   ORDER BY r.id""", (TERMINAL,))
    return [{"id": i, "workspace": w, "image": img,
             "argv": argv if isinstance(argv, list) else json.loads(argv),
             "memory": mem, "cpu": cpu, "priority": prio}
            for i, w, img, argv, mem, cpu, prio in cur.fetchall()]


class Loop:
    def __init__(self, dsn, client, interval, allow_mass_cancel):
        self.dsn = dsn
        self.client = client
        self.interval = interval
        self.allow_mass_cancel = allow_mass_cancel
        self.stop = threading.Event()

    def reserve_generation(self, db, floor=0):
        with db, db.cursor() as cur:
            cur.execute("UPDATE berth_cursor SET generation = GREATEST(generation, %s) + 1 "
                        "RETURNING generation", (floor,))
            return cur.fetchone()[0]

    def push(self, db):
        with db, db.cursor() as cur:
            records = desired_records(cur)
        generation = self.reserve_generation(db)
        try:
            result = self.client.sync(records, generation,
                                      allow_mass_cancel=self.allow_mass_cancel)
        except berth.GenerationConflict as e:
            if e.last_applied_generation < generation:
                raise
            self.reserve_generation(db, floor=e.last_applied_generation)
            return None
        return result

    def apply(self, db, event):
        """One transaction: the event's outcome and its revision."""
        with db, db.cursor() as cur:
            cur.execute("UPDATE berth_cursor SET revision = %s, epoch = %s",
                        (event.revision, event.epoch))
            if event.type != event_pb2.EVENT_TYPE_JOB_STATE_CHANGED:
                return
            state = job_pb2.JobState.Name(event.state)
            cause = (job_pb2.FailureCause.Name(event.failure_cause)
                     if event.failure_cause else None)
            cur.execute("""INSERT INTO jobs (id, state, failure_cause, exit_code, message, revision)
                           VALUES (%s, %s, %s, %s, %s, %s)
                           ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state,
                             failure_cause = EXCLUDED.failure_cause,
                             exit_code = EXCLUDED.exit_code, message = EXCLUDED.message,
                             revision = EXCLUDED.revision""",
                        (event.job_id, state, cause,
                         event.exit_code if event.has_exit_code else None,
                         event.message, event.revision))
            cur.execute("INSERT INTO applied_events (revision, job_id, state) VALUES (%s, %s, %s)",
                        (event.revision, event.job_id, state))

    def run(self):
        events_db = psycopg2.connect(self.dsn)
        push_db = psycopg2.connect(self.dsn)
        with events_db, events_db.cursor() as cur:
            cur.execute("SELECT revision, epoch FROM berth_cursor")
            revision, epoch = cur.fetchone()
        follower = berth.EventFollower(self.client, None, from_revision=revision, epoch=epoch)

        def retrying(error, rev):
            print("events: %s; resuming after revision %d" % (error or "stream ended", rev),
                  file=sys.stderr, flush=True)
        thread = follower.start(lambda e: self.apply(events_db, e),
                                on_error=lambda e: self.stop.set(), on_retry=retrying)
        signal.signal(signal.SIGTERM, lambda *_: self.stop.set())
        try:
            while not self.stop.is_set():
                try:
                    result = self.push(push_db)
                    if result is not None:
                        print("pushed generation %d: +%d cancelled %d rejected %d"
                              % (result.generation, result.added, result.cancelled,
                                 result.rejected), file=sys.stderr, flush=True)
                except berth.Unavailable as e:
                    print("push: %s (will push again)" % e, file=sys.stderr, flush=True)
                self.stop.wait(self.interval)
        finally:
            thread.stop()
            try:
                thread.join(30)  # re-raises what ended the follower
            finally:
                events_db.close()
                push_db.close()
        return 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dsn", required=True, help="libpq connection string")
    parser.add_argument("--server", default="127.0.0.1:7070")
    parser.add_argument("--token-file")
    parser.add_argument("--interval", type=float, default=3.0,
                        help="seconds between pushes of the desired list")
    parser.add_argument("--allow-mass-cancel", action="store_true")
    parser.add_argument("command", choices=["init", "run"])
    args = parser.parse_args(argv)
    if args.command == "init":
        with psycopg2.connect(args.dsn) as db, db.cursor() as cur:
            cur.execute(SCHEMA)
        return 0
    token = os.environ.get("BERTH_TOKEN", "")
    if args.token_file:
        with open(args.token_file) as f:
            token = f.read().strip()
    if not token:
        print("no token: pass --token-file or set BERTH_TOKEN", file=sys.stderr)
        return 2
    with berth.BerthClient(args.server, token) as client:
        try:
            return Loop(args.dsn, client, args.interval, args.allow_mass_cancel).run()
        except berth.BerthError as e:
            print("fatal: %s" % e, file=sys.stderr)
            return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
