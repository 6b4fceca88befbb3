"""Reading JSON and JSON-lines inputs with errors that say where the problem is."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from collector.metrics.errors import MetricsInputError

Source = str | Path | IO[bytes] | IO[str]
"""A file name, or an open file (e.g. from Django's storage API), read whole."""


def _read_text(path: Source) -> str:
    if not isinstance(path, str | Path):
        data = path.read()
        if isinstance(data, bytes):
            try:
                data = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise MetricsInputError(f"not UTF-8 text ({exc.reason})",
                                        source=str(path)) from None
        # As read_text does: universal newlines.
        return data.replace("\r\n", "\n").replace("\r", "\n")
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MetricsInputError("file not found", source=str(path)) from None
    except IsADirectoryError:
        raise MetricsInputError("is a directory, expected a file", source=str(path)) from None
    except UnicodeDecodeError as exc:
        raise MetricsInputError(f"not UTF-8 text ({exc.reason})", source=str(path)) from None
    except OSError as exc:
        raise MetricsInputError(f"cannot read ({exc.strerror})", source=str(path)) from None


NESTED_TOO_DEEP = "invalid JSON: nested deeper than a predictions or reference file can be"


def load_json(path: Source) -> Any:
    """Parse a whole JSON file; a syntax error names the line and column."""
    text = _read_text(path)
    if not text.strip():
        raise MetricsInputError("file is empty", source=str(path))
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise MetricsInputError(
            f"invalid JSON: {exc.msg} (column {exc.colno})", source=str(path), line=exc.lineno
        ) from None
    except RecursionError:
        raise MetricsInputError(NESTED_TOO_DEEP, source=str(path)) from None


def iter_jsonl(path: Source, *, skip_blank: bool = False) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, object)`` for every line of a JSON-lines file.

    The official DuReader and MS MARCO scorers parse every line, so a blank line is an
    error unless ``skip_blank`` is set (a final newline is not a blank line).
    """
    text = _read_text(path)
    lines = text.split("\n")  # read_text already turned \r\n and \r into \n
    if lines and lines[-1] == "":
        lines.pop()
    if not any(line.strip() for line in lines):
        raise MetricsInputError("file is empty", source=str(path))
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            if skip_blank:
                continue
            raise MetricsInputError("blank line; every line must be a JSON object",
                                    source=str(path), line=number)
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise MetricsInputError(
                f"invalid JSON: {exc.msg} (column {exc.colno})", source=str(path), line=number
            ) from None
        except RecursionError:
            raise MetricsInputError(NESTED_TOO_DEEP, source=str(path), line=number) from None
        if not isinstance(obj, dict):
            raise MetricsInputError(
                f"expected a JSON object, got {type(obj).__name__}", source=str(path), line=number
            )
        yield number, obj
