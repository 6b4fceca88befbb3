"""The one exception every importer raises for bad input."""

from __future__ import annotations


class ImportFailure(Exception):
    """Bad input, described in one line: file, place (line or JSON path), field, problem.

    ``str(error)`` reads like ``books.jsonl: line 3: field 'body': is missing``.
    """

    def __init__(
        self, detail: str, *, file: str, where: str | None = None, field: str | None = None
    ) -> None:
        self.file = file
        self.where = where
        self.field = field
        self.detail = " ".join(detail.split())
        super().__init__(self.render())

    def render(self) -> str:
        parts = [self.file]
        if self.where:
            parts.append(self.where)
        if self.field:
            parts.append(f"field '{self.field}'")
        return ": ".join(parts) + ": " + self.detail


def shorten(value: object, limit: int = 40) -> str:
    """A value quoted for an error message, cut to ``limit`` characters, on one line."""
    text = " ".join(str(value).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return repr(text)
