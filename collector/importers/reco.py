"""ReCO JSON (one array of records, streamed) or its JSON Lines predecessor (AI Challenger).

Each record's ``doc`` becomes a document (id = ``query_id``); the query becomes a source
question with its three alternatives, the answer, and the evidence passage located in
the document when it occurs there verbatim.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.utils.translation import gettext_noop

from collector.importers.errors import Where, at_line, at_path
from collector.importers.jsonstream import JsonStream
from collector.importers.jsonvalues import json_record
from collector.importers.records import Checker, DocumentRecord, ImportUnit, QuestionRecord
from collector.importers.source import ByteCounter, Source, iter_lines
from collector.stored_text import StoredText


def read_reco(source: Source, *, counter: ByteCounter, **_: Any) -> Iterator[ImportUnit]:
    source_file = source.files[0]
    check = Checker(source_file.name)
    with JsonStream(source_file, ByteCounter()) as probe:
        first = probe.peek()
    if first == "[":
        with JsonStream(source_file, counter) as stream:
            for i in stream.iter_array():
                where = at_path(f"[{i}]", stream.line())
                yield _record(stream.read_value(path=f"[{i}]"), where=where, check=check)
            stream.finish()
        return
    for number, line in iter_lines(source_file, counter):
        if not line.strip():
            continue
        where = at_line(number)
        record = json_record(line, file=check.file, where=where)
        yield _record(record, where=where, check=check)


def _record(record: Any, *, where: Where, check: Checker) -> ImportUnit:
    qid = check.identifier(check.get(record, "query_id", where=where, kind=(int, str)),
                           where=where, field="query_id")
    query = check.text(record, "query", where=where)
    doc = check.text(record, "doc", where=where)
    url = check.url(check.get(record, "url", where=where, kind=str, required=False,
                              default=""), where=where, field="url")
    alternatives_raw = check.text(record, "alternatives", where=where)
    alternatives = [item.strip() for item in alternatives_raw.split("|")]
    if len(alternatives) != 3 or not all(alternatives):
        raise check.fail(StoredText(gettext_noop("should be three answers joined by '|', found "
                                                 "%(found)s"), found=repr(alternatives_raw)),
                         where=where, field="alternatives")
    answer = check.get(record, "answer", where=where, kind=str, required=False, default="")
    answer = answer.strip()
    if answer and answer not in alternatives:
        raise check.fail(StoredText(gettext_noop("%(answer)s is not one of the alternatives "
                                                 "%(alternatives)s"),
                                    answer=repr(answer), alternatives=repr(alternatives_raw)),
                         where=where, field="answer")
    metadata: dict[str, Any] = {"alternatives": alternatives}
    evidence = check.get(record, "passage", where=where, kind=str, required=False, default="")
    if evidence.strip():
        start = doc.find(evidence)
        metadata["evidence"] = {"text": evidence, "start": start if start >= 0 else None,
                                "end": start + len(evidence) if start >= 0 else None}
    document = DocumentRecord(external_id=qid, body=doc, where=where, url=url,
                              source_type="web", metadata={"query_id": qid})
    question = QuestionRecord(
        external_id=qid, text=query, where=where, document_id=qid,
        answers=[{"text": answer}] if answer else [], metadata=metadata,
    )
    return ImportUnit([document], [question])
