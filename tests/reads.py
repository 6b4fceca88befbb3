"""How much a piece of code reads from the database: the statements it runs and the rows
they return, for tests that prove a page or a figure does not grow with the crowd."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import connection
from django.test.utils import CaptureQueriesContext

FETCHES = ("fetchone", "fetchmany", "fetchall")


def reads(monkeypatch: Any, run: Callable[[], Any], *, warm_up: int = 0) -> tuple[int, int]:
    """(statements, rows read) of one ``run()``, after ``warm_up`` runs that are not
    counted (PostgreSQL prepares a statement at its second use: warm up twice before
    comparing statement counts)."""
    from django.db.backends.utils import CursorWrapper

    for _ in range(warm_up):
        run()
    rows = [0]

    def counted(name: str) -> Callable[..., Any]:
        def fetch(self: Any, *args: Any) -> Any:
            got = getattr(self.cursor, name)(*args)
            rows[0] += (got is not None) if name == "fetchone" else len(got)
            return got
        return fetch

    with monkeypatch.context() as patch, CaptureQueriesContext(connection) as seen:
        for name in FETCHES:
            patch.setattr(CursorWrapper, name, counted(name), raising=False)
        run()
    return len(seen), rows[0]
