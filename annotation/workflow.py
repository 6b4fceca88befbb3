"""Status transitions: one table of allowed moves, one function that performs them.

``transition(obj, to)`` runs a conditional UPDATE (primary key *and* the status the caller
read) and fails loudly when no row changed, so two processes racing for the same object
cannot both win. Every change is logged in ``TransitionLog``.
"""

from __future__ import annotations

from typing import Any

from django.db import models

from annotation.models import (
    Assignment,
    Batch,
    Inspection,
    Item,
    Project,
    Release,
    TransitionLog,
)

AS, IS, PS = Assignment.Status, Item.Status, Project.Status
BS, NS = Batch.Status, Inspection.Status

ALLOWED: dict[type[models.Model], frozenset[tuple[str, str]]] = {
    Project: frozenset({
        (PS.DRAFT, PS.ACTIVE), (PS.ACTIVE, PS.CLOSED), (PS.CLOSED, PS.ACTIVE),
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
    }),
    Release: frozenset({
        (Release.Status.BUILDING, Release.Status.READY),
        (Release.Status.BUILDING, Release.Status.FAILED),
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


def transition(
    obj: models.Model, to: str, *, actor: Any = None, note: str = "", **fields: Any
) -> None:
    """Move ``obj`` from its current status to ``to``, setting ``fields`` in the same UPDATE."""
    model = type(obj)
    source = obj.status
    if (source, to) not in ALLOWED[model]:
        raise TransitionError(
            f"{model.__name__} {obj.pk}: {source} -> {to} is not an allowed transition"
        )
    changed = model.objects.filter(pk=obj.pk, status=source).update(status=to, **fields)
    if changed != 1:
        current = model.objects.filter(pk=obj.pk).values_list("status", flat=True).first()
        raise TransitionError(
            f"{model.__name__} {obj.pk}: expected status {source}, found {current}; "
            "another process changed it first"
        )
    TransitionLog.objects.create(
        model=model.__name__, object_id=obj.pk, from_status=source, to_status=to,
        actor=actor if getattr(actor, "pk", None) else None, note=note[:300],
    )
    obj.status = to
    for name, value in fields.items():
        setattr(obj, name, value)
