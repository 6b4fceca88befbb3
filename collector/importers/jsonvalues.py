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

from collector.importers.errors import ImportFailure
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


def json_record(text: str, *, file: str, where: str | StoredText, field: str = "",
                invalid: str = gettext_noop("invalid JSON")) -> Any:
    """``text`` (one whole JSON value, such as a JSON Lines line) decoded and checked.

    Bad JSON, a value nested too deep and text that cannot be stored raise
    :class:`ImportFailure` naming ``file``, ``where`` and the field inside the value
    (below ``field``); ``invalid`` (a msgid) starts the message for malformed JSON.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFailure(StoredText(gettext_noop("%(invalid)s: %(error)s (column "
                                                    "%(column)s)"),
                                       invalid=StoredText(invalid), error=exc.msg,
                                       column=exc.colno),
                            file=file, where=where, field=field or None) from None
    except RecursionError:
        found = nesting_problem(text)
        problem = found[1] if found else Problem("", too_deep())
    else:
        problem = value_problem(value) if needs_check(text) else None
    if problem is not None:
        raise ImportFailure(problem.detail, file=file, where=where,
                            field=join_path(field, problem.field) or None)
    return value
