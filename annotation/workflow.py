"""Status transitions: one table of allowed moves, one function that performs them.

``transition(obj, to)`` runs a conditional UPDATE (primary key *and* the status the caller
read) and fails loudly when no row changed, so two processes racing for the same object
cannot both win. Every change is logged in ``TransitionLog``.

``transition_rows`` is the same move for the rows a SQL condition picks (the claim of the
next open slot picks its row with ``FOR UPDATE SKIP LOCKED``): one ``UPDATE … RETURNING``
whose log rows are written by the same statement on PostgreSQL, so a claim is a single
round trip that commits on its own. ``transition_cte`` hands that statement's beginning to
a caller that adds more writes to it (a submit writes its submission in the same round
trip).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from django.db import models, transaction
from django.utils import timezone

from annotation import sql
from annotation.models import (
    Assignment,
    Batch,
    Inspection,
    Item,
    Project,
    Release,
    TransitionLog,
)
from collector.jobs import retry_when_locked

AS, IS, PS = Assignment.Status, Item.Status, Project.Status
BS, NS = Batch.Status, Inspection.Status

ALLOWED: dict[type[models.Model], frozenset[tuple[str, str]]] = {
    Project: frozenset({
        (PS.DRAFT, PS.ACTIVE), (PS.ACTIVE, PS.CLOSED), (PS.CLOSED, PS.ACTIVE),
        (PS.ACTIVE, PS.COMPLETED), (PS.COMPLETED, PS.ACTIVE), (PS.COMPLETED, PS.CLOSED),
    }),
    Item: frozenset({
        (IS.PENDING, IS.OPEN), (IS.PENDING, IS.DONE), (IS.OPEN, IS.DONE),
        (IS.PENDING, IS.CANCELLED), (IS.OPEN, IS.CANCELLED),
        # batched stages: work in -> inspection -> accepted, or back for relabelling
        (IS.OPEN, IS.REVIEW), (IS.REVIEW, IS.DONE), (IS.REVIEW, IS.OPEN),
    }),
    Batch: frozenset({
        (BS.OPEN, BS.WORKING), (BS.WORKING, BS.INSPECTION), (BS.RETURNED, BS.INSPECTION),
        (BS.INSPECTION, BS.ACCEPTED), (BS.INSPECTION, BS.RETURNED),
        # put back: its annotator can no longer work it, or an admin's Put back
        (BS.WORKING, BS.OPEN), (BS.RETURNED, BS.OPEN),
    }),
    Release: frozenset({
        (Release.Status.BUILDING, Release.Status.READY),
        (Release.Status.BUILDING, Release.Status.FAILED),
        # a failed build was never published: it is built again under the same version
        (Release.Status.FAILED, Release.Status.BUILDING),
        (Release.Status.READY, Release.Status.PUBLISHED),
    }),
    Inspection: frozenset({
        (NS.OPEN, NS.ACTIVE), (NS.ACTIVE, NS.OPEN), (NS.ACTIVE, NS.DONE),
    }),
    Assignment: frozenset({
        (AS.OPEN, AS.ACTIVE), (AS.ACTIVE, AS.SUBMITTED), (AS.ACTIVE, AS.RELEASED),
        (AS.ACTIVE, AS.EXPIRED), (AS.OPEN, AS.CANCELLED),
    }),
}


class TransitionError(Exception):
    """A status change that is not allowed, or lost a race."""


def _allowed(model: type[models.Model], source: str, to: str, what: Any) -> None:
    if (source, to) not in ALLOWED[model]:
        raise TransitionError(
            f"{model.__name__} {what}: {source} -> {to} is not an allowed transition"
        )


@lru_cache(maxsize=256)
def _transition_sql(
    model: type[models.Model], names: tuple[str, ...], where: str, returning: tuple[str, ...],
    vendor: str,
) -> tuple[str, str]:
    """PostgreSQL: the ``moved …, logged …`` CTEs of one statement that moves and logs the
    rows, and its default ending. SQLite: the UPDATE and the log insert run after
    it."""
    qn = sql.db().ops.quote_name
    table, log = qn(model._meta.db_table), qn(TransitionLog._meta.db_table)
    columns = ", ".join(f"{qn(model._meta.get_field(name).column)} = %s" for name in names)
    # The moved row's id for its log row, then what the caller asked for.
    back = ", ".join([f"{qn('id')} AS moved_id", *(qn(column) for column in returning)])
    back_names = ", ".join(["moved_id", *(qn(column) for column in returning)])
    update = f"UPDATE {table} SET {columns} WHERE ({where}) AND {qn('status')} = %s"
    log_columns = "model, object_id, from_status, to_status, actor_id, note, at"
    if vendor == "postgresql":
        # One statement: the update and its log rows commit together or not at all.
        return (f"moved AS ({update} RETURNING {back}), logged AS ("
                f"INSERT INTO {log} ({log_columns}) SELECT %s, moved_id, %s, %s, %s, %s, %s "
                f"FROM moved)"), f" SELECT {back_names} FROM moved"
    return (f"{update} RETURNING {back}",
            f"INSERT INTO {log} ({log_columns}) VALUES (%s, %s, %s, %s, %s, %s, %s)")


def _transition_params(
    model: type[models.Model], to: str, *, source: str, params: Sequence[Any], actor: Any,
    note: str, fields: dict[str, Any] | None, returning: Sequence[str], where: str,
) -> tuple[str, str, list[Any], list[Any]]:
    _allowed(model, source, to, "rows")
    conn = sql.db()
    values = {"status": to, **(fields or {})}
    first, second = _transition_sql(model, tuple(values), where, tuple(returning), conn.vendor)
    update_params = [sql.db_value(model, name, value, conn)[1] for name, value in values.items()]
    update_params += [*params, source]
    at = TransitionLog._meta.get_field("at").get_db_prep_save(timezone.now(), conn)
    log_values = [model.__name__, source, to, actor.pk if getattr(actor, "pk", None) else None,
                  note[:300], at]
    return first, second, update_params, log_values


def transition_cte(
    model: type[models.Model], to: str, *, source: str, where: str,
    params: Sequence[Any] = (), actor: Any = None, note: str = "",
    fields: dict[str, Any] | None = None, returning: Sequence[str] = (),
    before: tuple[str, Sequence[Any]] = ("", ()),
) -> tuple[str, list[Any]]:
    """PostgreSQL only: the ``WITH moved AS (…), logged AS (…)`` prefix (and its
    parameters) of a statement that makes the move of ``transition_rows``; the caller adds
    its own CTEs and SELECT, reading the moved rows from ``moved`` (``moved_id`` and the
    ``returning`` columns), so that more writes join the same statement. ``before``: CTEs
    (text and parameters) that go ahead of ``moved``, for ``where`` to read."""
    if sql.db().vendor != "postgresql":
        raise NotImplementedError("transition_cte needs PostgreSQL; use transition_rows")
    ctes, _, update_params, log_values = _transition_params(
        model, to, source=source, params=params, actor=actor, note=note, fields=fields,
        returning=returning, where=where)
    head, head_params = before
    return (f"WITH {head + ', ' if head else ''}{ctes}",
            [*head_params, *update_params, *log_values])


def transition_rows(
    model: type[models.Model], to: str, *, source: str, where: str,
    params: Sequence[Any] = (), actor: Any = None, note: str = "",
    fields: dict[str, Any] | None = None, returning: Sequence[str] = ("id",),
) -> list[tuple]:
    """Move the rows of ``model`` that match ``where`` (SQL over its table, with
    ``params``) and still have status ``source`` to ``to``, setting ``fields`` in the same
    UPDATE; log each moved row. Returns the ``returning`` columns of the moved rows.
    """
    first, second, update_params, log_values = _transition_params(
        model, to, source=source, params=params, actor=actor, note=note, fields=fields,
        returning=returning, where=where)
    conn = sql.db()
    with conn.cursor() as cursor:
        if conn.vendor == "postgresql":
            sql.execute(cursor, f"WITH {first}{second}", [*update_params, *log_values])
            rows = cursor.fetchall()
        else:
            def move() -> list[tuple]:
                with transaction.atomic():
                    cursor.execute(first, update_params)
                    moved = cursor.fetchall()
                    if moved:
                        name, *rest = log_values
                        cursor.executemany(second, [(name, row[0], *rest) for row in moved])
                return moved

            # On its own (not inside a caller's transaction) the move is retried when it
            # met SQLite's "database is locked"; inside one, the caller's retry covers it.
            rows = retry_when_locked(move, what=f"{model.__name__} -> {to}")
    return [row[1:] for row in rows]


def transition(
    obj: models.Model, to: str, *, actor: Any = None, note: str = "", **fields: Any
) -> None:
    """Move ``obj`` from its current status to ``to``, setting ``fields`` in the same UPDATE."""
    model = type(obj)
    source = obj.status
    _allowed(model, source, to, obj.pk)
    moved = transition_rows(model, to, source=source, where="id = %s", params=[obj.pk],
                            actor=actor, note=note, fields=fields)
    if len(moved) != 1:
        current = model.objects.filter(pk=obj.pk).values_list("status", flat=True).first()
        raise TransitionError(
            f"{model.__name__} {obj.pk}: expected status {source}, found {current}; "
            "another process changed it first"
        )
    obj.status = to
    for name, value in fields.items():
        setattr(obj, name, value)


#: Item statuses that still wait for work (an automatic run, workers, an inspection).
UNFINISHED = (IS.PENDING, IS.OPEN, IS.REVIEW)


def _unfinished_sql() -> str:
    """SQL: the project (``%s``) has a work item (not gold) still waiting."""
    unfinished = ", ".join("%s" for _ in UNFINISHED)
    return ("EXISTS (SELECT 1 FROM annotation_stage s JOIN annotation_item i"
            f" ON i.stage_id = s.id WHERE s.project_id = %s AND i.status IN ({unfinished})"
            " AND i.gold = '')")


def project_complete_if_done(*, project_id: int, actor: Any = None) -> bool:
    """Move an active project to completed when nothing is pending: it has finished items
    and no work item (gold items are never finished) of any stage waits. One conditional
    UPDATE (logged); False when the project is not active or work is left. Call it after
    the commit that finished the items: the last of concurrent commits sees them all."""
    moved = transition_rows(
        Project, PS.COMPLETED, source=PS.ACTIVE, actor=actor,
        note="nothing pending: every item is done or cancelled",
        where=(f"id = %s AND NOT {_unfinished_sql()} AND EXISTS (SELECT 1 FROM"
               " annotation_stage s JOIN annotation_item i ON i.stage_id = s.id"
               " WHERE s.project_id = %s AND i.status = %s)"),
        params=[project_id, project_id, *UNFINISHED, project_id, IS.DONE],
    )
    return bool(moved)


def project_reopen_if_pending(*, project_id: int, actor: Any = None) -> bool:
    """Move a completed project back to active when work arrived again (items emitted
    into it later, a corpus that grew). One conditional UPDATE (logged)."""
    moved = transition_rows(
        Project, PS.ACTIVE, source=PS.COMPLETED, actor=actor, note="new work arrived",
        where=f"id = %s AND {_unfinished_sql()}",
        params=[project_id, project_id, *UNFINISHED],
    )
    return bool(moved)


def stages_pick_up() -> list[int]:
    """The periodic check for stalled automatic stages: a stage of an active project with
    pending items and no live run (queued or running ``stage_run`` job) is run again when
    its last run failed, or ended before its newest pending item arrived (the run that
    item asked for was lost), or it never ran. A stage whose last
    ``CROWDQA_STAGE_PICKUP_FAILURES`` runs all failed is left for an admin's Retry.
    Returns the ids of the stages whose run was queued."""
    from django.conf import settings
    from django.db.models import Max

    from collector.jobs import job_create
    from collector.models import Job

    pending = dict(
        Item.objects.filter(status=IS.PENDING, stage__isnull=False,
                            project__status=PS.ACTIVE)
        .values_list("stage_id").annotate(newest=Max("created_at")).order_by()
    )
    if not pending:
        return []
    live = {params.get("stage_id") for params in Job.objects.filter(
        kind="stage_run", status__in=[Job.Status.QUEUED, Job.Status.RUNNING],
    ).values_list("params", flat=True)}
    limit = max(1, settings.CROWDQA_STAGE_PICKUP_FAILURES)
    picked = []
    for stage_id, newest in sorted(pending.items()):
        if stage_id in live:
            continue
        runs = list(Job.objects.filter(kind="stage_run", params__stage_id=stage_id)
                    .order_by("-id").values_list("status", "started_at")[:limit])
        if len(runs) == limit and all(status == Job.Status.FAILED for status, _ in runs):
            continue
        if runs:
            status, started = runs[0]
            if status == Job.Status.DONE and started is not None and started > newest:
                continue  # its last run saw these items and left them pending
        job_create(kind="stage_run", params={"stage_id": stage_id})
        picked.append(stage_id)
    return picked
