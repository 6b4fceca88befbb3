"""What the pages share about reading a request: the id a form posted, which a hand-made
form can make anything (a word, a number too big for the database), and which must then
be a 404 or a refusal, never a server error."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.http import Http404
from django.shortcuts import get_object_or_404

ID_MAX = 2**63 - 1  # the largest id a bigint column holds


def posted_id(value: Any) -> int | None:
    """``value`` (a form's or a query string's) as a row id, or None when it is none."""
    text = value.strip() if isinstance(value, str) else ""
    if not text.isascii() or not text.isdigit():
        return None
    number = int(text)
    return number if 0 < number <= ID_MAX else None


def posted_or_404(model: type[models.Model] | models.QuerySet, value: Any,
                  **filters: Any) -> Any:
    """The row of ``model`` (or among a queryset) whose id a form posted as ``value``,
    within ``filters``: 404 when there is none, or when the value is no id at all."""
    pk = posted_id(value)
    if pk is None:
        name = getattr(model, "model", model)._meta.verbose_name
        raise Http404(f"no such {name}: {str(value)[:40]!r} is not an id")
    return get_object_or_404(model, pk=pk, **filters)
