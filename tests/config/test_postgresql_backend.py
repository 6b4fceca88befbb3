"""config.postgresql: a kept connection's health check at the start of a request costs no
round trip while the connection is quiet, and a connection the server ended is still
replaced before the request uses it."""

from __future__ import annotations

import select

import pytest
from django.db import connection, connections

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _postgres_only():
    if connection.vendor != "postgresql":
        pytest.skip("needs DATABASE_URL=postgres://... (CI runs the suite on PostgreSQL)")


@pytest.fixture
def kept():
    """A second connection to the test database, kept across "requests" with health checks
    on, as production keeps a gunicorn worker's (CONN_MAX_AGE, CONN_HEALTH_CHECKS)."""
    wrapper = connections.create_connection("default")
    wrapper.settings_dict = {**wrapper.settings_dict, "CONN_MAX_AGE": None,
                             "CONN_HEALTH_CHECKS": True}
    yield wrapper
    wrapper.close()


def _backend_pid(wrapper) -> int:
    with wrapper.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def _next_request(wrapper) -> None:
    """What Django does for a kept connection when a request starts (request_started)."""
    wrapper.close_if_unusable_or_obsolete()


def test_the_backend_is_djangos_with_the_cheaper_check(kept):
    assert type(kept).__module__ == "config.postgresql.base"
    assert kept.vendor == "postgresql"


def test_a_quiet_connection_is_not_asked_select_1(kept, monkeypatch):
    pid = _backend_pid(kept)
    asked = []
    monkeypatch.setattr(kept, "is_usable", lambda: asked.append(1) or True)
    for _ in range(3):
        _next_request(kept)
        assert _backend_pid(kept) == pid
    assert asked == []


def test_a_connection_the_server_ended_is_replaced_before_use(kept):
    pid = _backend_pid(kept)
    _next_request(kept)
    with connection.cursor() as cursor:  # another session ends it, as a restart would
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
        assert cursor.fetchone() == (True,)
    # The server's goodbye reaches the socket: it turns readable.
    poller = select.poll()
    poller.register(kept.connection.fileno(), select.POLLIN)
    assert poller.poll(30_000), "the ended connection's socket never turned readable"
    # The first query of the request finds the connection unusable, opens a new one and
    # runs, where without any check it would fail ("terminating connection ...").
    new_pid = _backend_pid(kept)
    assert new_pid != pid


def test_inside_a_transaction_it_asks_the_server(kept, monkeypatch):
    _backend_pid(kept)
    kept.set_autocommit(False)
    try:
        with kept.cursor() as cursor:
            cursor.execute("SELECT 1")
        kept.health_check_done = False
        asked = []
        real = kept.is_usable
        monkeypatch.setattr(kept, "is_usable", lambda: asked.append(1) or real())
        _backend_pid(kept)
        assert asked == [1]
    finally:
        kept.rollback()
        kept.set_autocommit(True)
