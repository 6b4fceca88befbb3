"""Query lists: plain text (one query a line) or JSON Lines.

In JSONL the text is the first of ``question``, ``query``, ``text`` and the id the first
of ``question_id``, ``query_id``, ``id``; other fields go to metadata (NQ answers,
DuReader question types, MS MARCO query types). Queries without an id get one from their
text, so importing the same list twice is idempotent.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

from django.utils.translation import gettext_noop

from collector.importers.errors import Where, at_line
from collector.importers.jsonvalues import json_record
from collector.importers.records import Checker, QueryRecord
from collector.importers.source import ByteCounter, Source, iter_lines
from collector.stored_text import StoredText

TEXT_KEYS = ("question", "query", "text")
ID_KEYS = ("question_id", "query_id", "id")


def text_id(text: str) -> str:
    """A stable id for a query that has none: ``sha1:`` and 16 hex digits of its text."""
    return "sha1:" + hashlib.sha1(" ".join(text.split()).encode(), usedforsecurity=False
                                  ).hexdigest()[:16]


def read_queries(source: Source, *, counter: ByteCounter) -> Iterator[QueryRecord]:
    source_file = source.files[0]
    check = Checker(source_file.name)
    json_lines: bool | None = None
    for number, line in iter_lines(source_file, counter):
        stripped = line.strip()
        if not stripped:
            continue
        where = at_line(number)
        if json_lines is None:
            json_lines = stripped.startswith("{")
        if not json_lines:
            yield QueryRecord(external_id=text_id(stripped), text=stripped, where=where)
            continue
        record = json_record(line, file=check.file, where=where)  # columns as in the file
        if not isinstance(record, dict):
            raise check.fail(StoredText(gettext_noop("expected a JSON object on each line")),
                             where=where)
        yield _record(record, where=where, check=check)


def _record(record: dict[str, Any], *, where: Where, check: Checker) -> QueryRecord:
    text_key = next((key for key in TEXT_KEYS if key in record), None)
    if text_key is None:
        raise check.fail(StoredText(gettext_noop("is missing (a query needs one of %(keys)s)"),
                                    keys=", ".join(TEXT_KEYS)),
                         where=where, field="question")
    text = check.text(record, text_key, where=where).strip()
    id_key = next((key for key in ID_KEYS if record.get(key) is not None), None)
    ident = (check.identifier(record[id_key], where=where, field=id_key) if id_key
             else text_id(text))
    metadata = {key: value for key, value in record.items() if key not in (text_key, id_key)}
    return QueryRecord(external_id=ident, text=text, where=where, metadata=metadata)
