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

**--quotas** (per-worker limits, ``annotation.eligibility``): the closed loop, the worker
alone and the paced phase each run twice, limits off (the phases above, unchanged) and then
limits on: every worker's membership has a session quota (``session_limit``) and the answer
stage a ``max_items_per_worker``, both 10**6, so every claim pays the counting UPDATE of the
membership row but none is refused. Each run of a pair starts alike (as many open slots as
the first closed loop had, the engine's tables vacuumed). It prints both, their ratios
(limits on / off: closed-loop submits/s, paced claim p95 and submit p95), whether they stay
within 10%, and the duplicates and over-filled items of each. Last, a short check with
small limits that do refuse: --quota-check-workers fresh workers, each claiming in
--quota-check-threads threads at once, every other one with a session quota of
--quota-check-limit, all under a stage limit two above it; it counts the workers whose
live and submitted slots pass a limit (``quota_overruns``, must be 0). --quota-rounds N
repeats the off/on pairs in alternating order (off-on, on-off, ...) and pools them. A
default --quotas run takes about 6 minutes here; shorten it with --seconds,
--paced-seconds, --floor-seconds 0.

**--quality** (qualification and gold checks, ``annotation.eligibility`` and
``annotation.quality``): the same off/on pairs as --quotas, by the same code
(--quality-rounds; a second worker alone; the same ratios and 10% bound), with
qualification and gold checks off and then on. On: the answer stage asks for a
qualification (``qualification_items`` 1; every bench worker has a qualified, active
``WorkerStage``, so each claim checks the standing and none is refused) and mixes in gold
checks at --quality-gold-rate (``gold_rate``, 0.1) from at least --quality-gold-items (200)
gold check items of 3 slots each, made before the first on run and added to before each
later one when its workers might run out (a worker sees each gold item at most once). Their
expected answer is the bench's own ``{"no_answer": true}``, so every check scores 1, and
``gold_min_items`` is 10**6: nobody is paused. A submitted gold slot is replaced by a fresh
one and scored, never finished. Off: neither (``qualification_items`` and ``gold_rate``
0; the standings stay, and the gold items, once made, stay open in the stage below the
range the work probe reads). It prints the share of the on runs' claims that were gold,
and checks afterwards that no gold item is done or has children, that no work slot went
to a worker without a qualified, active standing, and (--quality-check-workers) that
workers who are unqualified or paused get no slot while it is on, beside one qualified
worker who does.

--quality-paired-rounds N then runs N rounds of a closed loop and a paced run with quality
on and off at the same time: a second NewsQA project gets the same workers and items, half
the workers work the bench's stage with quality on while the other half work the second
stage with it off (paced: together --paced-rate cycles/s), the halves swapped every round;
it prints each condition's pooled submits/s and p95s and their ratios
(``quality_paired_*`` keys). Sequential runs compare one minute of this shared machine
with another (their paced p95s moved 3-17x between runs of the same condition); paired
runs put the same minute's load on both.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/crowdqa_bench \\
        .venv/bin/python bench/assign.py [--workers 50] [--seconds 60] [--items 20000] \\
        [--processes 2] [--solo-seconds 5] [--paced-seconds 60 --paced-rate 320 \\
        --paced-processes 50] [--floor-seconds 20] [--quotas [--quota-rounds 1] \\
        [--quota-check-workers 20 --quota-check-threads 3 --quota-check-limit 5]] \\
        [--quality [--quality-rounds 1] [--quality-gold-rate 0.1] \\
        [--quality-gold-items 200] [--quality-check-workers 10] [--quality-paired-rounds 0]]

It reads DATABASE_URL and refuses to run on SQLite. It migrates that database, builds its
own project, and deletes the project afterwards.
"""

from __future__ import annotations

import argparse
import contextlib
import math
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
        from annotation.eligibility import GOLD_PRIORITY
        from annotation.models import Project

        self.user = user
        self.project = Project.objects.get(pk=project_id)
        self.name = user.username
        self.gold, self.gold_priority = False, GOLD_PRIORITY
        # Which condition the worker serves in a paired run (--quality-paired-rounds).
        self.group = None

    def warm(self) -> None:
        """Connect before the clock starts, as a long-lived web worker is connected."""
        from django.db import connection

        connection.ensure_connection()

    def claim(self):
        from annotation import engine

        task = engine.task_claim(worker=self.user, project=self.project)
        # Whether the slot is a gold check's (--quality splits the latencies by it).
        self.gold = task is not None and task.priority == self.gold_priority
        return task.pk if task is not None else None

    def submit(self, slot_id) -> None:
        from annotation import engine

        engine.task_submit(assignment_id=slot_id, worker=self.user,
                           payload={"no_answer": True})

    def close(self) -> None:
        from django.db import connections

        connections.close_all()


class LimitWorker(EngineWorker):
    """A worker in several tabs at once (the quota check): a claim may hand back the live
    slot another of their threads holds, and then only the first submit of it counts."""

    def submit(self, slot_id) -> None:
        from annotation import engine

        # Another thread of the same worker may have submitted this live slot first.
        with contextlib.suppress(engine.TaskError):
            super().submit(slot_id)


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
    # Each submitted cycle: claim ms, submit ms, whether the slot was a gold check's, and
    # the worker's group (paired runs).
    cycles: list[tuple[float, float, bool, object]] = []
    errors: list[str] = []
    lock = threading.Lock()
    workers = [make(each) for each in ids]
    connections.close_all()
    warmed = threading.Semaphore(0)
    start = threading.Event()
    clock: dict[str, float] = {}

    def work(worker, offset) -> None:
        mine_claim, mine_submit, mine_cycles = [], [], []
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
                mine_cycles.append((mine_claim[-1], mine_submit[-1],
                                    getattr(worker, "gold", False),
                                    getattr(worker, "group", None)))
        except Exception as exc:
            errors.append(f"{worker.name}: {exc!r}")
        finally:
            worker.close()
            with lock:
                claim_ms.extend(mine_claim)
                submit_ms.extend(mine_submit)
                cycles.extend(mine_cycles)

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
    results.put((claim_ms, submit_ms, errors, cycles))


def _phase(make, ids, seconds, processes, period=None, cycles=None):
    """Run a worker per id as threads spread over ``processes`` processes (the GIL limits
    one process to one core's worth of Python); returns their latencies and the wall
    time. ``cycles``: a list to extend with each submitted cycle's claim ms, submit ms and
    whether its slot was a gold check's."""
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
        claims, submits, errs, done = results.get()
        if cycles is not None:
            cycles += done
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


class Run:
    """One measured run of a phase: its latencies, errors and wall time."""

    def __init__(self, claim_ms, submit_ms, errors, elapsed, dup=0, over=0, observed=None,
                 open_at_start=0, cycles=None) -> None:
        self.claim_ms, self.submit_ms, self.errors, self.elapsed = (claim_ms, submit_ms,
                                                                    errors, elapsed)
        # observed: what the comparison's ``observe`` read after an on run (Toggle)
        self.dup, self.over, self.observed = dup, over, observed
        self.open_at_start = open_at_start
        self.cycles = cycles or []  # (claim ms, submit ms, gold) of each submitted cycle

    @property
    def ran_dry(self) -> bool:
        return bool(self.open_at_start) and len(self.submit_ms) >= self.open_at_start


class Pooled:
    """The runs of one condition (off or on) of a phase, pooled."""

    def __init__(self, runs: list[Run]) -> None:
        self.runs = runs
        self.claim_ms = [v for run in runs for v in run.claim_ms]
        self.submit_ms = [v for run in runs for v in run.submit_ms]
        elapsed = sum(run.elapsed for run in runs)
        self.submits_per_s = len(self.submit_ms) / elapsed if elapsed else float("nan")
        self.dup = sum(run.dup for run in runs)
        self.over = sum(run.over for run in runs)

    def p(self, which: str, q: float) -> float:
        return percentile(self.claim_ms if which == "claim" else self.submit_ms, q)

    def each(self) -> str:
        """Each run's submits/s and claim / submit p95, in the order they ran."""
        return "; ".join(
            f"{len(run.submit_ms) / run.elapsed:.0f}/s {percentile(run.claim_ms, 0.95):.1f} / "
            f"{percentile(run.submit_ms, 0.95):.1f} ms" for run in self.runs)

    def line(self) -> str:
        return (f"{len(self.submit_ms):,} submits in {sum(r.elapsed for r in self.runs):.1f} s "
                f"= {self.submits_per_s:.1f}/s, claim p50 {self.p('claim', 0.5):.1f} / p95 "
                f"{self.p('claim', 0.95):.1f} ms, submit p50 {self.p('submit', 0.5):.1f} / p95 "
                f"{self.p('submit', 0.95):.1f} ms; duplicates={self.dup} overfilled={self.over}")


QUOTA_BIG = 10**6  # a limit no run reaches: every claim is counted, none refused
QUOTA_BOUND = 0.10  # limits on must stay within 10% of limits off


QUALITY_GOLD_SLOTS = 3  # open slots of a gold check item, as annotation.gold makes them
QUALITY_NEVER_PAUSE = 10**6  # gold_min_items: nobody is paused during the bench


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


class Toggle:
    """What an off / on comparison switches (--quotas: the per-worker limits; --quality:
    qualification and gold checks). ``key`` prefixes its RESULT keys, ``what`` names it in
    the output, ``title`` says what on means; ``switch(on)`` sets it for the bench workers;
    ``prepare(cycles)`` readies an on run of about ``cycles`` claims per worker;
    ``observe(since)`` reads what an on run did since ``since`` (kept as ``Run.observed``)
    and ``describe(observed)`` says it."""

    def __init__(self, key: str, what: str, title: str, rounds: int, switch, observe,
                 describe, prepare=None) -> None:
        self.key, self.what, self.title, self.rounds = key, what, title, rounds
        self.switch, self.observe, self.describe = switch, observe, describe
        self.prepare = prepare or (lambda cycles: None)

    def orders(self, closed_first_off: bool) -> list[tuple[bool, ...]]:
        """The order of each round's runs: off-on, on-off, ... (with ``closed_first_off``
        the first round's off run is the main closed loop, already done)."""
        rounds = [(False, True) if r % 2 == 0 else (True, False) for r in range(self.rounds)]
        if closed_first_off and rounds:
            rounds[0] = (True,)
        return rounds


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
    parser.add_argument("--quotas", action="store_true",
                        help="closed loop, alone and paced twice: limits off, then on (every "
                             "claim counted on the membership row, none refused); then a "
                             "check with small limits")
    parser.add_argument("--quota-rounds", type=int, default=1,
                        help="on/off pairs of the closed loop and the paced phase (the order "
                             "alternates: off-on, on-off, ...; pooled)")
    parser.add_argument("--quota-check-workers", type=int, default=20,
                        help="workers of the small-limit check (0: skip)")
    parser.add_argument("--quota-check-threads", type=int, default=3,
                        help="threads claiming at once for each worker of the check")
    parser.add_argument("--quota-check-limit", type=int, default=5,
                        help="the check's session quota (the stage limit is 2 more)")
    parser.add_argument("--quota-check-seconds", type=float, default=30.0,
                        help="deadline of the check (it ends when every worker is refused)")
    parser.add_argument("--quality", action="store_true",
                        help="closed loop, alone and paced twice: qualification and gold "
                             "checks off, then on (every bench worker qualified, gold mixed "
                             "in at --quality-gold-rate); then a check with workers the claim "
                             "must refuse")
    parser.add_argument("--quality-rounds", type=int, default=1,
                        help="on/off pairs of --quality (as --quota-rounds)")
    parser.add_argument("--quality-gold-rate", type=float, default=0.1,
                        help="the answer stage's gold_rate when on")
    parser.add_argument("--quality-gold-items", type=int, default=200,
                        help="gold check items (3 slots each) at least; more are added when "
                             "the next on run might exhaust a worker's unseen ones")
    parser.add_argument("--quality-check-workers", type=int, default=10,
                        help="workers of the refusal check, every other one unqualified and "
                             "the others paused (0: skip)")
    parser.add_argument("--quality-paired-rounds", type=int, default=0,
                        help="then paced runs with quality on and off at once: half the "
                             "workers on a stage with it on, half on a second project's stage "
                             "with it off, the halves swapped each round (the machine's noise "
                             "then falls on both alike)")
    args = parser.parse_args()
    if args.quotas and args.quality:
        parser.error("--quotas and --quality compare one thing each: run them apart")
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        print("bench/assign.py needs DATABASE_URL=postgres://... (it refuses SQLite: row "
              "locks are the point)", file=sys.stderr)
        return 2

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections
    from django.utils import timezone

    from annotation import engine
    from annotation.eligibility import GOLD_PRIORITY
    from annotation.models import Assignment, Item, Project, ProjectMember, Stage, WorkerStage
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
    built: Counter = Counter()  # items made per stage

    def items_add(n: int, priority: int = 0, to=None) -> None:
        """``n`` more open items with two slots each (a lower ``priority`` is claimed
        first) in the answer stage ``to`` (the bench's own by default)."""
        to = to or stage
        items = Item.objects.bulk_create([
            Item(project_id=to.project_id, stage=to, key=f"q{k}",
                 data={"question": f"Question {k}?"}, document=doc, overlap=2,
                 status=Item.Status.OPEN, priority=priority)
            for k in range(built[to.pk], built[to.pk] + n)
        ], batch_size=5000)
        Assignment.objects.bulk_create([
            Assignment(item=item, stage=to, priority=priority)
            for item in items for _ in range(2)
        ], batch_size=5000)
        built[to.pk] += n

    def open_slots(of=None) -> int:
        """Open work slots (gold check slots, --quality, are not work)."""
        return Assignment.objects.filter(stage=of or stage, status="open",
                                         priority__gt=GOLD_PRIORITY).count()

    def items_top_up(cycles: float, to=None) -> None:
        """Enough open slots for ``cycles`` more claims (the main phase may leave none)."""
        have = open_slots(to)
        if have < cycles:
            items_add(int(cycles - have) // 2 + 1, to=to)

    print(f"building {args.items:,} items with overlap 2 ...", flush=True)
    items_add(args.items)
    users = []
    compare = args.quotas or args.quality  # an off / on comparison (Toggle)
    # --quotas, --quality: a second worker alone, with the toggle on. Not the first one
    # again: a worker alone leaves every item they answered with its other slot open, and
    # each of their claims walks past those first, so a second run of the same worker is
    # slower anyway.
    for n in range(args.workers + (2 if compare else 1)):
        user, _ = user_ensure(username=f"bench-worker-{n}", password="bench-password-0123",  # noqa: S106
                              roles=(Role.ANNOTATOR,))
        member = engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
        if args.quality:  # qualified and active: the claim checks it, refuses nobody
            WorkerStage.objects.update_or_create(member=member, stage=stage,
                                                 defaults={"qualified": True})
        users.append(user)
    solo_user_on = users.pop() if compare else None
    users, solo_user = users[:-1], users[-1]

    # Fresh statistics and no dead rows left by earlier runs, as autovacuum keeps a live
    # database: right after a bulk load the planner would take every slot for open and plan
    # the claim badly, and the rows earlier runs deleted would still be walked by this one
    # (this machine's PostgreSQL runs with autovacuum off).
    engine_tables = ["annotation_item", "annotation_assignment", "annotation_submission",
                     "annotation_transitionlog"]
    if args.quotas:  # the counted claims update the membership rows
        engine_tables.append("annotation_projectmember")
    if args.quality:  # gold answers update the standings
        engine_tables += ["annotation_workerstage", "annotation_goldanswer"]

    def vacuum() -> None:
        with connections["default"].cursor() as cursor:
            for table in engine_tables:
                cursor.execute(f"VACUUM (ANALYZE) {table}")
        connections.close_all()  # never fork a process with an open connection

    with connections["default"].cursor() as cursor:
        cursor.execute("SHOW autovacuum")
        autovacuum = cursor.fetchone()[0]
    vacuum()
    print(f"autovacuum={autovacuum}; the engine's tables are vacuumed and analysed before "
          "each phase", flush=True)

    # Limits (--quotas): on, every bench worker's membership has a session quota and the
    # answer stage a per-worker limit, both out of reach, so each claim is counted on the
    # membership row by the claim statement and none is refused; off, neither (the default
    # of a project and of a member added by an admin).
    bench_users = [*users, solo_user, *([solo_user_on] if solo_user_on else [])]
    members = ProjectMember.objects.filter(project=project, user__in=bench_users)

    def limits(on: bool) -> None:
        Stage.objects.filter(pk=stage.pk).update(
            params={**stage.params, "max_items_per_worker": QUOTA_BIG if on else 0})
        members.update(session_limit=QUOTA_BIG if on else None, session_taken=0,
                       stage_taken={}, session_started_at=timezone.now() if on else None)
        connections.close_all()

    def integrity(of=None) -> tuple[int, int]:
        """Duplicates (a worker's second submission of an item) and over-filled items
        (more submissions than overlap) of the stage (``of``: another) so far."""
        of = of or stage
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT count(*) - count(DISTINCT (item_id, worker_id)) FROM"
                           " annotation_assignment WHERE stage_id = %s AND status = 'submitted'",
                           [of.pk])
            dup = cursor.fetchone()[0]
            # Work items only: a gold check item (--quality) takes submissions without end.
            cursor.execute("SELECT count(*) FROM (SELECT item_id FROM annotation_assignment"
                           " WHERE stage_id = %s AND status = 'submitted' AND priority > %s"
                           " GROUP BY item_id HAVING count(*) > 2) o", [of.pk, GOLD_PRIORITY])
            over = cursor.fetchone()[0]
        connections.close_all()
        return dup, over

    def counted_since(since) -> tuple[int, int, int]:
        """Claims of the bench workers since ``since``, and the claims their membership rows
        counted there: session quota, stage limit."""
        claimed = Assignment.objects.filter(stage=stage, claimed_at__gte=since,
                                            worker__in=bench_users).count()
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT coalesce(sum(session_taken), 0), coalesce(sum((stage_taken"
                           "->>%s)::int), 0) FROM annotation_projectmember WHERE project_id = %s"
                           " AND user_id = ANY(%s)",
                           [str(stage.pk), project.pk, [u.pk for u in bench_users]])
            session_counted, stage_counted = cursor.fetchone()
        connections.close_all()
        return claimed, session_counted, stage_counted

    def counted_describe(counted) -> str:
        claimed, session_counted, stage_counted = counted
        return (f"counted on the membership rows: {session_counted:,} of {claimed:,} claims "
                f"(session quota), {stage_counted:,} (stage limit)")

    # Qualification and gold checks (--quality): on, the answer stage asks for a
    # qualification (every bench worker's standing is qualified and active) and mixes in gold
    # checks at the gold rate; off, neither (the default of a stage).
    gold_made = 0
    quality_on = {"qualification_items": 1, "gold_rate": args.quality_gold_rate,
                  "gold_min_items": QUALITY_NEVER_PAUSE}
    quality_off = {"qualification_items": 0, "gold_rate": 0.0}

    def quality_switch(on: bool) -> None:
        Stage.objects.filter(pk=stage.pk).update(
            params={**stage.params, **(quality_on if on else quality_off)})
        connections.close_all()

    def gold_seen_most() -> int:
        """The most gold check items one worker has taken so far."""
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM"
                           " annotation_assignment WHERE stage_id = %s AND priority = %s AND"
                           " worker_id IS NOT NULL GROUP BY worker_id) w",
                           [stage.pk, GOLD_PRIORITY])
            most = cursor.fetchone()[0]
        connections.close_all()
        return most

    def gold_ready(cycles: float) -> None:
        """Gold check items for an on run of about ``cycles`` claims per worker: at least
        --quality-gold-items, and more when the worker who has seen most might run out."""
        nonlocal gold_made
        need = max(args.quality_gold_items,
                   gold_seen_most() + math.ceil(1.5 * cycles * args.quality_gold_rate) + 10)
        if need <= gold_made:
            return
        golds = Item.objects.bulk_create([
            Item(project=project, stage=stage, key=f"gold:bench-{k}", document=doc,
                 data={"question": f"Gold question {k}?"}, gold="check",
                 status=Item.Status.OPEN, priority=GOLD_PRIORITY, overlap=QUALITY_GOLD_SLOTS,
                 result={"expected": {"no_answer": True},
                         "reason": "The bench article does not answer it."})
            for k in range(gold_made, need)])
        for gold in golds:
            engine.slots_add(item=gold, n=QUALITY_GOLD_SLOTS)
        print(f"  gold check items: {len(golds)} more, {need} in all", flush=True)
        gold_made = need
        connections.close_all()

    def gold_since(since) -> tuple[int, int]:
        """Claims of the bench workers since ``since``, and how many of them were gold."""
        claims = Assignment.objects.filter(stage=stage, claimed_at__gte=since,
                                           worker__in=bench_users)
        counts = claims.count(), claims.filter(priority=GOLD_PRIORITY).count()
        connections.close_all()
        return counts

    def gold_describe(observed) -> str:
        claimed, gold = observed
        return f"gold checks: {gold:,} of {claimed:,} claims ({_ratio(gold, claimed):.3f})"

    toggle = None
    if args.quotas:
        toggle = Toggle("quota", "limits",
                        f"every worker's session quota and the stage's per-worker limit "
                        f"{QUOTA_BIG:,}, so each claim is counted on the membership row and "
                        "none is refused", args.quota_rounds, limits, counted_since,
                        counted_describe)
    elif args.quality:
        toggle = Toggle("quality", "quality",
                        "the answer stage asks for a qualification, every bench worker "
                        "qualified and active, and mixes in gold checks at gold_rate "
                        f"{args.quality_gold_rate}; gold_min_items {QUALITY_NEVER_PAUSE:,}",
                        args.quality_rounds, quality_switch, gold_since, gold_describe,
                        prepare=gold_ready)

    engine_worker = partial(EngineWorker, project_id=project.pk)

    def measured(on: bool, ids, seconds, processes, period=None, top_up=0.0,
                 cycles=0.0) -> Run:
        """One run with the toggle ``on`` or off, after a top-up to ``top_up`` open slots
        (on: readied for about ``cycles`` claims per worker) and a vacuum; with its
        duplicates, over-filled items and what ``toggle.observe`` reads of an on run."""
        if top_up:
            items_top_up(top_up)
        if on:
            toggle.prepare(cycles)
        open_at_start = open_slots()
        vacuum()
        toggle.switch(on)
        before = integrity()
        since = timezone.now()
        done: list[tuple[float, float, bool]] = []
        claim, submit, errs, elapsed, _ = _phase(engine_worker, ids, seconds, processes,
                                                 period=period, cycles=done)
        after = integrity()
        observed = toggle.observe(since) if on else None
        toggle.switch(False)
        return Run(claim, submit, errs, elapsed, after[0] - before[0], after[1] - before[1],
                   observed, open_at_start, done)

    connections.close_all()
    claim_ms, submit_ms, errors, elapsed, n_procs = _phase(engine_worker, users, args.seconds,
                                                           args.processes)
    ran_dry = len(submit_ms) >= 2 * args.items
    # Off and on (--quotas, --quality): the closed loop above is the first run with the
    # toggle off; each run after it starts with as many open slots as it had.
    closed = {False: [], True: []}
    if toggle:
        dup, over = integrity()
        closed[False].append(Run(claim_ms, submit_ms, [], elapsed, dup, over,
                                 open_at_start=2 * args.items))
        for order in toggle.orders(closed_first_off=True):
            for on in order:
                print(f"closed loop, {toggle.what} {'on' if on else 'off'} ...", flush=True)
                run = measured(on, users, args.seconds, args.processes, top_up=2 * args.items,
                               cycles=len(claim_ms) / len(users))
                closed[on].append(run)
                errors += run.errors
    # The later phases get fresh items when the main phase took (nearly) all of them.
    items_top_up(2_000 * args.solo_seconds + (args.paced_rate * args.paced_seconds * 1.5
                                              if args.paced_seconds else 0))
    # --quotas, --quality: each worker alone starts on fresh items claimed before all others
    # (the first would otherwise leave the second the other slots of the items it answered,
    # and walk past those itself: neither would measure the same claims).
    alone_items = int(1_000 * args.solo_seconds)
    if toggle and args.solo_seconds:
        items_add(alone_items, priority=-1)
    vacuum()  # the closed loop's dead rows, as autovacuum would clear them on a live database
    # One worker alone: the service time of a claim and a submit, without queueing.
    solo_claim, solo_submit, solo_errors, _, _ = (
        _phase(engine_worker, [solo_user], args.solo_seconds, 1) if args.solo_seconds
        else ([], [], [], 0, 0))
    errors += solo_errors
    solo_on = None
    if toggle and args.solo_seconds:
        items_add(alone_items, priority=-2)
        solo_on = measured(True, [solo_user_on], args.solo_seconds, 1,
                           cycles=len(solo_claim))
        errors += solo_on.errors
    # Paced: the same workers offering --paced-rate cycles/s in all (a crowd has think
    # time), so the latencies are those of a platform serving that rate, not saturated.
    paced = None
    paced_runs = {False: [], True: []}
    if args.paced_seconds:
        paced_processes = args.paced_processes or args.workers
        period = args.workers / args.paced_rate
        paced_slots = args.paced_rate * args.paced_seconds * 1.5
        if toggle:
            for order in toggle.orders(closed_first_off=False):
                for on in order:
                    print(f"paced, {toggle.what} {'on' if on else 'off'} ...", flush=True)
                    run = measured(on, users, args.paced_seconds, paced_processes,
                                   period=period, top_up=paced_slots,
                                   cycles=args.paced_rate * args.paced_seconds / args.workers)
                    paced_runs[on].append(run)
                    errors += run.errors
            first = paced_runs[False][0]
            p_claim, p_submit, p_elapsed = first.claim_ms, first.submit_ms, first.elapsed
        else:
            p_claim, p_submit, p_errors, p_elapsed, _ = _phase(
                engine_worker, users, args.paced_seconds, paced_processes, period=period)
            errors += p_errors
        paced = (len(p_submit) / p_elapsed, percentile(p_claim, 0.5),
                 percentile(p_claim, 0.95), percentile(p_submit, 0.5),
                 percentile(p_submit, 0.95))
    # Paired paced runs (--quality): on and off at once, on two stages, the workers split.
    paired = None
    if args.quality and args.quality_paired_rounds and args.paced_seconds:
        paired = _quality_paired(
            args, users, corpus, project, stage, engine_worker=EngineWorker,
            items_top_up=items_top_up, gold_ready=gold_ready, vacuum=vacuum,
            switch=quality_switch, integrity=integrity)
        errors += paired["errors"]
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
    # The check with small limits: several threads of each worker claim at once until the
    # claim refuses them; nobody's live and submitted slots may pass a limit.
    check = None
    if args.quotas and args.quota_check_workers:
        check = _quota_check(args, project, stage, items_top_up, integrity)
        errors += check["errors"]
    # The check with workers the claim must refuse (--quality), and what the whole run left.
    quality_state = None
    if args.quality:
        if args.quality_check_workers:
            check = _quality_check(args, project, stage, quality_switch)
            errors += check["errors"]
        quality_state = _quality_state(stage, gold_made, GOLD_PRIORITY)

    submitted = Assignment.objects.filter(stage=stage, status=Assignment.Status.SUBMITTED)
    # Work items only: a gold check item (--quality) takes submissions without end.
    per_item = Counter(submitted.filter(priority__gt=GOLD_PRIORITY)
                       .values_list("item_id", flat=True))
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
    toggle_keys, toggle_ok = "", True
    if toggle:
        compared = _compare_report(args, toggle, closed, solo_claim, solo_submit, solo_on,
                                   paced_runs)
        report = _quota_report if args.quotas else _quality_report
        toggle_keys, toggle_ok = report(args, compared, check,
                                        **({"state": quality_state} if args.quality else {}))
    if paired is not None:
        toggle_keys += _paired_report(args, paired)
        toggle_ok = toggle_ok and paired["dup"] == 0 and paired["over"] == 0
    from benchdb import project_drop

    project_drop(project)
    print(f"RESULT assign claims_per_s={claims_per_s:.1f} submits_per_s={submits_per_s:.1f} "
          f"claim_p95_ms={claim_p95:.1f} submit_p95_ms={submit_p95:.1f} "
          f"duplicates={duplicates} overfilled={overfilled}"
          + (f" solo_claim_p95_ms={percentile(solo_claim, 0.95):.1f}"
             f" solo_submit_p95_ms={percentile(solo_submit, 0.95):.1f}" if solo_claim else "")
          + (f" paced_submits_per_s={paced[0]:.1f} paced_claim_p95_ms={paced[2]:.1f}"
             f" paced_submit_p95_ms={paced[4]:.1f}" if paced else "")
          + (f" floor_cycles_per_s={floor[0]:.1f} floor_claim_p95_ms={floor[1]:.1f}"
             f" floor_submit_p95_ms={floor[2]:.1f}" if floor else "")
          + toggle_keys)
    return 0 if not errors and duplicates == 0 and overfilled == 0 and toggle_ok else 1


def _quota_check(args, project, stage, items_top_up, integrity) -> dict:
    """Small limits, refused in the end: --quota-check-workers fresh workers, each claiming
    and submitting in --quota-check-threads threads at once (many tabs) until the claim
    refuses them. Every other one has a session quota of --quota-check-limit; the stage's
    limit is two more, so those without a quota stop there. Counts the workers whose live
    and submitted slots pass their limit (overruns) and the membership counters that
    disagree with the slots."""
    from django.contrib.auth import get_user_model
    from django.db import connections
    from django.utils import timezone

    from annotation import engine
    from annotation.models import Assignment, ProjectMember, Stage
    from annotation.roles import Role

    user_model = get_user_model()
    session_limit, stage_limit = args.quota_check_limit, args.quota_check_limit + 2
    workers, limit_of = [], {}
    for n in range(args.quota_check_workers):
        user, _ = user_model.objects.get_or_create(username=f"bench-quota-{n}")
        member = engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
        quota = session_limit if n % 2 == 0 else None
        ProjectMember.objects.filter(pk=member.pk).update(
            session_limit=quota, session_taken=0, stage_taken={},
            session_started_at=timezone.now() if quota else None)
        workers.append(user)
        limit_of[user.pk] = min(quota or stage_limit, stage_limit)
    Stage.objects.filter(pk=stage.pk).update(
        params={**stage.params, "max_items_per_worker": stage_limit})
    items_top_up(4 * stage_limit * len(workers) + 100)
    before = integrity()
    connections.close_all()
    print(f"quota check: {len(workers)} workers x {args.quota_check_threads} threads ...",
          flush=True)
    _, _, errors, elapsed, _ = _phase(
        partial(LimitWorker, project_id=project.pk),
        [user for user in workers for _ in range(args.quota_check_threads)],
        args.quota_check_seconds, args.processes)
    after = integrity()
    taken = Counter(Assignment.objects.filter(
        stage=stage, worker__in=workers,
        status__in=[Assignment.Status.ACTIVE, Assignment.Status.SUBMITTED],
    ).values_list("worker_id", flat=True))
    overruns = sum(1 for user in workers if taken[user.pk] > limit_of[user.pk])
    at_limit = sum(1 for user in workers if taken[user.pk] == limit_of[user.pk])
    mismatches = 0
    for member in ProjectMember.objects.filter(project=project, user__in=workers):
        stage_count = int(member.stage_taken.get(str(stage.pk), 0))
        if stage_count != taken[member.user_id] or (
                member.session_limit is not None and member.session_taken != taken[member.user_id]):
            mismatches += 1
    Stage.objects.filter(pk=stage.pk).update(params={**stage.params, "max_items_per_worker": 0})
    connections.close_all()
    return {"workers": len(workers), "overruns": overruns, "at_limit": at_limit,
            "mismatches": mismatches, "dup": after[0] - before[0], "over": after[1] - before[1],
            "taken": sum(taken.values()), "elapsed": elapsed, "errors": errors,
            "session_limit": session_limit, "stage_limit": stage_limit}


class Compared:
    """Off against on (``_compare_report``): the pooled runs, the RESULT keys of the ratios
    and figures, whether the 10% bound held, and the duplicates and over-filled items of
    the on runs."""

    def __init__(self, toggle, c_off, c_on, p_off, p_on, solo_on, keys, held, dup,
                 over) -> None:
        self.toggle, self.c_off, self.c_on, self.p_off, self.p_on = (toggle, c_off, c_on,
                                                                     p_off, p_on)
        self.solo_on, self.keys, self.held, self.dup, self.over = solo_on, keys, held, dup, over

    def on_runs(self) -> list[Run]:
        return [*self.c_on.runs, *([self.solo_on] if self.solo_on is not None else []),
                *(self.p_on.runs if self.p_on else [])]


def _compare_report(args, toggle, closed, solo_claim, solo_submit, solo_on,
                    paced_runs) -> Compared:
    """Print the toggle off against on (--quotas, --quality): each condition's closed loop,
    worker alone and paced phase, their ratios and whether they stay within 10%, and the
    duplicates and over-filled items of each. The RESULT keys start with ``toggle.key``."""
    what, key = toggle.what, toggle.key
    print(f"{what} off / on (on: {toggle.title}); {toggle.rounds} round(s), order "
          + ", ".join("off-on" if r % 2 == 0 else "on-off" for r in range(toggle.rounds)))
    c_off, c_on = Pooled(closed[False]), Pooled(closed[True])
    for name, pooled in (("off", c_off), ("on", c_on)):
        print(f"  closed loop, {what} {name}: {pooled.line()}")
        if len(pooled.runs) > 1:
            print(f"    each run (submits/s, claim / submit p95): {pooled.each()}")
        for run in pooled.runs:
            if run.ran_dry:
                print(f"    one run used all {run.open_at_start:,} open slots in "
                      f"{run.elapsed:.1f} s: its figures cover that time")
    for run in closed[True]:
        print(f"    {toggle.describe(run.observed)}")
    if solo_on is not None and solo_claim:
        print(f"  alone, {what} off: claim p50 {statistics.median(solo_claim):.2f} / p95 "
              f"{percentile(solo_claim, 0.95):.2f} ms, submit p50 "
              f"{statistics.median(solo_submit):.2f} / p95 {percentile(solo_submit, 0.95):.2f} ms")
        if solo_on.claim_ms:
            print(f"  alone, {what} on:  claim p50 {statistics.median(solo_on.claim_ms):.2f} / "
                  f"p95 {percentile(solo_on.claim_ms, 0.95):.2f} ms, submit p50 "
                  f"{statistics.median(solo_on.submit_ms):.2f} / p95 "
                  f"{percentile(solo_on.submit_ms, 0.95):.2f} ms; "
                  f"{toggle.describe(solo_on.observed)}")
    p_off = Pooled(paced_runs[False]) if paced_runs[False] else None
    p_on = Pooled(paced_runs[True]) if paced_runs[True] else None
    if p_off and p_on:
        for name, pooled in (("off", p_off), ("on", p_on)):
            print(f"  paced at {args.paced_rate:.0f}/s, {what} {name}: {pooled.line()}")
            if len(pooled.runs) > 1:
                print(f"    each run (submits/s, claim / submit p95): {pooled.each()}")
        for run in p_on.runs:
            print(f"    {toggle.describe(run.observed)}")
    closed_ratio = _ratio(c_on.submits_per_s, c_off.submits_per_s)
    checks = [("closed-loop submits/s", closed_ratio, closed_ratio >= 1 - QUOTA_BOUND)]
    info = [("closed-loop claim p95", _ratio(c_on.p("claim", 0.95), c_off.p("claim", 0.95))),
            ("closed-loop submit p95", _ratio(c_on.p("submit", 0.95), c_off.p("submit", 0.95)))]
    keys = f" {key}_closed_ratio={closed_ratio:.3f}"
    if p_off and p_on:
        claim_ratio = _ratio(p_on.p("claim", 0.95), p_off.p("claim", 0.95))
        submit_ratio = _ratio(p_on.p("submit", 0.95), p_off.p("submit", 0.95))
        checks += [("paced claim p95", claim_ratio, claim_ratio <= 1 + QUOTA_BOUND),
                   ("paced submit p95", submit_ratio, submit_ratio <= 1 + QUOTA_BOUND)]
        info.append(("paced submits/s", _ratio(p_on.submits_per_s, p_off.submits_per_s)))
        keys += (f" {key}_paced_claim_p95_ratio={claim_ratio:.3f}"
                 f" {key}_paced_submit_p95_ratio={submit_ratio:.3f}")
    if solo_on is not None and solo_on.claim_ms and solo_claim:
        solo_ratio = _ratio(statistics.median(solo_on.claim_ms), statistics.median(solo_claim))
        info.append(("alone claim p50", solo_ratio))
        keys += f" {key}_solo_claim_p50_ratio={solo_ratio:.3f}"
    held = all(ok for _, _, ok in checks)
    print("  ratios on / off: " + "; ".join(
        f"{name} {value:.3f} ({'within' if ok else 'OUTSIDE'} 10%)" for name, value, ok in checks)
        + " | also " + "; ".join(f"{name} {value:.3f}" for name, value in info))
    print(f"  the 10% bound {'holds' if held else 'does NOT hold'} "
          f"(submits/s on >= {1 - QUOTA_BOUND:.2f}x off; paced p95s on <= "
          f"{1 + QUOTA_BOUND:.2f}x off)")
    dup = c_on.dup + (p_on.dup if p_on else 0) + (solo_on.dup if solo_on else 0)
    over = c_on.over + (p_on.over if p_on else 0) + (solo_on.over if solo_on else 0)
    print(f"  duplicates / over-filled, {what} off: closed {c_off.dup} / {c_off.over}"
          + (f", paced {p_off.dup} / {p_off.over}" if p_off else "")
          + f"; {what} on: closed {c_on.dup} / {c_on.over}"
          + (f", paced {p_on.dup} / {p_on.over}" if p_on else ""))
    keys += (f" {key}_within_10pct={int(held)} {key}_closed_submits_per_s={c_on.submits_per_s:.1f}"
             + (f" {key}_paced_claim_p95_ms={p_on.p('claim', 0.95):.1f}"
                f" {key}_paced_submit_p95_ms={p_on.p('submit', 0.95):.1f}" if p_on else ""))
    return Compared(toggle, c_off, c_on, p_off, p_on, solo_on, keys, held, dup, over)


def _quota_report(args, compared: Compared, check):
    """Print what is particular to the limits (the check with limits that refuse); return
    the RESULT keys and whether the run is sound (no duplicate, no over-filled item, no
    overrun: the 10% bound is reported, not enforced, as it depends on the machine's
    load)."""
    dup, over, overruns = compared.dup, compared.over, 0
    if check is not None:
        dup += check["dup"]
        over += check["over"]
        overruns = check["overruns"]
        print(f"quota check ({check['workers']} workers x {args.quota_check_threads} threads "
              f"at once; every other one with a session quota of {check['session_limit']}, all "
              f"under a stage limit of {check['stage_limit']}): {check['taken']} slots taken in "
              f"{check['elapsed']:.1f} s, {check['at_limit']} of {check['workers']} workers "
              f"refused at their limit, overruns={overruns}, counters that disagree with the "
              f"slots: {check['mismatches']}, duplicates={check['dup']} "
              f"overfilled={check['over']}")
    keys = (compared.keys
            + f" quota_duplicates={dup} quota_overfilled={over} quota_overruns={overruns}")
    mismatches = check["mismatches"] if check is not None else 0
    return keys, dup == 0 and over == 0 and overruns == 0 and mismatches == 0


def _quality_paired(args, users, corpus, project, stage, *, engine_worker, items_top_up,
                    gold_ready, vacuum, switch, integrity) -> dict:
    """--quality-paired-rounds paced runs with quality on and off at the same time: a
    second NewsQA project (its answer stage with neither qualification nor gold checks) gets
    the same members and items; in each run half the workers work the bench's stage with
    quality on and the other half the second stage, offering --paced-rate cycles/s in all;
    the halves swap every round. Both conditions then meet the same load from the machine,
    which sequential runs do not (their paced p95s moved 3-17x between runs of one
    condition on this shared 2-core machine)."""
    from benchdb import project_drop
    from django.db import connections

    from annotation import engine
    from annotation.models import Project
    from annotation.roles import Role

    other = engine.project_create(name=f"{project.name}-off", recipe="newsqa", corpus=corpus)
    Project.objects.filter(pk=other.pk).update(status=Project.Status.ACTIVE)
    other_stage = other.stages.get(kind="newsqa_answer")
    for user in users:
        engine.project_member_add(project=other, user=user, role=Role.ANNOTATOR)
    period = args.workers / args.paced_rate
    slots = args.paced_rate * args.paced_seconds * 1.5
    paced_processes = args.paced_processes or args.workers
    runs, errors = [], []
    # Each round: a closed loop (--seconds, --processes) and a paced run, both paired.
    phases = (("closed", args.seconds, args.processes, None, 600.0 * args.seconds),
              ("paced", args.paced_seconds, paced_processes, period, slots))
    for r in range(args.quality_paired_rounds):
        # Every other pair of workers: _phase deals the workers to its processes in turn
        # (ids[i::processes]), so each process serves both conditions alike.
        on_ids = frozenset(u.pk for n, u in enumerate(users) if (n // 2) % 2 == r % 2)
        for kind, seconds, processes, pace, top_up in phases:
            print(f"paired {kind} run {r + 1}: quality on and off at once ...", flush=True)
            for to in (stage, other_stage):
                items_top_up(top_up, to=to)
            gold_ready(top_up / args.workers)
            vacuum()
            switch(True)
            before = [integrity(s) for s in (stage, other_stage)]

            def make(user, on_ids=on_ids):
                on = user.pk in on_ids
                worker = engine_worker(user, project.pk if on else other.pk)
                worker.group = on
                return worker

            done: list[tuple] = []
            _, _, errs, elapsed, _ = _phase(make, users, seconds, processes, period=pace,
                                            cycles=done)
            switch(False)
            after = [integrity(s) for s in (stage, other_stage)]
            errors += errs
            runs.append({"kind": kind, "cycles": done, "elapsed": elapsed,
                         "dup": sum(a[0] - b[0] for a, b in zip(after, before, strict=True)),
                         "over": sum(a[1] - b[1] for a, b in zip(after, before, strict=True))})
    project_drop(other)
    connections.close_all()
    return {"runs": runs, "errors": errors, "dup": sum(r["dup"] for r in runs),
            "over": sum(r["over"] for r in runs)}


def _paired_report(args, paired: dict) -> str:
    """Print the paired runs (on against off, pooled and per run, closed loop and paced)
    and return their RESULT keys."""
    def figures(cycles):
        claims, submits = [c[0] for c in cycles], [c[1] for c in cycles]
        return percentile(claims, 0.5), percentile(claims, 0.95), percentile(
            submits, 0.5), percentile(submits, 0.95)

    n_rounds = len(paired["runs"]) // 2
    print(f"paired runs (quality on and off at once, {args.workers // 2} workers each on its own"
          f" stage, halves swapped each round; {n_rounds} rounds of a closed loop of "
          f"{args.seconds:.0f} s and a paced run of {args.paced_seconds:.0f} s offering "
          f"{args.paced_rate:.0f} cycles/s in all):")
    keys, held = "", True
    for kind in ("closed", "paced"):
        runs = [run for run in paired["runs"] if run["kind"] == kind]
        pooled = {True: [], False: []}
        for n, run in enumerate(runs, 1):
            parts = []
            for on in (False, True):
                cycles = [c for c in run["cycles"] if c[3] is on]
                pooled[on] += cycles
                _, c95, _, s95 = figures(cycles)
                parts.append(f"{'on' if on else 'off'} {len(cycles) / run['elapsed']:.1f}/s "
                             f"claim p95 {c95:.1f} ms, submit p95 {s95:.1f} ms")
            print(f"  {kind} run {n}: " + "; ".join(parts))
        elapsed = sum(run["elapsed"] for run in runs)
        off, on = figures(pooled[False]), figures(pooled[True])
        for name, f, cycles in (("off", off, pooled[False]), ("on", on, pooled[True])):
            gold = sum(1 for c in cycles if c[2])
            print(f"  {kind}, pooled, quality {name}: {len(cycles):,} submits "
                  f"({len(cycles) / elapsed:.1f}/s), claim p50 {f[0]:.1f} / p95 {f[1]:.1f} ms, "
                  f"submit p50 {f[2]:.1f} / p95 {f[3]:.1f} ms"
                  + (f"; gold checks {gold:,} ({_ratio(gold, len(cycles)):.3f})"
                     if name == "on" else ""))
        rate = _ratio(len(pooled[True]), len(pooled[False]))
        claim, submit = _ratio(on[1], off[1]), _ratio(on[3], off[3])
        if kind == "closed":
            ok = rate >= 1 - QUOTA_BOUND
            print(f"  closed, on / off: submits/s {rate:.3f} ({'within' if ok else 'OUTSIDE'} "
                  f"10%) | also claim p95 {claim:.3f}, submit p95 {submit:.3f}")
            keys += f" quality_paired_closed_ratio={rate:.3f}"
        else:
            ok = claim <= 1 + QUOTA_BOUND and submit <= 1 + QUOTA_BOUND
            print(f"  paced, on / off: claim p95 {claim:.3f}, submit p95 {submit:.3f} "
                  f"({'within' if ok else 'OUTSIDE'} 10%) | also submits/s {rate:.3f}")
            keys += (f" quality_paired_claim_p95_ratio={claim:.3f}"
                     f" quality_paired_submit_p95_ratio={submit:.3f}"
                     f" quality_paired_on_claim_p95_ms={on[1]:.1f}"
                     f" quality_paired_off_claim_p95_ms={off[1]:.1f}"
                     f" quality_paired_on_submit_p95_ms={on[3]:.1f}"
                     f" quality_paired_off_submit_p95_ms={off[3]:.1f}")
        held = held and ok
    print(f"  paired: the 10% bound {'holds' if held else 'does NOT hold'}; "
          f"duplicates={paired['dup']} overfilled={paired['over']}")
    return keys + (f" quality_paired_within_10pct={int(held)}"
                   f" quality_paired_duplicates={paired['dup']}")


def _quality_check(args, project, stage, switch) -> dict:
    """Workers the claim must refuse while qualification and gold checks are on:
    --quality-check-workers new members of the stage, every other one with an active
    standing that is not qualified, the others qualified but paused, claiming all at once,
    beside one qualified, active worker (the control, who gets slots). Counts the slots of
    the stage the refused ones got (must be 0)."""
    from django.db import connections

    from annotation import engine
    from annotation.models import Assignment, WorkerStage
    from annotation.roles import Role
    from annotation.services import user_ensure

    refused, control = [], None
    for n in range(args.quality_check_workers + 1):
        user, _ = user_ensure(username=f"bench-quality-{n}", password="bench-password-0123",  # noqa: S106
                              roles=(Role.ANNOTATOR,))
        member = engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
        is_control = n == args.quality_check_workers
        WorkerStage.objects.update_or_create(member=member, stage=stage, defaults={
            "qualified": is_control or n % 2 == 1,
            "status": WorkerStage.Status.ACTIVE if is_control or n % 2 == 0
            else WorkerStage.Status.PAUSED})
        if is_control:
            control = user
        else:
            refused.append(user)
    switch(True)
    print(f"quality check: {len(refused)} unqualified or paused workers and a qualified one "
          "claim at once ...", flush=True)
    claim_ms, _, errors, elapsed, _ = _phase(partial(EngineWorker, project_id=project.pk),
                                             [*refused, control], 2.0, args.processes)
    switch(False)
    taken = Counter(Assignment.objects.filter(stage=stage, worker__in=[*refused, control])
                    .values_list("worker_id", flat=True))
    connections.close_all()
    return {"workers": len(refused), "claims": len(claim_ms), "elapsed": elapsed,
            "refused_slots": sum(taken[user.pk] for user in refused),
            "control_slots": taken[control.pk], "errors": errors}


def _quality_state(stage, gold_made: int, gold_priority: int) -> dict:
    """What the whole run left (--quality): gold items done or with children, work slots of
    workers without a qualified, active standing on the stage, the gold answers and their
    scores, the standings paused, and the most gold items one worker took."""
    from django.db import connections
    from django.db.models import Avg

    from annotation.models import GoldAnswer, Item, WorkerStage

    gold = Item.objects.filter(stage=stage, gold="check")
    with connections["default"].cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM annotation_assignment a WHERE a.stage_id = %s"
            " AND a.priority > %s AND a.worker_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM"
            " annotation_workerstage ws JOIN annotation_projectmember m ON m.id = ws.member_id"
            " WHERE ws.stage_id = a.stage_id AND m.user_id = a.worker_id AND ws.qualified"
            " AND ws.status = 'active')", [stage.pk, gold_priority])
        unqualified_work = cursor.fetchone()[0]
        cursor.execute("SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM"
                       " annotation_assignment WHERE stage_id = %s AND priority = %s AND"
                       " worker_id IS NOT NULL GROUP BY worker_id) w", [stage.pk, gold_priority])
        most_seen = cursor.fetchone()[0]
    answers = GoldAnswer.objects.filter(item__stage=stage, purpose="check")
    state = {
        "gold_items": gold.count(), "gold_made": gold_made,
        "gold_done": gold.exclude(status=Item.Status.OPEN).count(),
        "gold_children": Item.objects.filter(parent__in=gold).count(),
        "unqualified_work": unqualified_work, "most_seen": most_seen,
        "answers": answers.count(), "mean_score": answers.aggregate(m=Avg("score"))["m"],
        "paused": WorkerStage.objects.filter(stage=stage, status=WorkerStage.Status.PAUSED,
                                             member__user__username__startswith="bench-worker-"
                                             ).count(),
    }
    connections.close_all()
    return state


def _quality_report(args, compared: Compared, check, state: dict):
    """Print what is particular to qualification and gold checks (the share of gold claims,
    the state the run left, the refusal check); return the RESULT keys and whether the run
    is sound (no duplicate, no over-filled item, no gold item done or with children, no
    work slot of an unqualified or paused worker, no slot for the refused workers: the 10%
    bound is reported, not enforced)."""
    phases = [("closed loop", compared.c_on.runs),
              ("alone", [compared.solo_on] if compared.solo_on is not None else []),
              ("paced", compared.p_on.runs if compared.p_on else [])]
    parts, claimed, gold = [], 0, 0
    for name, runs in phases:
        c = sum(run.observed[0] for run in runs if run.observed)
        g = sum(run.observed[1] for run in runs if run.observed)
        if c:
            parts.append(f"{name} {g:,} of {c:,} ({_ratio(g, c):.3f})")
        claimed, gold = claimed + c, gold + g
    share = _ratio(gold, claimed)
    print(f"  gold share of the on runs' claims: {share:.3f} (gold_rate "
          f"{args.quality_gold_rate}): " + "; ".join(parts))
    # The on runs' cycles split by the slot's kind: against the off runs (all work), the
    # work cycles of the on runs say whether qualification and gold slow the work itself,
    # the gold cycles what the gold checks cost (10% of cycles: a p95 of the mix falls
    # among them when they are the slower ones).
    split_keys = ""
    for name, off, on in (("closed loop", compared.c_off, compared.c_on),
                          ("paced", compared.p_off, compared.p_on)):
        if off is None or on is None:
            continue
        cycles = [c for run in on.runs for c in run.cycles]
        work = [c for c in cycles if not c[2]]
        gold_cycles = [c for c in cycles if c[2]]
        if not work:
            continue
        w_claim = _ratio(percentile([c[0] for c in work], 0.95), off.p("claim", 0.95))
        w_submit = _ratio(percentile([c[1] for c in work], 0.95), off.p("submit", 0.95))
        print(f"  {name}, quality on, work slots only ({len(work):,} cycles): claim p50 "
              f"{percentile([c[0] for c in work], 0.5):.1f} / p95 "
              f"{percentile([c[0] for c in work], 0.95):.1f} ms, submit p50 "
              f"{percentile([c[1] for c in work], 0.5):.1f} / p95 "
              f"{percentile([c[1] for c in work], 0.95):.1f} ms (p95 / off: claim "
              f"{w_claim:.3f}, submit {w_submit:.3f}); gold checks ({len(gold_cycles):,}): "
              f"claim p50 {percentile([c[0] for c in gold_cycles], 0.5):.1f} / p95 "
              f"{percentile([c[0] for c in gold_cycles], 0.95):.1f} ms, submit p50 "
              f"{percentile([c[1] for c in gold_cycles], 0.5):.1f} / p95 "
              f"{percentile([c[1] for c in gold_cycles], 0.95):.1f} ms")
        if name == "paced":
            split_keys = (f" quality_paced_work_claim_p95_ratio={w_claim:.3f}"
                          f" quality_paced_work_submit_p95_ratio={w_submit:.3f}")
    mean = state["mean_score"]
    print(f"  gold check items: {state['gold_items']} of {QUALITY_GOLD_SLOTS} slots each (the "
          f"most one worker took: {state['most_seen']}"
          + (", ran out" if state["most_seen"] >= state["gold_items"] else "")
          + f"); {state['answers']:,} gold answers scored, mean "
          + (f"{mean:.3f}" if mean is not None else "-")
          + f"; bench workers paused: {state['paused']}")
    print(f"  gold items done: {state['gold_done']}, with children: {state['gold_children']}; "
          f"work slots of workers without a qualified, active standing: "
          f"{state['unqualified_work']}")
    refused = 0
    if check is not None:
        refused = check["refused_slots"]
        print(f"quality check ({check['workers']} workers, every other one unqualified, the "
              f"others paused, and one qualified worker, claiming at once): "
              f"{check['claims']:,} claims in {check['elapsed']:.1f} s, slots of the refused "
              f"workers: {refused}, of the qualified one: {check['control_slots']}")
    keys = (compared.keys + f" quality_gold_share={share:.3f}"
            f" quality_gold_items={state['gold_items']}"
            f" quality_duplicates={compared.dup} quality_overfilled={compared.over}"
            f" quality_gold_done={state['gold_done'] + state['gold_children']}"
            f" quality_unqualified_work={state['unqualified_work'] + refused}" + split_keys)
    sound = (compared.dup == 0 and compared.over == 0 and state["gold_done"] == 0
             and state["gold_children"] == 0 and state["unqualified_work"] == 0
             and refused == 0)
    return keys, sound


if __name__ == "__main__":
    sys.exit(main())
