"""Hand-written SQL for the engine's hot path (claiming and submitting tasks).

- ``execute``: runs a statement; on PostgreSQL each distinct statement is prepared at its
  second use in a database session (``PREPARE`` / ``EXECUTE``), so PostgreSQL plans it
  once instead of at every call: planning cost more than running these short statements
  (about 0.6 ms of a 0.9 ms claim). Prepared statements live as long as the session and
  survive rollbacks; a reconnect starts a fresh set. They pay off on connections that
  live across requests (``CONN_MAX_AGE``, 60 s in production). Behind a pooler in
  transaction mode (PgBouncer before 1.21) session state is not kept: set
  ``CROWDQA_PREPARED_STATEMENTS=false``.
- ``columns`` / ``rows_load``: a model's concrete columns and model instances from rows of
  them, converted by Django's own converters, so raw rows load as the ORM would load them.
- ``db_value``: a field's column and a Python value ready for it.

Only identifiers from model metadata and ``%s`` placeholders are ever formatted into the
statements; values always travel as parameters.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any, TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections, models

M = TypeVar("M", bound=models.Model)


def db() -> Any:
    """The default database connection of this thread (one lookup, not one per use)."""
    return connections[DEFAULT_DB_ALIAS]


def placeholders(values: Sequence[Any]) -> str:
    return ", ".join(["%s"] * len(values)) or "NULL"


#: A statement is prepared at its second use in a session: a session that runs it once (a
#: short-lived connection) pays nothing for preparing it.
PREPARE_AT_USE = 2


def _prepared(conn: Any) -> tuple[dict[str, str], dict[str, int]]:
    """This session's prepared statements (SQL text -> name) and use counts of the others;
    a new session starts both afresh."""
    state = conn.__dict__.get("_crowdqa_prepared")
    if state is None or state[0] is not conn.connection:
        state = (conn.connection, {}, {})
        conn.__dict__["_crowdqa_prepared"] = state
    return state[1], state[2]


def execute(cursor: Any, sql: str, params: Sequence[Any] = ()) -> None:
    """Run ``sql`` (``%s`` placeholders) with ``params``; on PostgreSQL prepared at its
    second use in a session and executed by name from then on."""
    conn = cursor.db
    if conn.vendor != "postgresql" or not settings.CROWDQA_PREPARED_STATEMENTS:
        cursor.execute(sql, params)
        return
    known, uses = _prepared(conn)
    name = known.get(sql)
    if name is None:
        uses[sql] = uses.get(sql, 0) + 1
        if uses[sql] < PREPARE_AT_USE:
            cursor.execute(sql, params)
            return
        del uses[sql]
        name = f"crowdqa_{len(known)}"
        pieces = sql.split("%s")
        numbered = pieces[0] + "".join(f"${n}{piece}" for n, piece in enumerate(pieces[1:], 1))
        cursor.execute(f"PREPARE {name} AS {numbered}")
        known[sql] = name
    if params:
        cursor.execute(f"EXECUTE {name}({placeholders(params)})", params)
    else:
        cursor.execute(f"EXECUTE {name}")


def _fields(model: type[models.Model]) -> list[models.Field]:
    return list(model._meta.concrete_fields)


@lru_cache(maxsize=64)
def _columns(model: type[models.Model], alias: str, vendor: str) -> str:
    prefix = f"{alias}." if alias else ""
    quote = db().ops.quote_name
    return ", ".join(prefix + quote(f.column) for f in _fields(model))


def columns(model: type[models.Model], alias: str = "") -> str:
    """The model's concrete columns, in ``rows_load`` order, for a SELECT or RETURNING."""
    return _columns(model, alias, db().vendor)


def column_names(model: type[models.Model]) -> tuple[str, ...]:
    return tuple(f.column for f in _fields(model))


@lru_cache(maxsize=64)
def _loader(model: type[models.Model], vendor: str) -> tuple[list[str], list[tuple]]:
    conn = db()
    converters = []
    for field in _fields(model):
        col = field.get_col(model._meta.db_table)
        found = conn.ops.get_db_converters(col) + col.get_db_converters(conn)
        converters.append((tuple(found), col))
    return [f.attname for f in _fields(model)], converters


def rows_load(model: type[M], rows: Iterable[Sequence[Any]]) -> list[M]:
    """Instances of ``model`` from rows of its ``columns``, converted as the ORM would."""
    conn = db()
    names, converters = _loader(model, conn.vendor)
    loaded = []
    for row in rows:
        values = list(row)
        for n, (found, col) in enumerate(converters):
            for convert in found:
                values[n] = convert(values[n], col, conn)
        loaded.append(model.from_db(conn.alias, names, values))
    return loaded


def db_value(model: type[models.Model], name: str, value: Any, conn: Any = None) -> tuple[str, Any]:
    """The quoted column of field ``name`` (name or attname) and ``value`` ready for it."""
    conn = conn or db()
    field = model._meta.get_field(name)
    if isinstance(value, models.Model):
        value = value.pk
    return conn.ops.quote_name(field.column), field.get_db_prep_save(value, conn)
