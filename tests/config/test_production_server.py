"""Production mode under gunicorn, after the README's static step: static files are served
(hashed, compressed, cached) and pages carry the Content-Security-Policy.

Contract: ``CROWDQA_ENV=production`` under ``gunicorn -c config/gunicorn.conf.py
config.wsgi``, after
``manage.py collectstatic``, answers ``/static/css/crowdqa.css`` 200 with a Cache-Control
max-age, and pages carry a Content-Security-Policy header.
"""

from __future__ import annotations

import os
import re
import selectors
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TEN_YEARS = 315360000
# Left out of the production processes' environment: the test run's own settings, and
# DJANGO_ALLOW_ASYNC_UNSAFE (set for the browser tests; check --deploy rightly refuses it),
# and CI's broker (with the test run's file cache, check warns: crowdqa.W003).
TEST_ONLY_ENV = ("DEBUG", "DATABASE_URL", "CONN_MAX_AGE", "SECURE_SSL_REDIRECT",
                 "SECURE_HSTS_SECONDS", "SECURE_PROXY_SSL_HEADER", "DJANGO_ALLOW_ASYNC_UNSAFE",
                 "CELERY_BROKER_URL",
                 # CI's PostgreSQL stage: these instances are SQLite, whose search is Whoosh's
                 "CROWDQA_SEARCH_BACKEND")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _max_age(cache_control: str) -> int:
    match = re.search(r"max-age=(\d+)", cache_control)
    assert match, f"no max-age in Cache-Control: {cache_control!r}"
    return int(match.group(1))


def _get(url: str, **headers: str):
    assert url.startswith("http://127.0.0.1:")
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 (the local server)
    with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
        return response.status, response.headers, response.read()


@pytest.fixture(scope="module")
def production_server(tmp_path_factory) -> Iterator[str]:
    """``collectstatic`` as the README says, then ``gunicorn config.wsgi`` in production mode;
    yields the base URL once gunicorn listens."""
    tmp = tmp_path_factory.mktemp("production")
    env = {k: v for k, v in os.environ.items() if k not in TEST_ONLY_ENV}
    env.update({
        "CROWDQA_ENV": "production",
        "SECRET_KEY": "a-long-random-production-secret-0123456789abcdef-for-this-test-only",
        "ALLOWED_HOSTS": "127.0.0.1",
        "STATIC_ROOT": str(tmp / "static"),
        "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    })
    collect = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )
    assert collect.returncode == 0, collect.stderr
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.conf.py", "config.wsgi",
         "--bind", f"127.0.0.1:{port}", "--workers", "2", "--log-level", "info"],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    log: list[str] = []
    try:
        # gunicorn says "Listening at" once its socket accepts connections (requests queue
        # until the worker has loaded the site).
        selector = selectors.DefaultSelector()
        selector.register(proc.stderr, selectors.EVENT_READ)
        deadline = time.monotonic() + 60
        while not any("Listening at" in line for line in log):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("gunicorn did not start:\n" + "".join(log))
            if selector.select(timeout=1):
                log.append(proc.stderr.readline())
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_the_stylesheet_is_served_with_a_long_max_age(production_server):
    status, headers, body = _get(f"{production_server}/static/css/crowdqa.css")
    assert status == 200
    assert body == (REPO / "static" / "css" / "crowdqa.css").read_bytes()
    assert headers["Content-Type"].startswith("text/css")
    assert _max_age(headers["Cache-Control"]) >= 24 * 3600


def test_pages_carry_the_policy_and_link_hashed_static_files(production_server):
    status, headers, body = _get(f"{production_server}/accounts/login/")
    assert status == 200
    policy = headers["Content-Security-Policy"]
    assert "default-src 'self'" in policy
    assert "script-src 'self'" in policy
    assert "unsafe" not in policy
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["X-Frame-Options"] == "DENY"
    page = body.decode()
    hashed = re.findall(r'(?:href|src)="(/static/[^"]+)"', page)
    css = [u for u in hashed if re.fullmatch(r"/static/css/crowdqa\.[0-9a-f]{12}\.css", u)]
    htmx = [u for u in hashed
            if re.fullmatch(r"/static/vendor/htmx/htmx\.min\.[0-9a-f]{12}\.js", u)]
    assert css and htmx, hashed
    for url in hashed:
        status, headers, _ = _get(f"{production_server}{url}")
        assert status == 200, url
        assert _max_age(headers["Cache-Control"]) == TEN_YEARS, url
        assert "immutable" in headers["Cache-Control"], url


def test_static_files_are_sent_compressed(production_server):
    status, headers, body = _get(f"{production_server}/static/vendor/htmx/htmx.min.js",
                                 **{"Accept-Encoding": "gzip"})
    assert status == 200
    assert headers["Content-Encoding"] == "gzip"
    assert len(body) < (REPO / "static" / "vendor" / "htmx" / "htmx.min.js").stat().st_size / 2


def test_check_deploy_is_clean_in_production_mode(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in TEST_ONLY_ENV}
    env.update({
        "CROWDQA_ENV": "production",
        "SECRET_KEY": "a-long-random-production-secret-0123456789abcdef-for-this-test-only",
        "ALLOWED_HOSTS": "crowdqa.example.org",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    })
    env.pop("EMAIL_URL", None)
    # Without EMAIL_URL no mail can be sent: invite links restricted to e-mail domains
    # cannot confirm addresses, and the check says so.
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode != 0
    assert "crowdqa.W004" in result.stderr and "EMAIL_URL is not set" in result.stderr
    env["EMAIL_URL"] = "smtp+tls://crowdqa:secret@smtp.example.org:587"
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout
    # Turning Django's own HTTPS redirect on needs no silenced check.
    env["SECURE_SSL_REDIRECT"] = "true"
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues (0 silenced)" in result.stdout
