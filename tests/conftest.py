"""Shared fixtures: users per role, isolated index/cache directories, a real Celery worker."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

# Keep test runs away from the demo's var/: own index and cache directories, shared with
# any worker process the tests start (it inherits this environment).
_TMP = Path(tempfile.mkdtemp(prefix="crowdqa-tests-"))
os.environ["SEARCH_INDEX_DIR"] = str(_TMP / "index")
os.environ["CACHE_URL"] = f"filecache://{_TMP / 'cache'}"
os.environ["MEDIA_ROOT"] = str(_TMP / "media")
# The suite's study arrivals all come from 127.0.0.1 over a run longer than the limit's
# hour: the limit is tested where it is turned on (tests/annotation/test_studies.py).
# (The settings were read before this file: the fixture ``_no_hourly_limits`` turns them off
# in the test process; the environment reaches the worker processes the tests start.)
os.environ["CROWDQA_STUDY_NEW_WORKERS_PER_HOUR"] = "0"
# So do its sign-ups through invite links (tested in tests/annotation/test_security_round.py).
os.environ["CROWDQA_INVITE_SIGNUPS_PER_HOUR"] = "0"

from annotation.roles import Role  # noqa: E402
from tests.factories import PASSWORD, user_with_roles  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_TMP, ignore_errors=True)


def _require(flag: str) -> bool:
    return os.environ.get(flag, "") not in ("", "0", "false")


def skip_or_fail(reason: str, *, required_by: str) -> None:
    """Skip with a reason, unless CI demands the test run (then fail loudly)."""
    if _require(required_by):
        pytest.fail(f"{reason} (and {required_by} is set, so this must run)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix, request,
                                 tmp_path_factory):
    """SQLite, in a session with browser tests: the test database is a file, as the demo's
    is. The live server, the job thread and the test all use it at once, and an in-memory
    database shared between threads locks whole tables, failing at once ("database table
    is locked") where a file in WAL mode lets readers go on and writers wait their turn.
    Here, not in tests/e2e: the database is set up once a session, for whichever test asks
    first, so an override beside the browser tests would not reach them in a whole-suite
    run (`make test`)."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    browser_tests = any(item.get_closest_marker("e2e") for item in request.session.items)
    if db["ENGINE"] == "django.db.backends.sqlite3" and browser_tests:
        db.setdefault("TEST", {})["NAME"] = str(tmp_path_factory.mktemp("e2e-db") / "e2e.sqlite3")


@pytest.fixture(autouse=True, scope="session")
def _isolated_storage():
    """Index, cache and media of the test run live in a temporary directory (settings were
    read before this file ran, so the environment above only reaches worker processes)."""
    from django.conf import settings
    from django.core.cache import caches

    settings.SEARCH_INDEX_DIR = Path(os.environ["SEARCH_INDEX_DIR"])
    settings.MEDIA_ROOT = os.environ["MEDIA_ROOT"]
    settings.CACHES = {"default": {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": str(_TMP / "cache"),
    }}
    caches.__dict__.pop("settings", None)  # re-read CACHES on next use
    for alias in list(caches):
        caches[alias].close()
    yield


@pytest.fixture(autouse=True, scope="session")
def _fast_passwords():
    # PBKDF2's deliberate slowness buys nothing in tests.
    from django.conf import settings

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _no_hourly_limits(settings):
    """The per-address hourly limits on new accounts are off (every request of the suite
    comes from 127.0.0.1); the tests of each limit turn it on."""
    settings.CROWDQA_STUDY_NEW_WORKERS_PER_HOUR = 0
    settings.CROWDQA_INVITE_SIGNUPS_PER_HOUR = 0


@pytest.fixture(autouse=True)
def _jobs_inline(request, settings):
    """Jobs run inline in tests (in the embedded mode they run on a background thread),
    even when CI configures a broker: only tests marked ``celery_worker`` send them to a
    real worker."""
    settings.CROWDQA_JOBS_IN_THREAD = False
    if "celery_worker" not in request.keywords:
        settings.CELERY_TASK_ALWAYS_EAGER = True


@pytest.fixture(autouse=True)
def _default_language():
    """Each test starts in the default language and leaves it so: a request in Chinese
    activates zh-hans in the test's thread (LocaleMiddleware, as in a server's worker
    thread), and the next test's messages would be Chinese."""
    from django.utils import translation

    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture
def password() -> str:
    return PASSWORD


@pytest.fixture
def annotator(db):
    return user_with_roles("ann", Role.ANNOTATOR)


@pytest.fixture
def checker(db):
    return user_with_roles("chk", Role.CHECKER)


@pytest.fixture
def admin_user(db):
    return user_with_roles("adm", Role.ADMIN)


@pytest.fixture
def client_for(client):
    """``client_for(user)`` logs the test client in as ``user``."""

    def login(user):
        client.force_login(user)
        return client

    return login


@pytest.fixture
def manage_py(transactional_db, tmp_path):
    """Run ``manage.py ARGS`` in a subprocess, for its exit status and what reaches stderr,
    against the test database as it is now: on PostgreSQL the test database itself, on
    SQLite a copy in a file (the in-memory one is this process's). Returns the
    ``CompletedProcess``."""
    import sqlite3

    from django.db import connection

    copies = iter(range(1_000))

    def run(*args: str) -> subprocess.CompletedProcess:
        env = dict(os.environ)
        if connection.vendor == "sqlite":
            copy = tmp_path / f"manage-py-{next(copies)}.sqlite3"
            connection.ensure_connection()
            target = sqlite3.connect(copy)
            try:
                connection.connection.backup(target)
            finally:
                target.close()
            env["DATABASE_URL"] = f"sqlite:///{copy}"
            env.pop("CROWDQA_SEARCH_BACKEND", None)  # CI's PostgreSQL stage sets it
        else:
            env["DATABASE_URL"] = _test_database_url(connection.settings_dict)
        return subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=120)

    return run


def _test_database_url(settings_dict: dict) -> str:
    user = settings_dict.get("USER") or ""
    password = settings_dict.get("PASSWORD") or ""
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host = settings_dict.get("HOST") or "127.0.0.1"
    port = settings_dict.get("PORT") or 5432
    return f"postgres://{auth}{host}:{port}/{settings_dict['NAME']}"


def _worker_environment_checked(settings) -> None:
    from django.db import connection

    if settings.CELERY_TASK_ALWAYS_EAGER:
        skip_or_fail(
            "no CELERY_BROKER_URL configured: the real-worker tests need a broker",
            required_by="CROWDQA_REQUIRE_WORKER",
        )
    if connection.vendor != "postgresql":
        skip_or_fail(
            "the real-worker tests need DATABASE_URL=postgres://... (a worker process cannot "
            "share the in-memory SQLite test database)",
            required_by="CROWDQA_REQUIRE_WORKER",
        )


@pytest.fixture
def celery_workers(transactional_db, settings):
    """``start(args=..., env=..., cwd=...)`` starts a real ``celery worker`` process on the
    configured broker and the test database (in ``cwd``; elsewhere than the repository,
    give it PYTHONPATH in ``env``), waits until it answers a ping and returns its Popen;
    every worker still alive is stopped at the end."""
    import socket

    from django.db import connection

    _worker_environment_checked(settings)
    from config.celery import app

    with app.connection_for_write() as conn:
        for queue in ("default", "index"):
            # A queue that does not exist yet has nothing stale in it.
            with contextlib.suppress(Exception):
                conn.default_channel.queue_purge(queue)
    started: list[tuple[subprocess.Popen, Path]] = []

    def start(*, args: tuple[str, ...] = ("--pool", "solo"),
              env: dict[str, str] | None = None, cwd: Path = REPO) -> subprocess.Popen:
        worker_env = {
            **os.environ,
            "DATABASE_URL": _test_database_url(connection.settings_dict),
            "DJANGO_SETTINGS_MODULE": "config.settings",
            **(env or {}),
        }
        log_path = Path(tempfile.mkstemp(prefix="crowdqa-worker-", suffix=".log")[1])
        name = f"test-{uuid.uuid4().hex[:8]}@{socket.gethostname()}"
        with log_path.open("wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q",
                 "default,index", *args, "-l", "info", "-n", name, "--without-gossip",
                 "--without-mingle"],
                cwd=cwd, env=worker_env, stdout=log, stderr=subprocess.STDOUT,
            )
        started.append((proc, log_path))
        proc.log_path = log_path  # type: ignore[attr-defined]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"celery worker exited early:\n{log_path.read_text()[-3000:]}")
            if app.control.ping(destination=[name], timeout=0.5):
                return proc
        pytest.fail(f"celery worker did not answer within 60 s:\n"
                    f"{log_path.read_text()[-3000:]}")

    try:
        yield start
    finally:
        for proc, log_path in started:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            log_path.unlink(missing_ok=True)


@pytest.fixture
def redis_broker(celery_workers, settings):
    """``celery_workers`` on Redis only: for tests that read Redis's queues themselves."""
    if not settings.CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
        pytest.skip("these tests read Redis's queues; the broker is "
                    f"{settings.CELERY_BROKER_URL.split('://')[0]}")
    return celery_workers


@pytest.fixture
def celery_worker_process(celery_workers):
    """A real ``celery worker`` process (solo pool) on the configured broker and the test
    database."""
    return celery_workers()
