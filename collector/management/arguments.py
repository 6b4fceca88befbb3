"""Command-line arguments that name something stored: one way to refuse a name that is not
there, saying which option was wrong, with what, and what it could have been."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from django.core.management.base import CommandError

from collector.models import Corpus

LISTED_MOST = 20  # names listed after an unknown one; more are counted, not listed


def unknown_name(*, option: str, what: str, plural: str, value: str,
                 known: Sequence[str]) -> CommandError:
    """``--corpus: no corpus named 'squad-dv'; did you mean 'squad-dev'? (corpora: …)``."""
    message = f"{option}: no {what} named {value!r}"
    close = difflib.get_close_matches(value, known, n=1)
    if close:
        message += f"; did you mean {close[0]!r}?"
    listed = ", ".join(known[:LISTED_MOST]) or "none"
    if len(known) > LISTED_MOST:
        listed += f" and {len(known) - LISTED_MOST} more"
    return CommandError(f"{message} ({plural}: {listed})")


def corpus_named(name: str, *, option: str = "--corpus") -> Corpus:
    """The corpus ``name``; a CommandError naming ``option`` when there is none."""
    corpus = Corpus.objects.filter(name=name).first()
    if corpus is None:
        raise unknown_name(option=option, what="corpus", plural="corpora", value=name,
                           known=list(Corpus.objects.order_by("name")
                                      .values_list("name", flat=True)))
    return corpus
