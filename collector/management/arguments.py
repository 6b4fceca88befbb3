"""Command-line arguments that name something stored: one way to refuse a name that is not
there, saying which option was wrong, with what, and what it could have been."""

from __future__ import annotations

import difflib
import tempfile
from collections.abc import Sequence
from pathlib import Path

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


def new_or_empty_folder(value: str, *, option: str = "--out") -> Path:
    """The folder ``value`` names, checked before any work is done: an empty folder, or a
    new one inside an existing folder; either must be writable (tried with a file that is
    removed at once). Otherwise a CommandError names ``option`` and the path. Nothing is
    made here: a new folder is made by what writes into it."""
    if not value.strip():
        raise CommandError(f"{option}: an empty path; name a folder (new or empty)")
    folder = Path(value)
    try:
        if folder.exists():
            if not folder.is_dir():
                raise CommandError(f"{option}: {folder} is a file, not a folder")
            if any(folder.iterdir()):
                raise CommandError(f"{option}: {folder} is not empty: name a new or empty "
                                   "folder")
            writes_in = folder
        else:
            writes_in = folder.parent
            if not writes_in.exists():
                raise CommandError(f"{option}: cannot make {folder}: {writes_in} does not "
                                   "exist")
            if not writes_in.is_dir():
                raise CommandError(f"{option}: cannot make {folder}: {writes_in} is a file, "
                                   "not a folder")
    except OSError as exc:
        raise CommandError(f"{option}: cannot read {folder} ({exc.strerror or exc})") from exc
    try:
        with tempfile.TemporaryFile(dir=writes_in):
            pass
    except OSError as exc:
        raise CommandError(f"{option}: cannot write in {writes_in} ({exc.strerror or exc})"
                           ) from exc
    return folder
