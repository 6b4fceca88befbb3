"""The one exception type of the metrics library.

Every problem with the caller's input (a malformed prediction file, an unknown question id,
an empty corpus, a case where the official script would crash) is raised as
:class:`MetricsInputError` with a one-line message that names the file, the line and the
field where that is known. The command line prints that line and exits non-zero.
"""

from __future__ import annotations

import json
from collections.abc import Iterable


class MetricsInputError(ValueError):
    """Input that cannot be scored; the message is one line meant for a person."""

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None):
        where = ""
        if source is not None:
            where = source if line is None else f"{source}, line {line}"
            where += ": "
        super().__init__(where + " ".join(str(message).split()))
        self.source = source
        self.line = line


def _json_kind(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "null" if value is None else type(value).__name__


def id_type_hint(example: object, known: Iterable[object], *, where: str) -> str:
    """Why ``example`` (an id found nowhere in ``known``) may not match: the same id
    written as another JSON type, e.g. ``the string "327283948" where the reference file has
    the number 327283948``; or ids of another type only; ``""`` when neither."""
    text = str(example)
    kinds = set()
    for other in known:
        kinds.add(_json_kind(other))
        if _json_kind(other) != _json_kind(example) and str(other) == text:
            return (f"the {_json_kind(example)} {json.dumps(example, ensure_ascii=False)} "
                    f"where {where} has the {_json_kind(other)} "
                    f"{json.dumps(other, ensure_ascii=False)}")
    if kinds and _json_kind(example) not in kinds:
        plural = sorted(k if k == "null" else f"{k}s" for k in kinds)
        return (f"{json.dumps(example, ensure_ascii=False)} is a {_json_kind(example)}, "
                f"the ids in {where} are {' and '.join(plural)}")
    return ""
