"""The one exception every importer raises for bad input."""

from __future__ import annotations

from django.utils.translation import gettext_noop

from collector.stored_text import StoredText

Text = str | StoredText


class ImportFailure(Exception):
    """Bad input, described in one line: file, place (line or JSON path), field, problem.

    ``str(error)`` reads like ``books.jsonl: line 3: field 'body': is missing``, in the
    active language: the problem and the place are :class:`StoredText` (a plain string is
    shown as it is), the file name and the field exactly as given. ``text`` is the whole
    as one stored text, for a job to keep and its page to show in its reader's language.
    """

    def __init__(
        self, detail: Text, *, file: str, where: Text | None = None, field: str | None = None
    ) -> None:
        self.file = file
        self.where = where
        self.field = field
        self.detail = detail if isinstance(detail, StoredText) else " ".join(detail.split())
        super().__init__(self.text.english())

    def __str__(self) -> str:
        return self.render()

    @property
    def text(self) -> StoredText:
        """``file: place: field 'name': problem`` as a stored text."""
        text: Text = self.detail
        if self.field:
            text = StoredText(gettext_noop("field '%(field)s': %(detail)s"),
                              field=self.field, detail=text)
        if self.where:
            text = StoredText(gettext_noop("%(where)s: %(detail)s"), where=self.where,
                              detail=text)
        return StoredText(gettext_noop("%(file)s: %(detail)s"), file=self.file, detail=text)

    def render(self) -> str:
        """The failure in the active language."""
        return str(self.text)


Where = str | StoredText  # a place: a JSON path, ``line 3``, ``data[2] (line 40)``

WHOLE_FILE = gettext_noop("whole file")
TOP_LEVEL = gettext_noop("top level")
FILE_NAME = gettext_noop("file name")
SHOULD_BE_TEXT = gettext_noop("should be text, found %(found)s")
COLUMNS_DIFFER = gettext_noop("has %(columns)s columns, the header has %(header)s")
SHOULD_BE_STRING = gettext_noop("should be a string")
SHOULD_BE_OBJECT = gettext_noop("should be an object")
THE_END_OF_THE_FILE = gettext_noop("the end of the file")
LONGER_THAN = gettext_noop("is longer than %(most)s characters")


def at_line(line: int | str, column: int | str | None = None) -> StoredText:
    """``line 3`` (or ``line 3, column 7``): a place in a file, for ``where``."""
    if column is None:
        return StoredText(gettext_noop("line %(line)s"), line=line)
    return StoredText(gettext_noop("line %(line)s, column %(column)s"), line=line,
                      column=column)


def at_path(path: str, line: int | str) -> StoredText:
    """``data[3] (line 40)``: a record of a JSON document by its path and the line it starts
    on, for ``where``."""
    return StoredText(gettext_noop("%(path)s (line %(line)s)"), path=path, line=line)


def shorten(value: object, limit: int = 40) -> str:
    """A value quoted for an error message, cut to ``limit`` characters, on one line."""
    text = " ".join(str(value).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return repr(text)
