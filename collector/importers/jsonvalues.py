"""Decoding one JSON record safely, for every reader that reads JSON.

Python's decoder turns input nested thousands of levels deep into a ``RecursionError``,
and accepts text no database stores: NUL characters (``\\u0000``) and lone surrogates
(``"\\ud800"``, which UTF-8 cannot encode). :func:`json_record` decodes a JSON Lines
record and :func:`value_problem` checks any decoded value, so each of these is reported
like any bad input: file, place and the field's path inside the record
(``passages[2].url``). Nesting is limited to :data:`MAX_DEPTH` levels, which real
datasets stay far below (SQuAD's deepest value is 6 levels down).
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from django.utils.translation import gettext_noop

from collector.importers.errors import THE_END_OF_THE_FILE, ImportFailure, Where
from collector.stored_text import StoredText

MAX_DEPTH = 100

_SURROGATE = re.compile("[\ud800-\udfff]")
# Outside strings, the characters that matter for nesting; strings whole (keys included).
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},:]', re.DOTALL)
_PATH_SHOWN = 8  # path parts named in a too-deep error
# Decoded JSON can hold a NUL or a lone surrogate only through these escapes (strict UTF-8
# input has no surrogates, and the decoder refuses raw control characters in strings).
_RISKY_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")


class Problem(NamedTuple):
    field: str  # path inside the value ("" for the value itself)
    detail: StoredText


def json_problem(exc: json.JSONDecodeError, *, end: str = THE_END_OF_THE_FILE
                 ) -> StoredText | str:
    """What Python's JSON decoder found wrong, in our own words (translatable), naming what
    it found where it stopped (``end``, a msgid, when that is the end of the text); its
    English as it is for a complaint not mapped here. The position is the caller's to
    say, from ``exc``."""
    doc, pos, msg = exc.doc, exc.pos, exc.msg
    found: StoredText | str = StoredText(end) if pos >= len(doc) else repr(doc[pos])
    if msg == "Expecting value":
        return StoredText(gettext_noop("expected a value, found %(found)s"), found=found)
    if msg == "Expecting property name enclosed in double quotes":
        return StoredText(gettext_noop("expected a key in double quotes, found %(found)s"),
                          found=found)
    if msg in ("Expecting ':' delimiter", "Expecting ',' delimiter"):
        return StoredText(gettext_noop("expected %(expected)s, found %(found)s"),
                          expected=msg.split()[1], found=found)
    if msg == "Extra data":
        return StoredText(gettext_noop("unexpected %(found)s after the end of the JSON value"),
                          found=found)
    if msg == "Unterminated string starting at":
        return StoredText(UNTERMINATED_STRING)
    if msg == "Invalid control character at":
        return StoredText(gettext_noop("control character %(found)s inside a string: write it "
                                       "as an escape (\\n, \\t, \\u0000)"), found=found)
    if msg == "Invalid \\escape":
        return StoredText(INVALID_ESCAPE, escape=f"'{doc[pos:pos + 2]}'")
    if msg == "Invalid \\uXXXX escape":
        return StoredText(INVALID_ESCAPE, escape=f"'{doc[max(pos - 1, 0):pos + 5]}'")
    return msg


UNTERMINATED_STRING = gettext_noop("unterminated string")
INVALID_ESCAPE = gettext_noop("invalid escape %(escape)s in a string")


def text_problem(text: str) -> StoredText | None:
    """What makes ``text`` unstorable (a NUL, a lone surrogate), or None."""
    if "\x00" in text:
        return StoredText(gettext_noop("contains a NUL character (\\u0000), which cannot be "
                                       "stored"))
    if not text.isascii():
        found = _SURROGATE.search(text)
        if found:
            return StoredText(gettext_noop("contains a lone surrogate (%(escape)s at character "
                                           "%(position)s), which is not valid Unicode: fix the "
                                           "text or its \\u escapes"),
                              escape=f"\\u{ord(found.group()):04x}", position=found.start() + 1)
    return None


def needs_check(text: str, start: int = 0, end: int | None = None) -> bool:
    """Whether the JSON text ``text[start:end]`` may decode to something
    :func:`value_problem` refuses: a risky ``\\u`` escape, or more brackets than levels
    allowed. Most records have neither, and skip the walk."""
    end = len(text) if end is None else end
    return (text.count("[", start, end) + text.count("{", start, end) >= MAX_DEPTH
            or (text.find("\\", start, end) >= 0
                and _RISKY_ESCAPE.search(text, start, end) is not None))


def too_deep() -> StoredText:
    return StoredText(gettext_noop("is nested more than %(levels)s levels deep (lists and "
                                   "objects inside each other)"), levels=MAX_DEPTH)


def join_path(prefix: str, field: str) -> str:
    if not prefix:
        return field
    if not field:
        return prefix
    return prefix + field if field.startswith("[") else f"{prefix}.{field}"


def _render(parts: list[str | int], *, limit: int | None = None) -> str:
    shown = parts if limit is None or len(parts) <= limit else parts[:limit]
    path = ""
    for part in shown:
        path = f"{path}[{part}]" if isinstance(part, int) else join_path(path, part)
    return path + ("…" if len(shown) < len(parts) else "")


def value_problem(value: Any, *, max_depth: int = MAX_DEPTH) -> Problem | None:
    """The first string in ``value`` (keys too) that cannot be stored, or the first place
    nested deeper than ``max_depth``; None when all is well. Walks without recursion."""
    # (node, depth, path as a linked list (parent, part)); paths are built only on error.
    stack: list[tuple[Any, int, tuple[Any, str | int] | None]] = [(value, 0, None)]
    while stack:
        node, depth, link = stack.pop()
        if isinstance(node, str):
            detail = text_problem(node)
            if detail:
                return Problem(_render(_unlink(link)), detail)
        elif isinstance(node, dict | list):
            if depth >= max_depth:
                return Problem(_render(_unlink(link), limit=_PATH_SHOWN), too_deep())
            if isinstance(node, dict):
                children = []
                for key, child in node.items():
                    detail = text_problem(key)
                    if detail:
                        return Problem(_render(_unlink(link)), StoredText(
                            gettext_noop("has a key that %(problem)s"), problem=detail))
                    children.append((child, depth + 1, (link, key)))
            else:
                children = [(child, depth + 1, (link, i)) for i, child in enumerate(node)]
            stack.extend(reversed(children))
    return None


def _unlink(link: tuple[Any, str | int] | None) -> list[str | int]:
    parts: list[str | int] = []
    while link is not None:
        link, part = link
        parts.append(part)
    parts.reverse()
    return parts


def nesting_problem(text: str, start: int = 0) -> tuple[int, Problem] | None:
    """Where the JSON value at ``text[start:]`` first nests deeper than :data:`MAX_DEPTH`:
    (position, problem); None if it does not. For text the decoder could not take."""
    stack: list[list[Any]] = []  # [is an object, current key or index]
    for match in _TOKEN.finditer(text, start):
        token = match.group()
        char = token[0]
        if char in "[{":
            if len(stack) >= MAX_DEPTH:
                parts = [part for _, part in stack if part is not None]
                return match.start(), Problem(_render(parts, limit=_PATH_SHOWN), too_deep())
            stack.append([char == "{", None if char == "{" else 0])
        elif char in "]}":
            if not stack:
                return None
            stack.pop()
            if not stack:
                return None
        elif char == "," and stack and not stack[-1][0]:
            stack[-1][1] += 1
        elif char == '"' and stack and stack[-1][0]:
            following = text[match.end():match.end() + 64].lstrip()
            if following.startswith(":"):
                try:
                    stack[-1][1] = json.loads(token)
                except (ValueError, RecursionError):
                    stack[-1][1] = token[1:-1]
    return None


def json_record(text: str, *, file: str, where: Where, field: str = "",
                invalid: str = gettext_noop("invalid JSON")) -> Any:
    """``text`` (one whole JSON value, such as a JSON Lines line) decoded and checked.

    Bad JSON, a value nested too deep and text that cannot be stored raise
    :class:`ImportFailure` naming ``file``, ``where`` and the field inside the value
    (below ``field``); ``invalid`` (a msgid) starts the message for malformed JSON, which
    says the column (and the line, in a value of several lines) where the decoder stopped.
    """
    text = text.rstrip(" \t\r\n")  # a line's ending: an error at the end is on the line
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        error = json_problem(exc, end=END_OF_VALUE if field else END_OF_LINE)
        if exc.lineno == 1:
            detail = StoredText(gettext_noop("%(invalid)s: %(error)s (column %(column)s)"),
                                invalid=StoredText(invalid), error=error, column=exc.colno)
        else:
            detail = StoredText(gettext_noop("%(invalid)s: %(error)s (line %(line)s of the "
                                             "value, column %(column)s)"),
                                invalid=StoredText(invalid), error=error, line=exc.lineno,
                                column=exc.colno)
        raise ImportFailure(detail, file=file, where=where, field=field or None) from None
    except RecursionError:
        found = nesting_problem(text)
        problem = found[1] if found else Problem("", too_deep())
    else:
        problem = value_problem(value) if needs_check(text) else None
    if problem is not None:
        raise ImportFailure(problem.detail, file=file, where=where,
                            field=join_path(field, problem.field) or None)
    return value


END_OF_LINE = gettext_noop("the end of the line")
END_OF_VALUE = gettext_noop("the end of the value")
