"""Benchmark: the first Chinese search of a fresh web process, with and without the preload.

Run from the repository root::

    .venv/bin/python bench/zh_first_search.py [--docs 2000] [--runs 3] [--seed 20261125]

1. A fresh SQLite database gets a Chinese corpus of ``--docs`` documents (the generator of
   bench/search.py: words drawn by frequency from jieba's dictionary), its Whoosh index,
   and an annotator.
2. For each run, a new ``gunicorn config.wsgi`` (one worker, ``DEBUG=0``) starts and the
   annotator logs in over HTTP; then the search page is asked for a Chinese query:
   - **baseline** ``CROWDQA_SEARCH_PRELOAD=none`` (as before): the first search loads
     jieba's dictionary itself;
   - **preloaded** ``CROWDQA_SEARCH_PRELOAD=auto``: the process loaded it when it started
     (the benchmark waits for the preload's log line, as a search arriving a few seconds
     after a restart would), and the first search only searches;
   - **at once**: preloaded, but the first search is sent as soon as the login is done,
     without waiting (it waits for the load already under way, never loads twice).
   Also printed: the second search of the process (what every later search costs), and
   how long the preload took in the background.
3. Medians over ``--runs`` processes; ``ratio`` = baseline first search / preloaded first
   search.

The last line is ``RESULT zh_first_search baseline_ms=… preloaded_ms=… at_once_ms=…
second_ms=… preload_s=… ratio=…``.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import os
import re
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from search import load, setup_django, zh_documents  # noqa: E402  (bench/ is the script's path)

PASSWORD = "bench-password-0123"  # noqa: S105 - a throwaway user of a throwaway database
QUERY = "中国经济发展"


def prepare(workdir: Path, docs: int, seed: int) -> None:
    setup_django(workdir, procs=1)
    from annotation.roles import Role
    from annotation.services import user_ensure
    from collector.services import index_rebuild

    corpus, _ = load(workdir / "zh.jsonl", zh_documents(docs, seed=seed), corpus="zh-bench",
                     language="zh")
    index_rebuild(corpus=corpus)
    user_ensure(username="bench", password=PASSWORD, roles=[Role.ANNOTATOR])


class Server:
    """``gunicorn config.wsgi`` with one worker; its log is read for readiness signals."""

    def __init__(self, env: dict[str, str]) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "config.wsgi", "--bind",
             f"127.0.0.1:{self.port}", "--workers", "1", "--timeout", "120"],
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.proc.stderr, selectors.EVENT_READ)
        self.log: list[str] = []
        self.wait_for("Listening at")
        self.url = f"http://127.0.0.1:{self.port}"
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def wait_for(self, text: str, timeout: float = 120) -> str:
        deadline = time.monotonic() + timeout
        while True:
            for line in self.log:
                if text in line:
                    return line
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"gunicorn: no {text!r} in its log:\n" + "".join(self.log))
            if self.selector.select(timeout=1):
                self.log.append(self.proc.stderr.readline())

    def get(self, path: str) -> str:
        with self.opener.open(self.url + path, timeout=300) as response:
            return response.read().decode()

    def login(self) -> None:
        page = self.get("/accounts/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        data = urllib.parse.urlencode({"username": "bench", "password": PASSWORD,
                                       "csrfmiddlewaretoken": token}).encode()
        login_url = self.url + "/accounts/login/"
        request = urllib.request.Request(login_url, data=data, headers={"Referer": login_url})  # noqa: S310
        with self.opener.open(request, timeout=300) as response:
            assert "/accounts/login/" not in response.url, "login failed"

    def search_ms(self) -> float:
        query = urllib.parse.urlencode({"corpus": "zh-bench", "q": QUERY})
        started = time.perf_counter()
        page = self.get(f"/collector/search/?{query}")
        took = (time.perf_counter() - started) * 1000
        assert 'class="hit' in page, "the search found nothing"
        return took

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def run(env: dict[str, str], *, mode: str, wait: bool) -> tuple[float, float, float | None]:
    server = Server({**env, "CROWDQA_SEARCH_PRELOAD": mode})
    try:
        server.login()
        preload_s = None
        if wait:
            line = server.wait_for("search analyzers preloaded")
            preload_s = float(re.search(r"zh ([\d.]+) s", line).group(1))
        first = server.search_ms()
        second = server.search_ms()
        return first, second, preload_s
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20261125)
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="crowdqa-zh-first-"))
    prepare(workdir, args.docs, args.seed)
    env = {**os.environ, "DEBUG": "0", "ALLOWED_HOSTS": "127.0.0.1", "LOG_LEVEL": "INFO",
           "CROWDQA_ENV": "development"}
    results: dict[str, list[tuple[float, float, float | None]]] = {
        "baseline": [], "preloaded": [], "at_once": []}
    for n in range(args.runs):
        results["baseline"].append(run(env, mode="none", wait=False))
        results["preloaded"].append(run(env, mode="auto", wait=True))
        results["at_once"].append(run(env, mode="auto", wait=False))
        print(f"run {n + 1}: " + ", ".join(
            f"{name} first {rows[-1][0]:.0f} ms" for name, rows in results.items()), flush=True)

    def median(name: str, column: int) -> float:
        return statistics.median(row[column] for row in results[name])

    baseline, preloaded, at_once = (median(n, 0) for n in ("baseline", "preloaded", "at_once"))
    second = statistics.median(row[1] for rows in results.values() for row in rows)
    preload_s = median("preloaded", 2)
    ratio = baseline / preloaded
    print(f"\n{args.docs:,} Chinese passages, {args.runs} fresh gunicorn processes per case, "
          f"medians; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"first search, baseline (no preload):      {baseline:8.0f} ms")
    print(f"first search, preloaded at process start: {preloaded:8.0f} ms "
          f"(preload took {preload_s:.1f} s in the background)")
    print(f"first search sent right after the login:  {at_once:8.0f} ms")
    print(f"second search of a process:               {second:8.0f} ms")
    print(f"ratio baseline / preloaded first search: {ratio:.1f}x")
    print(f"RESULT zh_first_search baseline_ms={baseline:.0f} preloaded_ms={preloaded:.0f} "
          f"at_once_ms={at_once:.0f} second_ms={second:.0f} preload_s={preload_s:.1f} "
          f"ratio={ratio:.1f}")


if __name__ == "__main__":
    main()
