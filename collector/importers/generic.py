"""Generic JSONL, CSV and TSV documents, with a field mapping (``--map field=column,...``).

Fields: ``id`` and ``body`` (required), ``title``, ``url``, ``source_type``,
``highlights``. Without a mapping each field is read from the column of the same name.
In JSONL a column may be a dotted path into nested objects (``meta.url``). In CSV/TSV
a file whose mapping uses only numbers (``id=0,body=1``) has no header row and the
numbers are 0-based column positions. Columns that no field uses are kept in the
document's metadata.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any

from django.utils.translation import gettext_noop

from collector.importers.errors import (
    COLUMNS_DIFFER,
    SHOULD_BE_TEXT,
    ImportFailure,
    Where,
    at_line,
    shorten,
)
from collector.importers.jsonvalues import json_record
from collector.importers.records import ONE_OF, SOURCE_TYPES, Checker, DocumentRecord, ImportUnit
from collector.importers.source import ByteCounter, Source, iter_csv_rows, iter_lines
from collector.stored_text import StoredText

FIELDS = ("id", "body", "title", "url", "source_type", "highlights")
REQUIRED = ("id", "body")


class MappingError(ValueError):
    """A malformed ``--map``: ``text`` says what is wrong as a stored text; ``str()`` says it
    in the active language (a form's error), ``args`` in English."""

    def __init__(self, text: StoredText) -> None:
        self.text = text
        super().__init__(text.english())

    def __str__(self) -> str:
        return str(self.text)


def mapping_parse(spec: str | dict[str, str] | None) -> dict[str, str]:
    """``"id=doc_id,body=text"`` (or a dict) to ``{"id": "doc_id", "body": "text"}``.

    Raises :class:`MappingError` (a ``ValueError``) with a one-line message on a malformed
    mapping.
    """
    if not spec:
        return {}
    if isinstance(spec, dict):
        pairs = list(spec.items())
    else:
        pairs = []
        for part in spec.split(","):
            part = part.strip()
            if not part:
                continue
            field, sep, column = part.partition("=")
            if not sep or not field.strip() or not column.strip():
                raise MappingError(StoredText(gettext_noop("--map: %(part)s is not field=column"),
                                              part=repr(part)))
            pairs.append((field.strip(), column.strip()))
    mapping: dict[str, str] = {}
    for field, column in pairs:
        if field not in FIELDS:
            raise MappingError(StoredText(gettext_noop("--map: unknown field %(field)s (fields: "
                                                       "%(fields)s)"),
                                          field=repr(field), fields=", ".join(FIELDS)))
        if field in mapping:
            raise MappingError(StoredText(gettext_noop("--map: field %(field)s is mapped twice"),
                                          field=repr(field)))
        mapping[field] = str(column)
    return mapping


def _full_mapping(mapping: dict[str, str]) -> dict[str, str]:
    return {field: mapping.get(field, field) for field in FIELDS}


def _document(values: dict[str, Any], *, extra: dict[str, Any], columns: dict[str, str],
              check: Checker, where: Where, default_source_type: str) -> DocumentRecord:
    for field in REQUIRED:
        if values.get(field) is None:
            raise check.fail(StoredText(gettext_noop("is missing (column %(column)s)"),
                                        column=repr(columns[field])), where=where, field=field)
    ident = check.identifier(values["id"], where=where, field="id")
    body = values["body"]
    if not isinstance(body, str):
        raise check.fail(StoredText(SHOULD_BE_TEXT, found=shorten(body)), where=where,
                         field="body")
    if not body.strip():
        raise check.fail(StoredText(gettext_noop("is empty (column %(column)s)"),
                                    column=repr(columns["body"])), where=where, field="body")
    text_fields = {}
    for field in ("title", "url", "source_type"):
        value = values.get(field)
        if value is None:
            value = ""
        if not isinstance(value, str):
            raise check.fail(StoredText(SHOULD_BE_TEXT, found=shorten(value)), where=where,
                             field=field)
        text_fields[field] = value.strip() if field != "title" else value
    url = check.url(text_fields["url"], where=where, field="url")
    source_type = text_fields["source_type"] or default_source_type
    if source_type and source_type not in SOURCE_TYPES:
        raise check.fail(StoredText(ONE_OF, value=repr(source_type),
                                    choices=", ".join(SOURCE_TYPES)),
                         where=where, field="source_type")
    return DocumentRecord(
        external_id=ident, body=body, where=where, title=text_fields["title"],
        url=url, source_type=source_type,
        highlights=_highlights(values.get("highlights"), check=check, where=where),
        metadata=extra,
    )


def _highlights(value: Any, *, check: Checker, where: Where) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        if value.lstrip().startswith("["):
            value = json_record(value, file=check.file, where=where, field="highlights",
                                invalid=gettext_noop("is not a JSON list"))
        else:
            return [line.strip() for line in value.splitlines() if line.strip()]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise check.fail(StoredText(gettext_noop("should be a list of strings")), where=where,
                         field="highlights")
    return value


def _dig(record: dict[str, Any], parts: tuple[str, ...]) -> Any:
    value: Any = record
    for part in parts:
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def read_jsonl(source: Source, *, counter: ByteCounter, mapping: dict[str, str] | None = None,
               source_type: str = "") -> Iterator[ImportUnit]:
    columns = _full_mapping(mapping or {})
    paths = [(field, path, tuple(path.split("."))) for field, path in columns.items()]
    top_level_used = {parts[0] for _, _, parts in paths}
    for source_file in source.files:
        check = Checker(source_file.name)
        for number, line in iter_lines(source_file, counter):
            if not line.strip():
                continue
            where = at_line(number)
            record = json_record(line, file=check.file, where=where)
            if not isinstance(record, dict):
                raise check.fail(StoredText(gettext_noop("expected a JSON object on each line")),
                                 where=where)
            values = {field: record.get(path) if len(parts) == 1 else _dig(record, parts)
                      for field, path, parts in paths}
            extra = ({key: value for key, value in record.items() if key not in top_level_used}
                     if len(record) > len(top_level_used) or not record.keys() <= top_level_used
                     else {})
            yield ImportUnit([_document(values, extra=extra, columns=columns, check=check,
                                        where=where, default_source_type=source_type)])


def read_delimited(source: Source, *, counter: ByteCounter, delimiter: str,
                   mapping: dict[str, str] | None = None,
                   source_type: str = "") -> Iterator[ImportUnit]:
    mapping = mapping or {}
    positional = bool(mapping) and all(column.isdigit() for column in mapping.values())
    columns = mapping if positional else _full_mapping(mapping)
    quoting = csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL
    for source_file in source.files:
        check = Checker(source_file.name)
        if positional:
            for field in REQUIRED:
                if field not in columns:
                    raise check.fail(StoredText(gettext_noop(
                        "is not in --map; a file mapped by column numbers needs every required "
                        "field mapped")), field=field, where=None)
        header: list[str] | None = None
        index: dict[str, int] = {}
        for where, row in iter_csv_rows(source_file, counter, delimiter=delimiter,
                                        quoting=quoting):
            if header is None and not positional:
                header = [name.strip() for name in row]
                index = {name: i for i, name in enumerate(header)}
                for field in REQUIRED:
                    if columns[field] not in index:
                        raise check.fail(
                            StoredText(gettext_noop("maps to column %(column)s, which the header "
                                                    "does not have (columns: %(columns)s)"),
                                       column=repr(columns[field]), columns=", ".join(header)),
                            where=where, field=field,
                        )
                continue
            if header is not None and len(row) != len(header):
                raise check.fail(StoredText(COLUMNS_DIFFER, columns=len(row),
                                            header=len(header)), where=where)
            if positional:
                values = {field: row[int(col)] if int(col) < len(row) else None
                          for field, col in columns.items()}
                used = {int(col) for col in columns.values()}
                extra = {str(i): value for i, value in enumerate(row) if i not in used}
            else:
                values = {field: row[index[col]] if col in index else None
                          for field, col in columns.items()}
                used_names = set(columns.values())
                extra = {name: row[i] for name, i in index.items() if name not in used_names}
            yield ImportUnit([_document(values, extra=extra, columns=columns, check=check,
                                        where=where, default_source_type=source_type)])


def read_csv(source: Source, **kwargs: Any) -> Iterator[ImportUnit]:
    return read_delimited(source, delimiter=",", **kwargs)


def read_tsv(source: Source, **kwargs: Any) -> Iterator[ImportUnit]:
    return read_delimited(source, delimiter="\t", **kwargs)


__all__ = ["FIELDS", "ImportFailure", "MappingError", "mapping_parse", "read_csv", "read_jsonl",
           "read_tsv"]
