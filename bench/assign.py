"""Benchmark: concurrent claim + submit on PostgreSQL.

50 workers claim and submit on a NewsQA answer stage with 20,000 items and overlap 2, in
two ways:

- **Closed loop** (capacity), 60 s: each worker (threads over --processes processes)
  claims and submits back to back. Prints claims/s, submits/s, p50/p95 latency of claim
  and submit, and the number of duplicate (same worker twice on an item) and over-filled
  (more submissions than overlap) assignments — both must be 0. With no think time the
  system is always saturated and the latencies are queueing: by Little's law the mean
  claim + submit is workers / cycles per second, which the bench prints next to the target.
- **Paced** (latency at the target rate), --paced-seconds 60: the same 50 workers, one
  process each as single-threaded web workers serve them, together offering
  --paced-rate cycles/s (320: just above the 300 submits/s target); each worker's loop
  waits for its next slot in time, and a claim's latency counts from that scheduled start,
  so a worker that falls behind is not hidden.

Between them one worker works alone (--solo-seconds): the service time without queueing.
Last, the floor, in the same run: the same workers doing the barest claim + submit
PostgreSQL allows, straight from psycopg2, in a closed loop (the engine's ratio to it is
the figure that survives the machine's noise). Phases after the closed loop get fresh items
when it used them all.

Baselines named in the output: the issue's target (p95 <= 50 ms and >= 300 submits/s on
this 2-core machine) and the floor measured in the same run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/crowdqa_bench \\
        .venv/bin/python bench/assign.py [--workers 50] [--seconds 60] [--items 20000] \\
        [--processes 2] [--solo-seconds 5] [--paced-seconds 60 --paced-rate 320 \\
        --paced-processes 50] [--floor-seconds 20]

It reads DATABASE_URL and refuses to run on SQLite. It migrates that database, builds its
own project, and deletes the project afterwards.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import threading
import time
from collections import Counter
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Finished items emit to the next (automatic) stage; keep its jobs queued in memory so the
# benchmark measures claiming and submitting, not the agreement stage.
os.environ["CELERY_BROKER_URL"] = "memory://"
os.environ.setdefault("DEBUG", "false")  # DEBUG records every query: not production-like

TARGET_P95_MS = 50.0
TARGET_SUBMITS_PER_S = 300.0


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


class EngineWorker:
    """A worker through the engine: ``task_claim`` and ``task_submit``, as the pages do."""

    def __init__(self, user, project_id) -> None:
        from annotation.models import Project

        self.user = user
        self.project = Project.objects.get(pk=project_id)
        self.name = user.username

    def warm(self) -> None:
        """Connect before the clock starts, as a long-lived web worker is connected."""
        from django.db import connection

        connection.ensure_connection()

    def claim(self):
        from annotation import engine

        task = engine.task_claim(worker=self.user, project=self.project)
        return task.pk if task is not None else None

    def submit(self, slot_id) -> None:
        from annotation import engine

        engine.task_submit(assignment_id=slot_id, worker=self.user,
                           payload={"no_answer": True})

    def close(self) -> None:
        from django.db import connections

        connections.close_all()


class FloorWorker:
    """The floor: the barest claim and submit PostgreSQL allows, straight from psycopg2
    (no Django, no transition log, no foreign keys, two indexes): a claim is one UPDATE of
    the first open slot with SKIP LOCKED, a submit one UPDATE and one INSERT committed
    together."""

    def __init__(self, worker_id, table) -> None:
        import psycopg2

        self.worker_id, self.table, self.name = worker_id, table, f"floor-{worker_id}"
        self.conn = psycopg2.connect(os.environ["DATABASE_URL"])
        self.conn.autocommit = True
        self.cursor = self.conn.cursor()

    def warm(self) -> None:
        pass  # connected in __init__

    def claim(self):
        self.cursor.execute(
            f"UPDATE {self.table} SET status = 'active', worker = %s WHERE id = (SELECT id"
            f" FROM {self.table} s WHERE status = 'open' AND NOT EXISTS (SELECT 1 FROM"
            f" {self.table} t WHERE t.item = s.item AND t.worker = %s) ORDER BY item, id"
            " LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id", [self.worker_id, self.worker_id])
        row = self.cursor.fetchone()
        return row[0] if row else None

    def submit(self, slot_id) -> None:
        self.conn.autocommit = False
        self.cursor.execute(f"UPDATE {self.table} SET status = 'submitted' WHERE id = %s",
                            [slot_id])
        self.cursor.execute(f"INSERT INTO {self.table}_sub (slot, payload) VALUES (%s, %s)",
                            [slot_id, '{"no_answer": true}'])
        self.conn.commit()
        self.conn.autocommit = True

    def close(self) -> None:
        self.conn.close()


def _run_group(make, ids, seconds, go, results, period=None) -> None:
    """One process: a thread per worker (``make(id)``), claiming and submitting until the
    deadline; back to back, or with ``period`` one cycle per worker every ``period``
    seconds (a claim's latency then counts from its scheduled start, so a worker that
    falls behind is not hidden)."""
    from django.db import connections

    connections.close_all()
    claim_ms: list[float] = []
    submit_ms: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    workers = [make(each) for each in ids]
    connections.close_all()
    warmed = threading.Semaphore(0)
    start = threading.Event()
    clock: dict[str, float] = {}

    def work(worker, offset) -> None:
        mine_claim, mine_submit = [], []
        worker.warm()
        warmed.release()
        start.wait()
        deadline = clock["deadline"]
        scheduled = time.perf_counter() + offset
        try:
            while time.monotonic() < deadline:
                if period is not None:
                    time.sleep(max(0.0, scheduled - time.perf_counter()))
                    t0, scheduled = scheduled, scheduled + period
                else:
                    t0 = time.perf_counter()
                slot_id = worker.claim()
                t1 = time.perf_counter()
                mine_claim.append((t1 - t0) * 1000)
                if slot_id is None:
                    break
                worker.submit(slot_id)
                mine_submit.append((time.perf_counter() - t1) * 1000)
        except Exception as exc:
            errors.append(f"{worker.name}: {exc!r}")
        finally:
            worker.close()
            with lock:
                claim_ms.extend(mine_claim)
                submit_ms.extend(mine_submit)

    # Paced workers start spread over one period, not all at once.
    threads = [threading.Thread(target=work, args=(w, (period or 0) * n / len(workers)))
               for n, w in enumerate(workers)]
    for t in threads:
        t.start()
    for _ in threads:
        warmed.acquire()
    go.wait()  # every process connected: the clock starts
    clock["deadline"] = time.monotonic() + seconds
    start.set()
    for t in threads:
        t.join()
    results.put((claim_ms, submit_ms, errors))


def _phase(make, ids, seconds, processes, period=None):
    """Run a worker per id as threads spread over ``processes`` processes (the GIL limits
    one process to one core's worth of Python); returns their latencies and the wall
    time."""
    ctx = multiprocessing.get_context("fork")
    results = ctx.Queue()
    groups = [group for group in (ids[i::processes] for i in range(processes)) if group]
    go = ctx.Barrier(len(groups) + 1)
    procs = [ctx.Process(target=_run_group, args=(make, group, seconds, go, results, period))
             for group in groups]
    for proc in procs:
        proc.start()
    go.wait()  # every worker connected
    began = time.monotonic()
    claim_ms: list[float] = []
    submit_ms: list[float] = []
    errors: list[str] = []
    for _ in procs:
        claims, submits, errs = results.get()
        claim_ms += claims
        submit_ms += submits
        errors += errs
    for proc in procs:
        proc.join()
    return claim_ms, submit_ms, errors, time.monotonic() - began, len(procs)


def _floor_tables(cursor, table: str, items: int) -> None:
    cursor.execute(f"DROP TABLE IF EXISTS {table}, {table}_sub")
    cursor.execute(f"CREATE TABLE {table} (id bigserial PRIMARY KEY, item int NOT NULL,"
                   " status text NOT NULL, worker int)")
    cursor.execute(f"CREATE TABLE {table}_sub (id bigserial PRIMARY KEY, slot bigint NOT NULL,"
                   " payload jsonb NOT NULL)")
    cursor.execute(f"INSERT INTO {table} (item, status) SELECT n / 2, 'open'"
                   " FROM generate_series(0, %s) n", [2 * items - 1])
    cursor.execute(f"CREATE INDEX ON {table} (item, id) WHERE status = 'open'")
    cursor.execute(f"CREATE INDEX ON {table} (item, worker)")
    cursor.execute(f"ANALYZE {table}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--processes", type=int, default=2,
                        help="processes the worker threads are spread over")
    parser.add_argument("--solo-seconds", type=float, default=5.0,
                        help="then one worker alone this long (0: skip)")
    parser.add_argument("--paced-seconds", type=float, default=60.0,
                        help="then the workers paced to --paced-rate this long (0: skip)")
    parser.add_argument("--paced-rate", type=float, default=320.0,
                        help="cycles per second the paced workers offer in all")
    parser.add_argument("--paced-processes", type=int, default=0,
                        help="processes of the paced phase (default: one per worker)")
    parser.add_argument("--floor-seconds", type=float, default=20.0,
                        help="then the bare-SQL floor this long (0: skip)")
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        print("bench/assign.py needs DATABASE_URL=postgres://... (it refuses SQLite: row "
              "locks are the point)", file=sys.stderr)
        return 2

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections

    from annotation import engine
    from annotation.models import Assignment, Item, Project
    from annotation.roles import Role
    from annotation.services import user_ensure
    from collector.models import Corpus, Document

    call_command("migrate", verbosity=0)
    stamp = time.strftime("%Y%m%d%H%M%S")
    corpus, _ = Corpus.objects.get_or_create(name="bench-assign", defaults={"language": "en"})
    doc, _ = Document.objects.get_or_create(
        corpus=corpus, external_id="bench-article",
        defaults={"title": "Bench", "body": "The bench article has a few words in it.",
                  "highlights": ["bench"]},
    )
    project = engine.project_create(name=f"bench-assign-{stamp}", recipe="newsqa", corpus=corpus)
    Project.objects.filter(pk=project.pk).update(status=Project.Status.ACTIVE)
    stage = project.stages.get(kind="newsqa_answer")
    built = 0

    def items_add(n: int) -> None:
        """``n`` more open items with two slots each."""
        nonlocal built
        items = Item.objects.bulk_create([
            Item(project=project, stage=stage, key=f"q{k}", data={"question": f"Question {k}?"},
                 document=doc, overlap=2, status=Item.Status.OPEN)
            for k in range(built, built + n)
        ], batch_size=5000)
        Assignment.objects.bulk_create([
            Assignment(item=item, stage=stage) for item in items for _ in range(2)
        ], batch_size=5000)
        built += n

    def items_top_up(cycles: float) -> None:
        """Enough open slots for ``cycles`` more claims (the main phase may leave none)."""
        open_slots = Assignment.objects.filter(stage=stage, status="open").count()
        if open_slots < cycles:
            items_add(int(cycles - open_slots) // 2 + 1)

    print(f"building {args.items:,} items with overlap 2 ...", flush=True)
    items_add(args.items)
    users = []
    for n in range(args.workers + 1):
        user, _ = user_ensure(username=f"bench-worker-{n}", password="bench-password-0123",  # noqa: S106
                              roles=(Role.ANNOTATOR,))
        engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
        users.append(user)
    users, solo_user = users[:-1], users[-1]

    # Fresh statistics and no dead rows left by earlier runs, as autovacuum keeps a live
    # database: right after a bulk load the planner would take every slot for open and plan
    # the claim badly, and the rows earlier runs deleted would still be walked by this one
    # (this machine's PostgreSQL runs with autovacuum off).
    def vacuum() -> None:
        with connections["default"].cursor() as cursor:
            for table in ("annotation_item", "annotation_assignment", "annotation_submission",
                          "annotation_transitionlog"):
                cursor.execute(f"VACUUM (ANALYZE) {table}")
        connections.close_all()  # never fork a process with an open connection

    with connections["default"].cursor() as cursor:
        cursor.execute("SHOW autovacuum")
        autovacuum = cursor.fetchone()[0]
    vacuum()
    print(f"autovacuum={autovacuum}; the engine's tables are vacuumed and analysed before "
          "each phase", flush=True)

    connections.close_all()
    engine_worker = partial(EngineWorker, project_id=project.pk)
    claim_ms, submit_ms, errors, elapsed, n_procs = _phase(engine_worker, users, args.seconds,
                                                           args.processes)
    ran_dry = len(submit_ms) >= 2 * args.items
    # The later phases get fresh items when the main phase took (nearly) all of them.
    items_top_up(2_000 * args.solo_seconds + (args.paced_rate * args.paced_seconds * 1.5
                                              if args.paced_seconds else 0))
    vacuum()  # the closed loop's dead rows, as autovacuum would clear them on a live database
    # One worker alone: the service time of a claim and a submit, without queueing.
    solo_claim, solo_submit, solo_errors, _, _ = (
        _phase(engine_worker, [solo_user], args.solo_seconds, 1) if args.solo_seconds
        else ([], [], [], 0, 0))
    errors += solo_errors
    # Paced: the same workers offering --paced-rate cycles/s in all (a crowd has think
    # time), so the latencies are those of a platform serving that rate, not saturated.
    paced = None
    if args.paced_seconds:
        p_claim, p_submit, p_errors, p_elapsed, _ = _phase(
            engine_worker, users, args.paced_seconds, args.paced_processes or args.workers,
            period=args.workers / args.paced_rate)
        errors += p_errors
        paced = (len(p_submit) / p_elapsed, percentile(p_claim, 0.5),
                 percentile(p_claim, 0.95), percentile(p_submit, 0.5),
                 percentile(p_submit, 0.95))
    # The floor, in the same run: what this machine gives the barest claim + submit.
    floor = None
    if args.floor_seconds:
        table = f"bench_floor_{stamp}"
        with connections["default"].cursor() as cursor:
            _floor_tables(cursor, table, args.items)
        connections.close_all()
        f_claim, f_submit, f_errors, f_elapsed, _ = _phase(
            partial(FloorWorker, table=table), list(range(1, args.workers + 1)),
            args.floor_seconds, args.processes)
        errors += f_errors
        with connections["default"].cursor() as cursor:
            cursor.execute(f"DROP TABLE {table}, {table}_sub")
        floor = (len(f_submit) / f_elapsed, percentile(f_claim, 0.95),
                 percentile(f_submit, 0.95))

    submitted = Assignment.objects.filter(stage=stage, status=Assignment.Status.SUBMITTED)
    per_item = Counter(submitted.values_list("item_id", flat=True))
    pairs = Counter(submitted.values_list("item_id", "worker_id"))
    duplicates = sum(n - 1 for n in pairs.values() if n > 1)
    overfilled = sum(1 for n in per_item.values() if n > 2)
    claims_per_s = len(claim_ms) / elapsed
    submits_per_s = len(submit_ms) / elapsed
    claim_p95, submit_p95 = percentile(claim_ms, 0.95), percentile(submit_ms, 0.95)
    print(f"workers={args.workers} processes={n_procs} seconds={elapsed:.1f} "
          f"items={args.items} overlap=2")
    print(f"claims: {len(claim_ms):,} ({claims_per_s:.1f}/s), p50 "
          f"{statistics.median(claim_ms):.1f} ms, p95 {claim_p95:.1f} ms")
    print(f"submits: {len(submit_ms):,} ({submits_per_s:.1f}/s), p50 "
          f"{statistics.median(submit_ms):.1f} ms, p95 {submit_p95:.1f} ms")
    print(f"items completed: {sum(1 for n in per_item.values() if n == 2):,}")
    if ran_dry:
        print(f"the main phase ran out of items after {elapsed:.1f} s (all {args.items:,} "
              "answered twice): the figures cover that time")
    print(f"duplicates={duplicates} overfilled={overfilled} errors={len(errors)}")
    for line in errors[:5]:
        print("  error:", line)
    if solo_claim:
        print(f"one worker alone ({args.solo_seconds:.0f} s): claim p50 "
              f"{statistics.median(solo_claim):.1f} / p95 {percentile(solo_claim, 0.95):.1f} ms, "
              f"submit p50 {statistics.median(solo_submit):.1f} / p95 "
              f"{percentile(solo_submit, 0.95):.1f} ms")
    if paced is not None:
        print(f"paced ({args.workers} workers in {args.paced_processes or args.workers} "
              f"processes offering {args.paced_rate:.0f} cycles/s in all, "
              f"{args.paced_seconds:.0f} s): {paced[0]:.1f} submits/s, claim p50 {paced[1]:.1f} / "
              f"p95 {paced[2]:.1f} ms, submit p50 {paced[3]:.1f} / p95 {paced[4]:.1f} ms")
    if floor is not None:
        print(f"floor (bare SQL from psycopg2, same {args.workers} workers, "
              f"{args.floor_seconds:.0f} s): {floor[0]:.1f} cycles/s, claim p95 {floor[1]:.1f} ms, "
              f"submit p95 {floor[2]:.1f} ms; the engine does {submits_per_s / floor[0]:.2f}x "
              "the floor's cycles/s")
    # A closed loop without think time: each worker waits for its own claim and submit, so
    # (Little's law) mean claim + submit = workers / cycles per second.
    cycle_ms = 1000 * args.workers / submits_per_s if submits_per_s else float("nan")
    print(f"closed loop: {args.workers} workers / {submits_per_s:.0f} cycles/s = "
          f"{cycle_ms:.0f} ms mean claim + submit (Little's law); both p95 <= "
          f"{TARGET_P95_MS:.0f} ms needs a mean cycle below {TARGET_P95_MS:.0f} ms, i.e. more "
          f"than {args.workers * 1000 / TARGET_P95_MS:.0f} cycles/s")
    print(f"vs target: submits/s {submits_per_s / TARGET_SUBMITS_PER_S:.2f}x of "
          f"{TARGET_SUBMITS_PER_S:.0f}; claim p95 {claim_p95 / TARGET_P95_MS:.2f}x and submit "
          f"p95 {submit_p95 / TARGET_P95_MS:.2f}x of {TARGET_P95_MS:.0f} ms (lower is better)")
    if paced is not None:
        met = (paced[0] >= TARGET_SUBMITS_PER_S and paced[2] <= TARGET_P95_MS
               and paced[4] <= TARGET_P95_MS)
        print(f"vs target, paced: submits/s {paced[0] / TARGET_SUBMITS_PER_S:.2f}x of "
              f"{TARGET_SUBMITS_PER_S:.0f}; claim p95 {paced[2] / TARGET_P95_MS:.2f}x and submit "
              f"p95 {paced[4] / TARGET_P95_MS:.2f}x of {TARGET_P95_MS:.0f} ms: both targets "
              f"{'met' if met else 'NOT met'} together")
    # Clean up the bench project (history rows first: they protect what they point at).
    from annotation.models import Submission

    Submission.objects.filter(stage__project=project).delete()
    Item.objects.filter(project=project).update(parent=None)
    Project.objects.filter(pk=project.pk).delete()
    print(f"RESULT assign claims_per_s={claims_per_s:.1f} submits_per_s={submits_per_s:.1f} "
          f"claim_p95_ms={claim_p95:.1f} submit_p95_ms={submit_p95:.1f} "
          f"duplicates={duplicates} overfilled={overfilled}"
          + (f" solo_claim_p95_ms={percentile(solo_claim, 0.95):.1f}"
             f" solo_submit_p95_ms={percentile(solo_submit, 0.95):.1f}" if solo_claim else "")
          + (f" paced_submits_per_s={paced[0]:.1f} paced_claim_p95_ms={paced[2]:.1f}"
             f" paced_submit_p95_ms={paced[4]:.1f}" if paced else "")
          + (f" floor_cycles_per_s={floor[0]:.1f} floor_claim_p95_ms={floor[1]:.1f}"
             f" floor_submit_p95_ms={floor[2]:.1f}" if floor else ""))
    return 0 if not errors and duplicates == 0 and overfilled == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
