"""Benchmark: the hot path a user takes, claim + task page + submit over HTTP.

The same work as ``bench/assign.py`` (a NewsQA answer stage, overlap 2), but through the
web server as annotators reach it: gunicorn serving ``config.wsgi`` in production mode
(``CROWDQA_ENV=production``, ``DEBUG=false``, persistent database connections,
``config/gunicorn.conf.py``: sync workers woken one per connection, --gunicorn-workers of
them, 2 x cores + 1 by default) on the PostgreSQL database
of DATABASE_URL, with the shared cache production uses for sessions and signed-in users
(the README's ``CACHE_URL``: Redis; CACHE_URL, else ``redis://127.0.0.1:6379/10``).
--workers annotators, each with real authentication: a DRF token for the
API (``Authorization: Token …``) and a session from logging in through ``/accounts/login/``
for the pages. One cycle of an annotator:

1. **claim**: ``POST /api/v1/tasks/next/`` with the project (token): the task as JSON;
2. **page**: ``GET /tasks/<id>/`` (session): the task page the annotator reads, an
   article of about 650 words;
3. **submit**: ``POST /api/v1/tasks/<id>/submit/`` (token) with an answer.

The load comes from one process (asyncio, one coroutine per annotator, a new connection per
request as gunicorn's sync workers close them), which shares the machine's cores with the
server, so it is kept lean: each request is written and read on a bare asyncio stream
(``Http``), a third of aiohttp's CPU per request (0.33 against 0.83 ms, and the server's
gunicorn 0.33 against 0.58 ms, on a trivial WSGI app on this 2-core machine), which went
to the measurement instead of the server, and the event loop is uvloop's (libuv), which cut
the load generator's CPU a closed cycle from 0.83-1.00 to 0.55-0.65 ms against asyncio's own
loop (three alternating pairs, 2026-11-28). Three phases:

- **paced**, --paced-seconds at --paced-rate cycles/s in all (100: the target): each
  annotator's cycles are scheduled in time and a claim's latency counts from its scheduled
  start, so an annotator who falls behind is not hidden;
- **closed loop**, --seconds: each annotator claims and submits through the API back to
  back (capacity; no page, so that it does what the engine's closed loop does);
- **chained**, --chained-seconds: the closed loop with one request a cycle, as an API
  client that wants the next task takes it: each submit asks for the next task
  (``"next": true``) and the answer carries it, so an annotator claims through
  ``/tasks/next/`` only when holding no task. It is reported beside ``engine_ratio``
  (``chained_engine_ratio``), not in place of it.

It prints per endpoint the client's p50/p95/p99 and the server's own time from gunicorn's
access log (``%(D)s``), the submits/s of each phase, the CPU each cycle cost gunicorn, the
load generator and the rest of the machine (PostgreSQL above all; from ``/proc``, so a
slower host shows as more milliseconds, not as a mystery), and checks the database afterwards:
no worker submitted an item twice, no item has more submissions than its overlap
(``duplicates``). Baseline named in the output, same run: the engine's closed loop of
``bench/assign.py`` (the same 50 workers claiming and submitting through the engine
in-process, no HTTP) for --engine-seconds, run first and again last, so that a host whose
speed drifts during the run (a shared machine: the same code's engine figure moved between
345 and 487 submits/s from one run to the next) drifts under both; ``engine_ratio`` is the
HTTP closed loop's submits/s over the mean of the two. Targets: paced at 100 submits/s
with claim, submit and page p95 <= 50 ms; engine_ratio >= 0.5; duplicates 0.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/crowdqa_bench_http \\
        .venv/bin/python bench/http_assign.py [--workers 50] [--paced-rate 100] \\
        [--paced-seconds 30] [--seconds 30] [--chained-seconds 30] [--engine-seconds 30] \\
        [--gunicorn-workers 5] [--items 20000] [--docs 200] [--keep]

It migrates that database, builds its own project and accounts and deletes the project
afterwards (--keep leaves it). It talks only to 127.0.0.1 and stops gunicorn at exit.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import html
import json
import os
import platform
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import uvloop

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
# The gunicorn server, the article generator and the percentiles of the arrivals bench;
# importing it sets the environment both processes share (the secret key, no broker).
import arrivals  # noqa: E402
from arrivals import Server, article, percentile  # noqa: E402

ROOT = arrivals.ROOT
TARGET_P95_MS = 50.0
TARGET_PACED = 100.0
TARGET_ENGINE_RATIO = 0.5
PASSWORD = "bench-password-0123"  # noqa: S105
ENDPOINTS = ("claim", "page", "submit")
ROUTES = (  # access-log path -> endpoint
    ("claim", "POST", re.compile(r"^/api/v1/tasks/next/$")),
    ("submit", "POST", re.compile(r"^/api/v1/tasks/\d+/submit/$")),
    ("page", "GET", re.compile(r"^/tasks/\d+/$")),
)


class Annotator:
    """One simulated annotator: their token, their session cookie, their latencies."""

    def __init__(self, username: str, token: str, session: str) -> None:
        self.username, self.token, self.session = username, token, session
        self.api = f"Authorization: Token {token}\r\n"
        self.cookie = f"Cookie: sessionid={session}\r\n"
        self.times: dict[str, list[float]] = {name: [] for name in ENDPOINTS}
        self.cycles = 0
        self.errors: list[str] = []
        self.held: int | None = None  # a task the last submit brought (chained)


class HttpError(Exception):
    """A request that got no well-formed HTTP answer."""


class Http:
    """A lean HTTP/1.1 client for 127.0.0.1: each request on a connection of its own
    (``Connection: close``; gunicorn's sync workers close every connection anyway), the
    answer read to the end of the stream. Only what this bench sends and reads."""

    def __init__(self, base: str, timeout: float = 60.0) -> None:
        host, _, port = base.removeprefix("http://").partition(":")
        self.host, self.port, self.timeout = host, int(port), timeout
        self.head = f"Host: {host}:{port}\r\nUser-Agent: crowdqa-bench\r\nAccept: */*\r\n"

    async def request(self, method: str, path: str, headers: str = "",
                      json_body: dict | None = None) -> tuple[int, bytes]:
        """(status, body) of ``method path`` with the extra ``headers`` (lines ending in
        CRLF) and, when given, a JSON body."""
        body = b""
        if json_body is not None:
            body = json.dumps(json_body).encode()
            headers += "Content-Type: application/json\r\n"
        request = (f"{method} {path} HTTP/1.1\r\n{self.head}{headers}"
                   f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body
        return await asyncio.wait_for(self._exchange(request), self.timeout)

    async def _exchange(self, request: bytes) -> tuple[int, bytes]:
        reader, writer = await asyncio.open_connection(self.host, self.port)
        try:
            writer.write(request)
            data = await reader.read()
        finally:
            writer.close()
        head, sep, body = data.partition(b"\r\n\r\n")
        if not sep or not head.startswith(b"HTTP/1."):
            raise HttpError(f"no HTTP answer ({len(data)} bytes: {data[:80]!r})")
        if b"\r\ntransfer-encoding: chunked" in head.lower():
            body = _unchunk(body)
        return int(head[9:12]), body


def _unchunk(body: bytes) -> bytes:
    out, at = bytearray(), 0
    while True:
        end = body.index(b"\r\n", at)
        size = int(body[at:end].split(b";")[0], 16)
        if size == 0:
            return bytes(out)
        out += body[end + 2:end + 2 + size]
        at = end + 2 + size + 2


async def claim(http: Http, project_id: int, who: Annotator, start: float) -> int | None:
    """Claim a task: its id, the latency counted from ``start`` (its scheduled time when
    paced); None when nothing was left to claim or the claim failed."""
    status, body = await http.request("POST", "/api/v1/tasks/next/", who.api,
                                      {"project": project_id})
    if status == 204:
        return None
    if status != 200:
        who.errors.append(f"claim: HTTP {status} {body[:200]!r}")
        return None
    who.times["claim"].append((time.perf_counter() - start) * 1000)
    return int(re.search(rb'"id":\s*(\d+)', body).group(1))


async def submit(http: Http, who: Annotator, task: int, since: float,
                 chained: bool = False) -> bytes | None:
    """Submit an answer to ``task`` (asking for the next task when ``chained``): the
    answer's body, the latency counted from ``since``; None when refused."""
    answer: dict = {"payload": {"no_answer": True}}
    if chained:
        answer["next"] = True
    status, body = await http.request("POST", f"/api/v1/tasks/{task}/submit/", who.api,
                                      answer)
    if status != 201:
        who.errors.append(f"submit: HTTP {status} {body[:200]!r}")
        return None
    who.times["submit"].append((time.perf_counter() - since) * 1000)
    who.cycles += 1
    return body


async def cycle(http: Http, project_id: int, who: Annotator, start: float,
                page: bool = True) -> bool:
    """Claim, read the task page (unless not ``page``), submit; the claim's latency from
    ``start``. False when nothing was left to claim or a step failed."""
    task = await claim(http, project_id, who, start)
    if task is None:
        return False
    read = time.perf_counter()
    if page:
        status, text = await http.request("GET", f"/tasks/{task}/", who.cookie)
        claimed, read = read, time.perf_counter()
        if status != 200 or b'data-testid="article"' not in text:
            who.errors.append(f"page: HTTP {status}")
            return False
        who.times["page"].append((read - claimed) * 1000)
    return await submit(http, who, task, read) is not None


NEXT_TASK = re.compile(rb'"next":\s*(?:null|\{"id":\s*(\d+))')


async def cycle_chained(http: Http, project_id: int, who: Annotator, start: float) -> bool:
    """Submit the task held and take the next from the answer: one request a cycle; a
    claim through ``/tasks/next/`` only when holding none."""
    if who.held is None:
        who.held = await claim(http, project_id, who, start)
        if who.held is None:
            return False
        start = time.perf_counter()
    body = await submit(http, who, who.held, start, chained=True)
    if body is None:
        return False
    found = NEXT_TASK.search(body)
    if found is None:
        who.errors.append(f"submit: no next task in {body[:200]!r}")
        return False
    who.held = int(found.group(1)) if found.group(1) else None
    return True


async def phase(base: str, project_id: int, annotators: list[Annotator], seconds: float,
                period: float | None, run=cycle) -> float:
    """Every annotator cycling (``run``) for ``seconds``: back to back, or (``period``) one
    cycle every ``period`` seconds each, staggered. Returns the elapsed seconds."""
    http = Http(base)
    began = time.perf_counter()
    end = began + seconds

    async def loop(n: int, who: Annotator) -> None:
        start = began + (period * n / len(annotators) if period else 0.0)
        while True:
            if period:
                if start >= end:
                    return
                await asyncio.sleep(max(0.0, start - time.perf_counter()))
            else:
                start = time.perf_counter()
                if start >= end:
                    return
            try:
                if not await run(http, project_id, who, start):
                    if not who.errors:
                        who.errors.append("nothing left to claim")
                    return
            except (OSError, TimeoutError, HttpError, ValueError) as exc:
                who.errors.append(f"{type(exc).__name__}: {exc}"[:200])
                return
            if period:
                start += period

    await asyncio.gather(*(loop(n, who) for n, who in enumerate(annotators)))
    return time.perf_counter() - began


HZ = os.sysconf("SC_CLK_TCK")


def cpu_ticks(server_pid: int) -> dict[str, int]:
    """CPU time so far in clock ticks: gunicorn's processes (``web``), this process
    (``loadgen``), and the machine's busy and total time from ``/proc/stat`` (busy less
    the other two is PostgreSQL and everything else). Linux only."""
    web = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
            if int(entry.name) == server_pid or int(fields[1]) == server_pid:
                web += int(fields[11]) + int(fields[12])
    own = os.times()
    machine = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    idle = machine[3] + machine[4]  # idle, iowait
    return {"web": web, "loadgen": round((own.user + own.system) * HZ),
            "busy": sum(machine) - idle, "total": sum(machine)}


def cpu_per_cycle(before: dict[str, int], after: dict[str, int], cycles: int
                  ) -> dict[str, float]:
    """CPU milliseconds per cycle of each part, and the share of the cores in use."""
    spent = {key: after[key] - before[key] for key in before}
    per = {key: spent[key] * 1000 / HZ / max(cycles, 1)
           for key in ("web", "loadgen", "busy")}
    per["rest"] = per["busy"] - per["web"] - per["loadgen"]
    per["busy_share"] = spent["busy"] / max(spent["total"], 1)
    return per


def server_times(path: str, offset: int, expected: int, deadline_s: float = 30.0
                 ) -> tuple[dict[str, list[float]], int]:
    """The server's time (ms) per endpoint in the access log from ``offset``, once it holds
    ``expected`` lines of the three endpoints (gunicorn logs a request after answering
    it), and the offset after them."""
    deadline = time.monotonic() + deadline_s
    while True:
        with open(path, "rb") as log:
            log.seek(offset)
            data = log.read()
        times: dict[str, list[float]] = {name: [] for name in ENDPOINTS}
        for line in data.decode(errors="replace").splitlines():
            parts = line.split()
            if len(parts) != 4:
                continue
            method, url, _status, micros = parts
            for name, verb, route in ROUTES:
                if method == verb and route.match(url):
                    times[name].append(int(micros) / 1000)
        if sum(map(len, times.values())) >= expected or time.monotonic() > deadline:
            return times, offset + len(data)
        time.sleep(0.05)  # the last responses' log lines are being written


def engine_closed_loop(args, database_url: str) -> float:
    """bench/assign.py's closed loop (engine in-process, no HTTP), same machine, same
    run: its submits/s."""
    command = [sys.executable, str(BENCH / "assign.py"), "--workers", str(args.workers),
               "--seconds", str(args.engine_seconds), "--solo-seconds", "0",
               "--paced-seconds", "0", "--floor-seconds", "0"]
    print("baseline: " + " ".join(command[1:]), flush=True)
    done = subprocess.run(command, cwd=ROOT, env={**os.environ, "DATABASE_URL": database_url},
                          capture_output=True, text=True, timeout=900, check=False)
    found = re.search(r"^RESULT assign .*\bsubmits_per_s=([\d.]+)", done.stdout, re.M)
    if done.returncode not in (0, 1) or not found:
        raise RuntimeError(f"bench/assign.py failed ({done.returncode}): "
                           f"{(done.stdout + done.stderr)[-2000:]}")
    return float(found.group(1))


def interpreter() -> str:
    """Which CPython runs the bench, gunicorn and the baseline (all ``sys.executable``): its
    version, its executable, and whether the interpreter is in a shared libpython (a
    default pyenv build) or in the executable (Debian's). Figures of different
    interpreters differ by about 10% (docs/deployment.md, "The interpreter")."""
    shared = "libpython" in Path("/proc/self/maps").read_text()  # Linux, as cpu_ticks
    where = "shared libpython" if shared else "interpreter in the executable"
    return (f"{platform.python_implementation()} {platform.python_version()}, "
            f"{os.path.realpath(sys.executable)} ({where})")


def login(base: str, username: str) -> str:
    """A real login through the form: the session key."""
    client = arrivals.new_client()
    page = client.get(f"{base}/accounts/login/", timeout=60)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    if page.status_code != 200 or not token:
        raise RuntimeError(f"login page: HTTP {page.status_code}")
    done = client.post(f"{base}/accounts/login/", allow_redirects=False, timeout=60,
                       data={"csrfmiddlewaretoken": html.unescape(token.group(1)),
                             "username": username, "password": PASSWORD},
                       headers={"Referer": f"{base}/accounts/login/", "Origin": base})
    session = client.cookies.get("sessionid")
    if done.status_code != 302 or not session:
        raise RuntimeError(f"login of {username}: HTTP {done.status_code}")
    return session


def report(name: str, client: dict[str, list[float]], server: dict[str, list[float]]) -> None:
    for endpoint in ENDPOINTS:
        c, s = client[endpoint], server[endpoint]
        if not c:
            continue
        print(f"  {name} {endpoint:<6} client p50 {percentile(c, .5):6.1f} / p95 "
              f"{percentile(c, .95):6.1f} / p99 {percentile(c, .99):6.1f} ms;"
              f" server p50 {percentile(s, .5):6.1f} / p95 {percentile(s, .95):6.1f} ms"
              f" ({len(c):,} requests)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=50, help="annotators")
    parser.add_argument("--paced-rate", type=float, default=TARGET_PACED,
                        help="cycles per second the annotators offer in all when paced")
    parser.add_argument("--paced-seconds", type=float, default=30.0)
    parser.add_argument("--seconds", type=float, default=30.0, help="the closed loop")
    parser.add_argument("--chained-seconds", type=float, default=30.0,
                        help="the closed loop with one request a cycle (submit with next)")
    parser.add_argument("--engine-seconds", type=float, default=30.0,
                        help="the engine's closed loop (bench/assign.py), the baseline")
    parser.add_argument("--gunicorn-workers", type=int, default=2 * (os.cpu_count() or 1) + 1)
    parser.add_argument("--items", type=int, default=20_000, help="open items (overlap 2)")
    parser.add_argument("--docs", type=int, default=200, help="articles the items are about")
    parser.add_argument("--seed", type=int, default=20261125)
    parser.add_argument("--keep", action="store_true", help="leave the project")
    args = parser.parse_args()
    database_url = os.environ.get("DATABASE_URL", "")
    if not database_url.startswith(("postgres://", "postgresql://")):
        print("bench/http_assign.py needs DATABASE_URL=postgres://...", file=sys.stderr)
        return 2

    # Production's shared cache, for this process (its accounts) and gunicorn alike.
    os.environ.setdefault("CACHE_URL", "redis://127.0.0.1:6379/10")
    import django

    django.setup()
    from django.core.cache import cache

    try:  # before the baseline's minute, not at the first login after it
        cache.get("crowdqa:bench:probe")
    except Exception as exc:  # noqa: BLE001 (whatever the backend raises)
        print(f"bench/http_assign.py: the cache at CACHE_URL={os.environ['CACHE_URL']} does"
              f" not answer ({type(exc).__name__}: {exc}); start Redis or set CACHE_URL",
              file=sys.stderr)
        return 2
    print(f"interpreter: {interpreter()}", flush=True)
    engine_before = engine_closed_loop(args, database_url)
    print(f"engine closed loop, before (bench/assign.py, {args.workers} workers): "
          f"{engine_before:.1f} submits/s", flush=True)

    from django.core.management import call_command
    from django.db import connection, connections
    from rest_framework.authtoken.models import Token

    from annotation import engine
    from annotation.roles import Role
    from annotation.services import user_ensure

    call_command("migrate", verbosity=0)
    rng = random.Random(args.seed)
    print(f"building {args.docs} articles and {args.items:,} answer items ...", flush=True)
    from benchdb import news_answer_project

    project, stage = news_answer_project(
        name="bench-http", docs=args.docs, items=args.items, rng=rng, article=article,
        title=lambda n: f"Bench article {n}",
        question=lambda k: f"What did the report say about question {k}?")
    users = []
    for n in range(args.workers):
        user, _ = user_ensure(username=f"bench-http-{n}", password=PASSWORD,
                              roles=(Role.ANNOTATOR,))
        engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
        users.append((user.username, Token.objects.get_or_create(user=user)[0].key))
    with connection.cursor() as cursor:  # this machine's PostgreSQL runs autovacuum off
        for table in ("annotation_item", "annotation_assignment", "annotation_submission",
                      "annotation_projectmember", "annotation_transitionlog", "django_session",
                      "authtoken_token", "auth_user"):
            cursor.execute(f"VACUUM (ANALYZE) {table}")
    connections.close_all()

    server = Server(args.gunicorn_workers, database_url, access_log=True)
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        server.wait_ready(arrivals.new_client())
        annotators = [Annotator(name, token, login(server.base, name)) for name, token in users]
        # Warm-up: every gunicorn worker has its connection, its prepared statements and
        # its templates before the measured phases.
        uvloop.run(phase(server.base, project.pk, annotators[:10], 3.0, None))
        for who in annotators:
            who.times = {name: [] for name in ENDPOINTS}
            who.cycles = 0
        offset = Path(server.access_path).stat().st_size
        results = {}
        for name, seconds, period, run in (
                ("paced", args.paced_seconds, args.workers / args.paced_rate, cycle),
                ("closed", args.seconds, None, functools.partial(cycle, page=False)),
                ("chained", args.chained_seconds, None, cycle_chained)):
            print(f"{name}: {args.workers} annotators, {seconds:.0f} s"
                  + (f", offering {args.paced_rate:.0f} cycles/s" if period else "")
                  + f"; gunicorn {args.gunicorn_workers} workers ...", flush=True)
            ticks = cpu_ticks(server.proc.pid)
            elapsed = uvloop.run(phase(server.base, project.pk, annotators, seconds, period,
                                        run))
            cpu = cpu_per_cycle(ticks, cpu_ticks(server.proc.pid),
                                sum(len(who.times["submit"]) for who in annotators))
            client = {e: [t for who in annotators for t in who.times[e]] for e in ENDPOINTS}
            requests_made = sum(map(len, client.values()))
            server_ms, offset = server_times(server.access_path, offset, requests_made)
            errors = [e for who in annotators for e in who.errors]
            results[name] = {"client": client, "server": server_ms, "errors": errors,
                             "submits_per_s": len(client["submit"]) / elapsed, "cpu": cpu}
            print(f"  {len(client['submit']):,} submits in {elapsed:.1f} s: "
                  f"{results[name]['submits_per_s']:.1f} submits/s; errors {len(errors)}"
                  + (f" (first: {errors[0]})" if errors else ""), flush=True)
            report(name, client, server_ms)
            print(f"  CPU per cycle: gunicorn {cpu['web']:.2f} ms, load generator "
                  f"{cpu['loadgen']:.2f} ms, PostgreSQL and the rest {cpu['rest']:.2f} ms;"
                  f" cores busy {cpu['busy_share']:.0%}", flush=True)
            for who in annotators:
                who.times = {e: [] for e in ENDPOINTS}
                who.errors = []
        logged_errors = [line for line in server.errors_logged().splitlines()
                         if "Traceback" in line or "Error" in line]
    finally:
        server.stop()
        signal.signal(signal.SIGTERM, previous)

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) - count(DISTINCT (item_id, worker_id)) FROM"
                       " annotation_assignment WHERE stage_id = %s AND status = 'submitted'",
                       [stage.pk])
        twice = cursor.fetchone()[0]
        cursor.execute("SELECT count(*) FROM (SELECT item_id FROM annotation_assignment"
                       " WHERE stage_id = %s AND status = 'submitted' GROUP BY item_id"
                       " HAVING count(*) > 2) over", [stage.pk])
        overfilled = cursor.fetchone()[0]
    duplicates = twice + overfilled
    if not args.keep:
        from benchdb import project_drop

        project_drop(project)

    engine_after = engine_closed_loop(args, database_url)
    engine_submits = (engine_before + engine_after) / 2
    print(f"engine closed loop, after: {engine_after:.1f} submits/s; mean of the two "
          f"{engine_submits:.1f}", flush=True)

    paced, closed, chained = results["paced"], results["closed"], results["chained"]
    p95 = {e: percentile(paced["client"][e], 0.95) for e in ENDPOINTS}
    ratio = closed["submits_per_s"] / engine_submits if engine_submits else float("nan")
    chained_ratio = (chained["submits_per_s"] / engine_submits if engine_submits
                     else float("nan"))
    met = (paced["submits_per_s"] >= 0.95 * args.paced_rate
           and all(value <= TARGET_P95_MS for value in p95.values())
           and ratio >= TARGET_ENGINE_RATIO and duplicates == 0)
    print(f"baseline, same run: the engine's closed loop {engine_submits:.1f} submits/s "
          f"(before {engine_before:.1f}, after {engine_after:.1f}); "
          f"over HTTP {closed['submits_per_s']:.1f} submits/s = {ratio:.3f} x (target >= "
          f"{TARGET_ENGINE_RATIO}), one request a cycle {chained['submits_per_s']:.1f} = "
          f"{chained_ratio:.3f} x; paced {paced['submits_per_s']:.1f}/s of "
          f"{args.paced_rate:.0f} offered, p95 claim {p95['claim']:.1f} / page "
          f"{p95['page']:.1f} / submit {p95['submit']:.1f} ms (target <= {TARGET_P95_MS:.0f});"
          f" duplicates {duplicates} (twice {twice}, over-filled {overfilled});"
          f" server errors logged {len(logged_errors)}; targets {'met' if met else 'NOT met'}")
    server_p95 = {e: percentile(paced["server"][e], 0.95) for e in ENDPOINTS}
    print(f"RESULT http_assign paced_submits_per_s={paced['submits_per_s']:.1f} "
          f"claim_p95_ms={p95['claim']:.1f} submit_p95_ms={p95['submit']:.1f} "
          f"page_p95_ms={p95['page']:.1f} closed_submits_per_s={closed['submits_per_s']:.1f} "
          f"engine_ratio={ratio:.3f} duplicates={duplicates} "
          f"engine_submits_per_s={engine_submits:.1f} "
          f"engine_before_submits_per_s={engine_before:.1f} "
          f"engine_after_submits_per_s={engine_after:.1f} "
          f"server_claim_p95_ms={server_p95['claim']:.1f} "
          f"server_submit_p95_ms={server_p95['submit']:.1f} "
          f"server_page_p95_ms={server_p95['page']:.1f} "
          f"chained_submits_per_s={chained['submits_per_s']:.1f} "
          f"chained_engine_ratio={chained_ratio:.3f} "
          f"chained_web_cpu_ms_per_cycle={chained['cpu']['web']:.2f} "
          f"errors={sum(len(r['errors']) for r in results.values())} "
          f"web_cpu_ms_per_cycle={closed['cpu']['web']:.2f} "
          f"loadgen_cpu_ms_per_cycle={closed['cpu']['loadgen']:.2f} "
          f"rest_cpu_ms_per_cycle={closed['cpu']['rest']:.2f} "
          f"busy_share={closed['cpu']['busy_share']:.2f} "
          f"gunicorn_workers={args.gunicorn_workers}")
    return 0 if met else 1


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
