"""What the pages share about reading a request: the id a form posted, which a hand-made
form can make anything (a word, a number too big for the database), and which must then
be a 404 or a refusal, never a server error."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.http import Http404
from django.shortcuts import get_object_or_404

ID_MAX = 2**63 - 1  # the largest id a bigint column holds


def whole_number(value: Any) -> int | None:
    """``value`` (a form's, a query string's or JSON's text) as a whole number of 0 or more
    that a bigint holds, or None when it is none. Only ASCII digits: ``str.isdigit`` also
    takes "²" and "٣", which ``int`` then refuses or reads as 3."""
    text = value.strip() if isinstance(value, str) else ""
    if not text.isascii() or not text.isdigit():
        return None
    number = int(text)
    return number if number <= ID_MAX else None


def posted_id(value: Any) -> int | None:
    """``value`` (a form's or a query string's) as a row id, or None when it is none."""
    number = whole_number(value)
    return number if number else None


def posted_or_404(model: type[models.Model] | models.QuerySet, value: Any,
                  **filters: Any) -> Any:
    """The row of ``model`` (or among a queryset) whose id a form posted as ``value``,
    within ``filters``: 404 when there is none, or when the value is no id at all."""
    pk = posted_id(value)
    if pk is None:
        name = getattr(model, "model", model)._meta.verbose_name
        raise Http404(f"no such {name}: {str(value)[:40]!r} is not an id")
    return get_object_or_404(model, pk=pk, **filters)


class IdConverter:
    """``<id:pk>`` in a URL: a row id, as ``<int:pk>`` but only up to what a bigint holds
    (a larger number went on to the database: an overflow, a 500). Registered as ``id`` by
    the annotation app; a path with another number matches nothing (404)."""

    regex = "[0-9]+"

    def to_python(self, value: str) -> int:
        number = int(value)
        if number > ID_MAX:
            raise ValueError(f"{value[:40]} is larger than any id")
        return number

    def to_url(self, value: Any) -> str:
        return str(value)
