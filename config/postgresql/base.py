"""Django's PostgreSQL backend, with a health check that costs no round trip.

With ``CONN_HEALTH_CHECKS`` Django checks a kept connection at the first query of each
request by sending ``SELECT 1``: on the hot path that is a round trip to the server in each
of claim, task page and submit (one of a claim's two). Here the check first looks at the
connection without a round trip: open, outside any transaction, and nothing readable on its
socket. A server that ended the connection (a restart, ``pg_terminate_backend``, an idle
timeout) has sent its error message and closed the socket, which leaves it readable, so
the check then falls back to Django's ``SELECT 1``, which fails and the connection is
replaced before the request uses it. Anything else readable (a notice) takes the same
fallback, as does a connection inside a transaction. What the socket cannot show (a
network that drops packets silently) ``SELECT 1`` could not show quickly either.

``settings.py`` uses this backend for every ``postgres://`` DATABASE_URL.
"""

from __future__ import annotations

import select

from django.db.backends.postgresql import base

IDLE = 0  # psycopg's TRANSACTION_STATUS_IDLE (psycopg2) and TransactionStatus.IDLE (3)


class DatabaseWrapper(base.DatabaseWrapper):
    def close_if_health_check_failed(self) -> None:
        if (
            self.connection is not None
            and self.health_check_enabled
            and not self.health_check_done
            and self.quiet()
        ):
            self.health_check_done = True
            return
        super().close_if_health_check_failed()

    def quiet(self) -> bool:
        """Whether the connection is open, idle outside a transaction, and the server has
        sent nothing since its last answer (no round trip)."""
        conn = self.connection
        if conn.closed or conn.info.transaction_status != IDLE:
            return False
        poller = select.poll()
        poller.register(conn.fileno(), select.POLLIN)
        return not poller.poll(0)
