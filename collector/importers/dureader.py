"""DuReader (2.0, raw or preprocessed) JSONL: one question with its retrieved documents a line.

Each retrieved document becomes a document ``<question_id>-<index>`` whose body is its
paragraphs joined by newlines; the paragraphs are kept as exact spans, so passages follow
DuReader's own paragraphs. The question, its answers and the annotation fields (question
type, yes/no and entity answers, answer documents and spans) are kept for later stages;
the word-segmented copies are dropped (they can be recomputed). A document with no text
at all (every paragraph blank) is left out and counted in the question's metadata.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

from django.utils.translation import gettext_noop

from collector.importers.errors import SHOULD_BE_STRING, Where, at_line
from collector.importers.jsonvalues import json_record
from collector.importers.records import Checker, DocumentRecord, ImportUnit, QuestionRecord
from collector.importers.source import ByteCounter, Source, iter_lines
from collector.stored_text import StoredText

KEPT_FIELDS = ("question_type", "fact_or_opinion", "yesno_answers", "entity_answers",
               "yesno_type", "answer_docs", "answer_spans", "fake_answers", "match_scores")


def read_dureader(source: Source, *, counter: ByteCounter, **_: Any) -> Iterator[ImportUnit]:
    for source_file in source.files:
        check = Checker(source_file.name)
        # DuReader ships a web-search part (search.*) and a community Q&A part (zhidao.*).
        file_name = PurePosixPath(source_file.member).name or source_file.path.name
        source_type = "forum" if file_name.startswith("zhidao") else "web"
        for number, line in iter_lines(source_file, counter):
            if not line.strip():
                continue
            where = at_line(number)
            record = json_record(line, file=check.file, where=where)
            yield _record(record, where=where, check=check, source_type=source_type)


def _record(record: Any, *, where: Where, check: Checker, source_type: str) -> ImportUnit:
    qid = check.identifier(check.get(record, "question_id", where=where, kind=(int, str)),
                           where=where, field="question_id")
    question = check.text(record, "question", where=where)
    raw_documents = check.get(record, "documents", where=where, kind=list)
    documents: list[DocumentRecord] = []
    ids_by_index: dict[int, str] = {}
    empty = 0
    for i, raw in enumerate(raw_documents):
        prefix = f"documents[{i}]."
        title = check.get(raw, "title", where=where, kind=str, required=False, default="",
                          prefix=prefix)
        paragraphs = check.get(raw, "paragraphs", where=where, kind=list, prefix=prefix)
        spans = []
        offset = 0
        for p, paragraph in enumerate(paragraphs):
            if not isinstance(paragraph, str):
                raise check.fail(StoredText(SHOULD_BE_STRING), where=where,
                                 field=f"{prefix}paragraphs[{p}]")
            spans.append((offset, offset + len(paragraph)))
            offset += len(paragraph) + 1
        body = "\n".join(paragraphs)
        related = check.get(raw, "most_related_para", where=where, kind=int, required=False,
                            prefix=prefix)
        if related is not None and not -1 <= related < len(paragraphs):
            raise check.fail(StoredText(gettext_noop("paragraph index %(index)s is outside the "
                                                     "document's %(count)s paragraphs"),
                                        index=related, count=len(paragraphs)),
                             where=where, field=f"{prefix}most_related_para")
        if not body.strip():
            empty += 1
            continue
        doc_id = f"{qid}-{i}"
        ids_by_index[i] = doc_id
        metadata: dict[str, Any] = {"question_id": qid, "index": i}
        for key, name in (("bs_rank_pos", "rank"), ("is_selected", "is_selected"),
                          ("most_related_para", "most_related_para")):
            if raw.get(key) is not None:
                metadata[name] = raw[key]
        documents.append(DocumentRecord(
            external_id=doc_id, body=body, where=where, title=title, source_type=source_type,
            metadata=metadata, paragraphs=spans,
        ))
    answers = check.get(record, "answers", where=where, kind=list, required=False, default=[])
    for i, answer in enumerate(answers):
        if not isinstance(answer, str):
            raise check.fail(StoredText(SHOULD_BE_STRING), where=where, field=f"answers[{i}]")
    answer_docs = check.get(record, "answer_docs", where=where, kind=list, required=False,
                            default=[])
    for i, index in enumerate(answer_docs):
        if isinstance(index, bool) or not isinstance(index, int) or not (
            0 <= index < len(raw_documents)
        ):
            raise check.fail(StoredText(gettext_noop("document index %(index)s is outside the "
                                                     "record's %(count)s documents"),
                                        index=repr(index), count=len(raw_documents)),
                             where=where, field=f"answer_docs[{i}]")
    metadata = {key: record[key] for key in KEPT_FIELDS if key in record}
    metadata["documents"] = [doc.external_id for doc in documents]
    if empty:
        metadata["empty_documents_left_out"] = empty
    primary = ids_by_index.get(answer_docs[0]) if answer_docs else None
    return ImportUnit(documents, [QuestionRecord(
        external_id=qid, text=question, where=where, document_id=primary,
        answers=[{"text": answer} for answer in answers], metadata=metadata,
    )])
