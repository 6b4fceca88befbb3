"""Benchmark: a burst of new marketplace workers arriving through real HTTP.

A NewsQA project with --items open answer items (overlap 2, over --docs generated articles
of about 650 words) is opened to Prolific (``studies.study_create``, a quota of --quota
tasks per session, so every first claim is counted on the membership row). The bench
starts its own gunicorn (``config.wsgi`` with ``config/gunicorn.conf.py``, --gunicorn-workers
sync workers, as production runs it: ``CROWDQA_ENV=production``, ``DEBUG=false``, a random
``SECRET_KEY``,
``ALLOWED_HOSTS=127.0.0.1``, persistent database connections, ``CELERY_BROKER_URL=memory://``;
cookies without the Secure flag since this is plain http on 127.0.0.1) on the database of
DATABASE_URL, warms it up, and sends --workers distinct new workers through, --clients at a
time (threads, one ``requests`` session per worker, each request on a new connection as
gunicorn's sync workers close them):

1. **arrival**: ``GET /study/<token>/?PROLIFIC_PID=…&STUDY_ID=…&SESSION_ID=…``, the consent
   page with its form;
2. **consent**: ``POST`` of that form (its hidden fields and CSRF token, "I agree"): the
   account, the membership, the session, the login and the first claim, answered with a
   redirect to ``/tasks/<id>/``;
3. **first task** (``claim_*`` keys): ``GET /tasks/<id>/``, the task page of that claim.

It prints p50/p95/p99 of each step and of the whole arrival (1 + 2 + 3, per worker),
the burst's throughput and errors, then checks the database: one account, one study
session, one logged-in Django session and one active claim per worker, nothing twice.
Before the burst, --solo workers arrive one at a time through a second study of the same
project: each step's service time without queueing (they are not counted in the burst).

Baseline named in the output, same server, same run, same clients, right after the burst:
an authenticated ``GET /accounts/login/`` (the session and user loaded, the base template
rendered: the cheapest page a signed-in worker gets) with each worker's session, and
``GET /healthz`` for reference.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/crowdqa_bench_arrivals \\
        .venv/bin/python bench/arrivals.py [--workers 1000] [--clients 20] [--items 3000] \\
        [--docs 200] [--quota 10] [--gunicorn-workers 5] [--solo 30] [--keep]

It migrates that database, builds its own project, study and accounts, and deletes them
afterwards (--keep leaves them). It talks only to 127.0.0.1 and stops gunicorn at exit.
"""

from __future__ import annotations

import argparse
import contextlib
import html
import os
import random
import re
import resource
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ["CELERY_BROKER_URL"] = "memory://"
os.environ["DEBUG"] = "false"
# The server's key, shared with this process so it can read the sessions the server wrote.
SECRET_KEY = secrets.token_urlsafe(50)
os.environ["SECRET_KEY"] = SECRET_KEY

HOST = "127.0.0.1"
HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)"')
TASK_PATH = re.compile(r"^/tasks/(\d+)/$")
VOCABULARY = (
    "the a of to in and that for on with as was said by at from his her their it police "
    "officials government city people year week report minister president company market "
    "court team players season election vote law border river storm hospital school "
    "students water power island coast village workers union bank prices oil energy trade "
    "talks leaders army rebels capital province airport flight passengers museum festival "
    "film music artist record study scientists researchers doctors patients virus vaccine "
    "climate forest fire rescue crew"
)
WORDS = VOCABULARY.split()


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def spread(values: list[float]) -> str:
    return (f"p50 {percentile(values, 0.5):.1f} / p95 {percentile(values, 0.95):.1f} / "
            f"p99 {percentile(values, 0.99):.1f} ms")


def article(rng: random.Random, n_words: int) -> str:
    """About ``n_words`` words of news-like prose in paragraphs."""
    paragraphs, left = [], n_words
    while left > 0:
        sentences = []
        for _ in range(rng.randint(2, 4)):
            words = [rng.choice(WORDS) for _ in range(rng.randint(12, 24))]
            if rng.random() < 0.4:
                words.insert(rng.randrange(len(words)), str(rng.randint(2, 2026)))
            sentences.append(" ".join(words).capitalize() + ".")
        paragraph = " ".join(sentences)
        left -= len(paragraph.split())
        paragraphs.append(paragraph)
    return "\n\n".join(paragraphs)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


class Server:
    """gunicorn serving config.wsgi as production does, on 127.0.0.1; stopped at exit."""

    #: The access log's format with ``access_log``: method, path, status, microseconds.
    ACCESS_FORMAT = "%(m)s %(U)s %(s)s %(D)s"

    def __init__(self, workers: int, database_url: str, access_log: bool = False) -> None:
        self.port = free_port()
        self.base = f"http://{HOST}:{self.port}"
        fd, self.log_path = tempfile.mkstemp(prefix="bench-gunicorn-", suffix=".log")
        os.close(fd)
        self.access_path = None
        logging = []
        if access_log:  # each request's server time (``ACCESS_FORMAT``)
            fd, self.access_path = tempfile.mkstemp(prefix="bench-gunicorn-", suffix=".access")
            os.close(fd)
            logging = ["--access-logfile", self.access_path,
                       "--access-logformat", self.ACCESS_FORMAT]
        env = {**os.environ, "CROWDQA_ENV": "production", "DEBUG": "false",
               "SECRET_KEY": SECRET_KEY, "ALLOWED_HOSTS": HOST,
               "SESSION_COOKIE_SECURE": "false", "CSRF_COOKIE_SECURE": "false",
               "DATABASE_URL": database_url, "CELERY_BROKER_URL": "memory://",
               # Every simulated worker comes from 127.0.0.1: no per-address limit.
               "CROWDQA_STUDY_NEW_WORKERS_PER_HOUR": "0"}
        # The README's production step: hashed, compressed static files in STATIC_ROOT.
        self.static_root = tempfile.mkdtemp(prefix="bench-static-")
        env["STATIC_ROOT"] = self.static_root
        subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput",
                        "--verbosity", "0"], cwd=ROOT, env=env, check=True)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "config.wsgi:application",
             "--bind", f"{HOST}:{self.port}", "--workers", str(workers),
             "--config", "config/gunicorn.conf.py",  # the worker class production uses
             "--timeout", "60", "--graceful-timeout", "5",
             "--log-level", "warning", "--error-logfile", self.log_path, *logging],
            cwd=ROOT, env=env, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
        )

    def wait_ready(self, session, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited ({self.proc.returncode}): "
                                   + Path(self.log_path).read_text()[-2000:])
            with contextlib.suppress(Exception):
                if session.get(f"{self.base}/healthz", timeout=5).status_code == 200:
                    return
            time.sleep(0.2)
        raise RuntimeError("gunicorn did not answer /healthz in time: "
                           + Path(self.log_path).read_text()[-2000:])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()  # the master stops its workers
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)  # its own process group
                self.proc.wait(timeout=5)
        for path in (self.log_path, self.access_path):
            if path:
                with contextlib.suppress(OSError):
                    os.unlink(path)
        shutil.rmtree(self.static_root, ignore_errors=True)

    def errors_logged(self) -> str:
        with contextlib.suppress(OSError):
            return Path(self.log_path).read_text()
        return ""


def new_client():
    import requests

    session = requests.Session()
    session.trust_env = False  # no proxy from the environment: 127.0.0.1 only
    return session


def arrive(base: str, study_path: str, study_id: str, n: int) -> dict:
    """One new worker: consent page, "I agree", their first task page. Times in ms."""
    pid, session_id = secrets.token_hex(12), secrets.token_hex(12)
    url = (f"{base}{study_path}?PROLIFIC_PID={pid}&STUDY_ID={study_id}"
           f"&SESSION_ID={session_id}")
    client = new_client()
    out = {"n": n, "pid": pid, "error": None, "client": client}
    try:
        t0 = time.perf_counter()
        page = client.get(url, allow_redirects=False, timeout=60)
        t1 = time.perf_counter()
        if page.status_code != 200 or "consent-form" not in page.text:
            raise RuntimeError(f"consent page: HTTP {page.status_code}")
        fields = {name: html.unescape(value) for name, value in HIDDEN.findall(page.text)}
        if "csrfmiddlewaretoken" not in fields or "PROLIFIC_PID" not in fields:
            raise RuntimeError("consent page: the form lacks its hidden fields")
        # As a browser posts the form (no action: the page's own URL).
        agreed = client.post(url, data=fields, allow_redirects=False, timeout=60,
                             headers={"Origin": base, "Referer": url})
        t2 = time.perf_counter()
        location = agreed.headers.get("Location", "")
        found = TASK_PATH.match(location)
        if agreed.status_code != 302 or not found:
            raise RuntimeError(f"consent: HTTP {agreed.status_code} to {location!r}")
        task = client.get(f"{base}{location}", allow_redirects=False, timeout=60)
        t3 = time.perf_counter()
        if task.status_code != 200 or 'data-testid="article"' not in task.text:
            raise RuntimeError(f"task page: HTTP {task.status_code}")
        out.update(arrival=(t1 - t0) * 1000, consent=(t2 - t1) * 1000, task=(t3 - t2) * 1000,
                   whole=(t3 - t0) * 1000, slot=int(found.group(1)),
                   session_key=client.cookies.get("sessionid"))
    except Exception as exc:
        out["error"] = f"worker {n}: {exc!r}"[:300]
    return out


def timed_gets(base: str, path: str, clients: list, concurrency: int, repeat: int = 1
               ) -> tuple[list[float], int]:
    """GET ``path`` once with each client (``repeat`` times), ``concurrency`` at a time."""
    lock, times, errors = threading.Lock(), [], [0]

    def one(client) -> None:
        t0 = time.perf_counter()
        try:
            ok = client.get(f"{base}{path}", allow_redirects=False, timeout=60).status_code == 200
        except Exception:
            ok = False
        ms = (time.perf_counter() - t0) * 1000
        with lock:
            if ok:
                times.append(ms)
            else:
                errors[0] += 1

    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        list(pool.map(one, [c for c in clients for _ in range(repeat)]))
    return times, errors[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=1000, help="new workers arriving")
    parser.add_argument("--clients", type=int, default=20, help="workers arriving at once")
    parser.add_argument("--items", type=int, default=3000, help="open answer items (overlap 2)")
    parser.add_argument("--docs", type=int, default=200, help="articles the items are about")
    parser.add_argument("--quota", type=int, default=10, help="the study's tasks per session")
    parser.add_argument("--gunicorn-workers", type=int, default=5,
                        help="gunicorn sync workers (default 2 x cores + 1)")
    parser.add_argument("--solo", type=int, default=30,
                        help="workers arriving one at a time before the burst (0: none)")
    parser.add_argument("--seed", type=int, default=20261125)
    parser.add_argument("--keep", action="store_true", help="leave the project and accounts")
    args = parser.parse_args()
    database_url = os.environ.get("DATABASE_URL", "")
    if not database_url.startswith(("postgres://", "postgresql://")):
        print("bench/arrivals.py needs DATABASE_URL=postgres://...", file=sys.stderr)
        return 2
    if 2 * args.items < args.workers + args.solo:
        print("--items: fewer open slots than arriving workers", file=sys.stderr)
        return 2

    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.sessions.models import Session
    from django.core.management import call_command
    from django.db import connection, connections

    from annotation import studies
    from annotation.models import (
        Assignment,
        ExternalAccount,
        Platform,
        Project,
        ProjectMember,
        StudySession,
    )

    call_command("migrate", verbosity=0)
    rng = random.Random(args.seed)
    print(f"building {args.docs} articles and {args.items:,} answer items ...", flush=True)
    from benchdb import news_answer_project

    project, stage = news_answer_project(
        name="bench-arrivals", docs=args.docs, items=args.items, rng=rng, article=article,
        title=lambda n: " ".join(rng.choice(WORDS) for _ in range(7)).capitalize(),
        question=lambda k: f"What did the {rng.choice(WORDS)} say about question {k}?")
    Project.objects.filter(pk=project.pk).update(
        consent="You will answer questions about news articles. **Bench study**: no "
                "personal data is kept beyond your Prolific id.")
    project.refresh_from_db()
    study = studies.study_create(project=project, platform=Platform.PROLIFIC,
                                 completion_code="BENCHDONE", quota=args.quota,
                                 name="bench arrivals")
    solo_study = studies.study_create(project=project, platform=Platform.PROLIFIC,
                                      completion_code="BENCHSOLO", quota=args.quota,
                                      name="bench arrivals, one at a time")
    preview = studies.study_create(project=project, platform=Platform.MTURK,
                                   completion_code="BENCHPREVIEW", name="bench warm-up")
    study_path, study_id = studies.study_path(study), secrets.token_hex(12)
    # Fresh statistics after the bulk load (this machine's PostgreSQL runs autovacuum off).
    with connection.cursor() as cursor:
        for table in ("annotation_item", "annotation_assignment", "annotation_projectmember",
                      "annotation_studysession", "annotation_externalaccount", "auth_user",
                      "django_session", "annotation_transitionlog"):
            cursor.execute(f"VACUUM (ANALYZE) {table}")
    connections.close_all()

    server = Server(args.gunicorn_workers, database_url)
    results: list[dict] = []
    solo: list[dict] = []
    solo_login_ms: list[float] = []
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        probe = new_client()
        server.wait_ready(probe)
        print(f"gunicorn: {args.gunicorn_workers} sync workers on {server.base} "
              "(CROWDQA_ENV=production)", flush=True)
        # Warm-up, as a server that has been up a while: every gunicorn worker connected,
        # its templates compiled (the MTurk preview renders the task page's template).
        warm = [new_client() for _ in range(args.clients)]
        for path in ("/healthz", "/accounts/login/",
                     f"{study_path}?PROLIFIC_PID=warmup{secrets.token_hex(4)}"
                     f"&STUDY_ID={study_id}&SESSION_ID=warmup",
                     f"{studies.study_path(preview)}?assignmentId="
                     f"{studies.PREVIEW_ASSIGNMENT}&hitId=warmup"):
            _, errs = timed_gets(server.base, path, warm, args.clients, repeat=4)
            if errs:
                raise RuntimeError(f"warm-up GET {path}: {errs} failed")

        if args.solo:
            print(f"one at a time: {args.solo} new workers ...", flush=True)
            solo = [arrive(server.base, studies.study_path(solo_study), study_id, n)
                    for n in range(args.solo)]
            solo_login_ms, _ = timed_gets(server.base, "/accounts/login/",
                                          [r["client"] for r in solo if not r["error"]], 1)
        print(f"burst: {args.workers:,} new workers, {args.clients} at a time ...", flush=True)
        began, cpu_began = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        with ThreadPoolExecutor(max_workers=args.clients) as pool:
            results = list(pool.map(
                lambda n: arrive(server.base, study_path, study_id, n), range(args.workers)))
        wall = time.perf_counter() - began
        cpu_ended = resource.getrusage(resource.RUSAGE_SELF)
        client_cpu = (cpu_ended.ru_utime - cpu_began.ru_utime
                      + cpu_ended.ru_stime - cpu_began.ru_stime)

        # Baseline: the same server and clients, each worker signed in with their session.
        clients = [r["client"] for r in results if not r["error"]]
        began = time.perf_counter()
        login_ms, login_errors = timed_gets(server.base, "/accounts/login/", clients,
                                            args.clients)
        login_wall = time.perf_counter() - began
        health_ms, health_errors = timed_gets(server.base, "/healthz", clients, args.clients)
        server_log = server.errors_logged()
    finally:
        server.stop()
        signal.signal(signal.SIGTERM, previous)

    ok = [r for r in results if not r["error"]]
    errors = [r["error"] for r in results if r["error"]]
    whole = [r["whole"] for r in ok]
    steps = {step: [r[step] for r in ok] for step in ("arrival", "consent", "task")}

    # The database afterwards: one of everything per worker, nothing twice.
    pids = [r["pid"] for r in results]
    accounts = ExternalAccount.objects.filter(platform=Platform.PROLIFIC, external_id__in=pids)
    user_ids = set(accounts.values_list("user_id", flat=True))
    n_accounts = accounts.count()
    sessions = StudySession.objects.filter(study=study)
    n_sessions = sessions.count()
    n_session_members = sessions.values("member").distinct().count()
    members = ProjectMember.objects.filter(project=project, user__in=user_ids)
    n_members = members.count()
    counted = members.filter(session_taken=1, session_limit=args.quota).count()
    keys = [r["session_key"] for r in ok if r.get("session_key")]
    logged_in = set()
    for row in Session.objects.filter(session_key__in=keys):
        user_id = row.get_decoded().get("_auth_user_id")
        if user_id is not None:
            logged_in.add(int(user_id))
    active = Assignment.objects.filter(stage=stage, status=Assignment.Status.ACTIVE,
                                       worker__in=user_ids)
    n_active = active.count()
    active_workers = set(active.values_list("worker_id", flat=True))
    active_ids = set(active.values_list("id", flat=True))
    seen_slots = [r["slot"] for r in ok]
    taken = Assignment.objects.filter(stage=stage).exclude(status=Assignment.Status.OPEN)
    pairs = list(taken.values_list("item_id", "worker_id"))
    duplicates = (len(pairs) - len(set(pairs))                    # a worker twice on an item
                  + (len(seen_slots) - len(set(seen_slots)))      # one slot given twice
                  + (n_accounts - len(user_ids))                  # one account, two ids
                  + max(0, n_active - len(active_workers)))       # a worker with two claims
    per_item: dict[int, int] = {}
    for item_id, _ in pairs:
        per_item[item_id] = per_item.get(item_id, 0) + 1
    overfilled = sum(1 for n in per_item.values() if n > 2)
    consistent = (n_accounts == args.workers and n_sessions == args.workers
                  and n_session_members == args.workers and n_members == args.workers
                  and len(logged_in) == args.workers and logged_in == user_ids
                  and n_active == args.workers and active_workers == user_ids
                  and active_ids == set(seen_slots) and duplicates == 0 and overfilled == 0)

    p95 = percentile(whole, 0.95)
    login_p95 = percentile(login_ms, 0.95)
    print(f"workers={args.workers} clients={args.clients} gunicorn_workers="
          f"{args.gunicorn_workers} items={args.items:,} (overlap 2, {args.docs} articles) "
          f"quota={args.quota}")
    print(f"burst: {len(ok):,} arrivals in {wall:.1f} s = {len(ok) / wall:.1f} workers/s "
          f"({3 * len(ok) / wall:.0f} requests/s), errors={len(errors)}; the clients' own "
          f"CPU {client_cpu:.1f} s ({100 * client_cpu / wall:.0f}% of one of the 2 cores)")
    for line in errors[:5]:
        print("  error:", line)
    print(f"  1. arrival (GET consent page):              {spread(steps['arrival'])}")
    print(f"  2. consent (POST: account, login, claim):   {spread(steps['consent'])}")
    print(f"  3. first task (GET /tasks/<id>/):           {spread(steps['task'])}")
    print(f"  whole arrival (1 + 2 + 3, per worker):      {spread(whole)}")
    solo_ok = [r for r in solo if not r["error"]]
    if solo:
        print(f"one at a time before the burst ({len(solo_ok)} workers, "
              f"{len(solo) - len(solo_ok)} errors), p50 / p95: " + ", ".join(
                  f"{name} {percentile([r[key] for r in solo_ok], 0.5):.1f} / "
                  f"{percentile([r[key] for r in solo_ok], 0.95):.1f} ms" for name, key in (
                      ("arrival", "arrival"), ("consent", "consent"),
                      ("first task", "task"), ("whole", "whole")))
              + (f"; authenticated login page {percentile(solo_login_ms, 0.5):.1f} / "
                 f"{percentile(solo_login_ms, 0.95):.1f} ms" if solo_login_ms else ""))
    print(f"baseline, same server and clients after the burst: authenticated GET "
          f"/accounts/login/ {spread(login_ms)}, {len(login_ms) / login_wall:.0f} requests/s "
          f"(errors {login_errors}); GET /healthz "
          f"{spread(health_ms)} (errors {health_errors})")
    print(f"ratios to the authenticated login page's p95: whole arrival "
          f"{p95 / login_p95:.1f}x (3 requests), consent "
          f"{percentile(steps['consent'], 0.95) / login_p95:.1f}x, first task "
          f"{percentile(steps['task'], 0.95) / login_p95:.1f}x, consent page "
          f"{percentile(steps['arrival'], 0.95) / login_p95:.1f}x")
    print(f"database: accounts={n_accounts} study sessions={n_sessions} (members "
          f"{n_session_members}) memberships={n_members} logged-in sessions={len(logged_in)} "
          f"active claims={n_active} (workers {len(active_workers)}, the slots the pages "
          f"showed: {'same' if active_ids == set(seen_slots) else 'DIFFER'}); first claim "
          f"counted against the quota: {counted} of {n_members}; duplicates={duplicates} "
          f"overfilled={overfilled}: {'consistent' if consistent else 'NOT consistent'}")
    if server_log.strip():
        print("gunicorn logged:", server_log.strip()[-1000:])

    if not args.keep:
        from benchdb import project_drop

        solo_users = set(ExternalAccount.objects.filter(
            platform=Platform.PROLIFIC, external_id__in=[r["pid"] for r in solo])
            .values_list("user_id", flat=True))
        keys += [r["session_key"] for r in solo_ok if r.get("session_key")]
        Session.objects.filter(session_key__in=keys).delete()
        project_drop(project)
        get_user_model().objects.filter(pk__in=user_ids | solo_users).delete()
        print("cleaned up: the project, its study, the accounts and their sessions")
    print(f"RESULT arrivals workers={args.workers} arrival_p50_ms={percentile(whole, 0.5):.1f} "
          f"arrival_p95_ms={p95:.1f} arrival_p99_ms={percentile(whole, 0.99):.1f} "
          f"consent_p95_ms={percentile(steps['consent'], 0.95):.1f} "
          f"claim_p95_ms={percentile(steps['task'], 0.95):.1f} per_s={len(ok) / wall:.1f} "
          f"errors={len(errors)} accounts={n_accounts} "
          f"consent_page_p95_ms={percentile(steps['arrival'], 0.95):.1f} "
          f"baseline_login_p95_ms={login_p95:.1f} ratio_to_baseline={p95 / login_p95:.1f} "
          f"consistent={int(consistent)}"
          + (f" solo_arrival_p50_ms={percentile([r['whole'] for r in solo_ok], 0.5):.1f}"
             if solo_ok else ""))
    return 0 if not errors and consistent else 1


if __name__ == "__main__":
    sys.exit(main())
