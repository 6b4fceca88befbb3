"""The web processes' gunicorn worker (config.gunicorn_worker.SyncWorker): a connection
wakes one waiting worker, not all of them; signals and the heartbeat work as in gunicorn's
sync worker; gunicorn started as the README says serves with it and stops cleanly."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from gunicorn.config import Config
from gunicorn.glogging import Logger

from config import gunicorn_worker
from config.gunicorn_worker import SyncWorker
from tests.polling import wait_until

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not gunicorn_worker.EXCLUSIVE,
                                reason="EPOLLEXCLUSIVE is Linux's (4.5 and later)")


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    sock = socket.create_server(("127.0.0.1", 0))
    sock.setblocking(False)  # as gunicorn's sync worker sets it
    yield sock
    sock.close()


def _worker(listener: socket.socket) -> SyncWorker:
    """A worker as gunicorn's arbiter builds it, with its signal pipe and its poller (what
    ``init_process`` and ``run`` set up before the loop)."""
    cfg = Config()
    worker = SyncWorker(1, os.getpid(), [listener], None, 30.0, cfg, Logger(cfg))
    worker.PIPE = os.pipe()
    for fd in worker.PIPE:
        os.set_blocking(fd, False)
    worker.wait_fds = [*worker.sockets, worker.PIPE[0]]
    worker.poller = worker.exclusive_poller()
    return worker


def _close(worker: SyncWorker) -> None:
    if worker.poller is not None:
        worker.poller.close()
    for fd in worker.PIPE:
        os.close(fd)
    worker.tmp.close()


def _in_epoll_wait(tid: int) -> bool:
    """Whether the thread ``tid`` of this process sleeps in epoll_wait (its wait channel)."""
    try:
        channel = Path(f"/proc/self/task/{tid}/wchan").read_text()
    except OSError:
        return False
    return "epoll" in channel or channel == "ep_poll"


def test_a_connection_wakes_one_of_the_waiting_workers(listener):
    workers = [_worker(listener) for _ in range(3)]
    woke: dict[int, list] = {}
    tids: dict[int, int] = {}

    def wait(n: int) -> None:
        tids[n] = threading.get_native_id()
        woke[n] = workers[n].wait(60.0)

    threads = [threading.Thread(target=wait, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    try:
        wait_until(lambda: len(tids) == 3 and all(_in_epoll_wait(t) for t in tids.values()),
                   timeout=30, what="three workers waiting in epoll")
        client = socket.create_connection(listener.getsockname())
        wait_until(lambda: woke, timeout=30, what="a worker woken by the connection")
        # Wake the rest through their signal pipes. The connection is not accepted yet,
        # so a worker that the connection had woken too (select(), or epoll without
        # EPOLLEXCLUSIVE) would report the listener ready beside its pipe.
        for worker in workers:
            os.write(worker.PIPE[1], b"1")
        for thread in threads:
            thread.join(timeout=30)
        with_listener = [ready for ready in woke.values() if listener in ready]
        assert len(woke) == 3
        assert with_listener == [[listener]], woke
        conn, _ = listener.accept()
        conn.close()
        client.close()
    finally:
        for worker in workers:
            _close(worker)


def test_a_signal_ends_the_wait_at_once(listener):
    worker = _worker(listener)
    try:
        os.write(worker.PIPE[1], b"1")  # what signal.set_wakeup_fd writes for a signal
        began = time.monotonic()
        assert worker.wait(30.0) == [worker.PIPE[0]]
        assert time.monotonic() - began < 10
        with pytest.raises(BlockingIOError):  # the byte was read: the next wait sleeps
            os.read(worker.PIPE[0], 1)
    finally:
        _close(worker)


def test_each_wait_is_a_heartbeat(listener):
    worker = _worker(listener)
    try:
        began = time.monotonic()  # gunicorn's heartbeat: the file's mtime set to monotonic
        worker.wait(0.05)
        assert began - 0.001 <= worker.tmp.last_update() <= time.monotonic() + 0.001
    finally:
        _close(worker)


def test_without_epollexclusive_it_waits_as_the_sync_worker(listener, monkeypatch):
    monkeypatch.setattr(gunicorn_worker, "EXCLUSIVE", 0)
    worker = _worker(listener)
    try:
        assert worker.poller is None
        client = socket.create_connection(listener.getsockname())
        assert worker.wait(30.0) == [listener]  # select(), as gunicorn's sync worker
        client.close()
    finally:
        _close(worker)


PID_APP = """
import os
def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [str(os.getpid()).encode()]
"""


def _gunicorn(tmp_path: Path, app_source: str, *args: str
              ) -> tuple[subprocess.Popen, int, Path]:
    """gunicorn started as the README says (``-c config/gunicorn.conf.py``) on the WSGI
    ``app`` of ``app_source`` (a module in ``tmp_path``), with ``args``: the process, its
    port and its log."""
    (tmp_path / "wsgi_app.py").write_text(app_source)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path / "gunicorn.log"
    log.touch()  # gunicorn appends to it once it has started
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", str(REPO / "config" / "gunicorn.conf.py"),
         "wsgi_app:app", "--bind", f"127.0.0.1:{port}", "--graceful-timeout", "20",
         "--log-level", "info", "--error-logfile", str(log), *args],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
    )
    return proc, port, log


def _get(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as response:  # noqa: S310
        assert response.status == 200
        return response.read().decode()


def test_gunicorn_serves_idles_and_stops_with_the_configured_worker(tmp_path):
    """``gunicorn -c config/gunicorn.conf.py``: three workers of this class serve every
    request; idle past gunicorn's timeout none is killed for a missed heartbeat; SIGTERM
    stops them at once (the signal ends their wait)."""
    proc, port, log = _gunicorn(tmp_path, PID_APP, "--workers", "3", "--timeout", "1")
    try:
        def booted() -> list[str]:
            assert proc.poll() is None, log.read_text()
            return re.findall(r"Booting worker with pid: (\d+)", log.read_text())

        wait_until(lambda: len(booted()) == 3, timeout=60, what="three workers booted")
        workers = set(booted())
        assert "Using worker: config.gunicorn_worker.SyncWorker" in log.read_text()

        served = {_get(port) for _ in range(30)}
        assert served <= workers
        # Idle for three times gunicorn's timeout: a worker that missed its heartbeat
        # would be killed and replaced ("WORKER TIMEOUT", a new pid).
        time.sleep(3)
        served |= {_get(port) for _ in range(10)}
        assert served <= workers
        assert set(booted()) == workers
        assert "WORKER TIMEOUT" not in log.read_text()

        began = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        # Well inside the graceful timeout: the workers left their wait on the signal.
        assert time.monotonic() - began < 10, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


FROZEN_APP = """
import gc
LOADED = [[n] for n in range(50_000)]  # what a worker loads with its application
def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    seen = gc.get_objects()  # the collected generations: frozen objects are not in them
    return [f"{gc.get_freeze_count()} {any(o is LOADED for o in seen)}".encode()]
"""


def test_each_worker_freezes_what_it_loaded_with_the_application(tmp_path):
    """``post_worker_init``: the objects a worker has once the application is loaded are
    out of the collector's generations (``gc.freeze``), so no full collection walks them."""
    proc, port, log = _gunicorn(tmp_path, FROZEN_APP, "--workers", "1")
    try:
        def answer() -> str | None:
            assert proc.poll() is None, log.read_text()
            try:
                return _get(port)
            except OSError:  # not listening yet
                return None

        frozen, seen = wait_until(answer, timeout=60, what="gunicorn answering").split()
        assert int(frozen) >= 50_000
        assert seen == "False"
    finally:
        proc.terminate()
        proc.wait(timeout=60)
