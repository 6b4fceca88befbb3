"""MS MARCO QA v2.1: one JSON record per line, or the official column-oriented JSON file.

Each passage becomes a document (``<query_id>-<rank>``: the passages of one query come
from different web pages); the query becomes a source question that lists them, with the
human answers and well-formed answers kept. The column-oriented form (pandas
``to_json()``: ``{"query": {"0": ...}, "passages": {"0": ...}}``) is streamed with one
reader per column, so a row is assembled without loading the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

from django.utils.translation import gettext_noop

from collector.importers.errors import SHOULD_BE_STRING, TOP_LEVEL, Where, at_line
from collector.importers.jsonstream import JsonStream
from collector.importers.jsonvalues import join_path, json_record
from collector.importers.records import Checker, DocumentRecord, ImportUnit, QuestionRecord
from collector.importers.source import ByteCounter, Source, SourceFile, iter_lines
from collector.stored_text import StoredText

NO_ANSWER = "No Answer Present."
COLUMNS = ("query_id", "query", "passages", "answers", "wellFormedAnswers", "query_type")
REQUIRED_COLUMNS = ("query_id", "query", "passages")


def read_msmarco(source: Source, *, counter: ByteCounter, **_: Any) -> Iterator[ImportUnit]:
    source_file = source.files[0]
    if _is_columnar(source_file):
        yield from _read_columnar(source_file, counter)
    else:
        yield from _read_rows(source_file, counter)


def _is_columnar(source_file: SourceFile) -> bool:
    """Columnar files map each field name to an object of rows; JSONL records do not."""
    with JsonStream(source_file, counter=ByteCounter()) as stream:
        if stream.peek() != "{":
            return False
        for _key in stream.iter_object():
            return stream.peek() == "{"
    return False


def _read_rows(source_file: SourceFile, counter: ByteCounter) -> Iterator[ImportUnit]:
    check = Checker(source_file.name)
    for number, line in iter_lines(source_file, counter):
        if not line.strip():
            continue
        where = at_line(number)
        record = json_record(line, file=check.file, where=where)
        yield _record(record, where=where, check=check)


def _read_columnar(source_file: SourceFile, counter: ByteCounter) -> Iterator[ImportUnit]:
    check = Checker(source_file.name)
    present = _columns(source_file)
    for column in REQUIRED_COLUMNS:
        if column not in present:
            raise check.fail(StoredText(gettext_noop("column is missing")),
                             where=StoredText(TOP_LEVEL), field=column)
    wanted = [column for column in COLUMNS if column in present]
    with ExitStack() as stack:
        rows = {}
        for column in wanted:
            stream = stack.enter_context(JsonStream(source_file, counter))
            rows[column] = _column_rows(stream, column)
        lead = wanted[0]
        for key, value in rows[lead]:
            record = {lead: value}
            for column in wanted[1:]:
                other = next(rows[column], None)
                if other is None or other[0] != key:
                    found = (StoredText(gettext_noop("no more rows")) if other is None
                             else _row(other[0]))
                    raise check.fail(StoredText(gettext_noop("rows are out of step: expected "
                                                             "%(expected)s, found %(found)s"),
                                                expected=_row(key), found=found),
                                     where=column, field=column)
                record[column] = other[1]
            yield _record(record, where=_row(key), check=check)
        for column in wanted[1:]:
            extra = next(rows[column], None)
            if extra is not None:
                raise check.fail(StoredText(gettext_noop("has %(row)s that %(lead)s lacks"),
                                            row=_row(extra[0]), lead=repr(lead)),
                                 where=column, field=column)


def _row(key: str) -> StoredText:
    """``row '3'``: a row of the column-oriented file, by its key."""
    return StoredText(gettext_noop("row %(row)s"), row=repr(key))


def _columns(source_file: SourceFile) -> list[str]:
    with JsonStream(source_file, counter=ByteCounter()) as stream:
        return list(stream.iter_object())


def _column_rows(stream: JsonStream, column: str) -> Iterator[tuple[str, Any]]:
    for key in stream.iter_object():
        if key != column:
            continue
        if stream.peek() != "{":
            raise stream.error(StoredText(gettext_noop("column %(column)s should map row keys "
                                                       "to values"), column=repr(column)))
        for row_key in stream.iter_object():
            yield row_key, stream.read_value(path=join_path(column, row_key))
        return


def _record(record: Any, *, where: Where, check: Checker) -> ImportUnit:
    query_id = check.identifier(check.get(record, "query_id", where=where, kind=(int, str)),
                                where=where, field="query_id")
    query = check.text(record, "query", where=where)
    passages = check.get(record, "passages", where=where, kind=list)
    documents = []
    selected = []
    for rank, passage in enumerate(passages):
        prefix = f"passages[{rank}]."
        text = check.text(passage, "passage_text", where=where, prefix=prefix)
        url = check.url(check.get(passage, "url", where=where, kind=str, required=False,
                                  default="", prefix=prefix),
                        where=where, field=f"{prefix}url")
        is_selected = check.get(passage, "is_selected", where=where, kind=(int, bool),
                                required=False, default=0, prefix=prefix)
        doc_id = f"{query_id}-{rank}"
        if is_selected:
            selected.append(doc_id)
        documents.append(DocumentRecord(
            external_id=doc_id, body=text, where=where, url=url, source_type="web",
            metadata={"query_id": query_id, "rank": rank, "is_selected": int(is_selected)},
        ))
    answers_raw = check.get(record, "answers", where=where, kind=list, required=False,
                            default=[])
    for i, answer in enumerate(answers_raw):
        if not isinstance(answer, str):
            raise check.fail(StoredText(SHOULD_BE_STRING), where=where, field=f"answers[{i}]")
    well_formed = record.get("wellFormedAnswers", [])
    if well_formed == "[]" or well_formed is None:
        well_formed = []
    if not isinstance(well_formed, list):
        raise check.fail(StoredText(gettext_noop("should be a list or the string '[]'")),
                         where=where, field="wellFormedAnswers")
    metadata: dict[str, Any] = {
        "passages": [doc.external_id for doc in documents],
        "selected": selected,
        "well_formed_answers": well_formed,
    }
    if record.get("query_type"):
        metadata["query_type"] = check.get(record, "query_type", where=where, kind=str)
    question = QuestionRecord(
        external_id=query_id, text=query, where=where,
        document_id=selected[0] if len(selected) == 1 else None,
        answers=[{"text": answer} for answer in answers_raw if answer != NO_ANSWER],
        is_impossible=answers_raw == [NO_ANSWER], metadata=metadata,
    )
    return ImportUnit(documents, [question])
