"""SQuAD v1.1 / v2.0 JSON: each paragraph context becomes a document, with its questions.

The file is streamed one article at a time. Document ids are ``<title>#<paragraph
index>``; question ids are SQuAD's own. Every ``answer_start`` is checked against the
context: the span must lie inside it and spell the answer text.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.utils.translation import gettext_noop

from collector.importers.errors import TOP_LEVEL, Where, at_path
from collector.importers.jsonstream import JsonStream
from collector.importers.records import Checker, DocumentRecord, ImportUnit, QuestionRecord
from collector.importers.source import ByteCounter, Source
from collector.stored_text import StoredText

#: A paragraph or question of a SQuAD article: its path, and the line the article starts on.
IN_ARTICLE = gettext_noop("%(path)s (article at line %(line)s)")


def read_squad(source: Source, *, counter: ByteCounter, **_: Any) -> Iterator[ImportUnit]:
    source_file = source.files[0]
    check = Checker(source_file.name)
    with JsonStream(source_file, counter) as stream:
        if stream.peek() != "{":
            raise stream.error(StoredText(gettext_noop("a SQuAD file is one JSON object with a "
                                                       "'data' list")))
        found_data = False
        for key in stream.iter_object():
            if key != "data":
                continue
            found_data = True
            if stream.peek() != "[":
                raise check.fail(StoredText(gettext_noop("should be a list of articles")),
                                 where=StoredText(TOP_LEVEL), field="data")
            for a in stream.iter_array():
                line = stream.line()
                article = stream.read_value(path=f"data[{a}]")
                yield from _article(article, index=a, line=line, check=check)
        stream.finish()
    if not found_data:
        raise check.fail(StoredText(gettext_noop("is missing: this is not a SQuAD file")),
                         where=StoredText(TOP_LEVEL), field="data")


def _article(article: Any, *, index: int, line: int, check: Checker) -> Iterator[ImportUnit]:
    path = f"data[{index}]"
    where = at_path(path, line)
    title = check.text(article, "title", where=where)
    paragraphs = check.get(article, "paragraphs", where=where, kind=list)
    for p, paragraph in enumerate(paragraphs):
        p_path = f"{path}.paragraphs[{p}]"
        p_where = StoredText(IN_ARTICLE, path=p_path, line=line)
        context = check.text(paragraph, "context", where=p_where)
        qas = check.get(paragraph, "qas", where=p_where, kind=list, required=False,
                        default=[])
        doc_id = check.identifier(f"{title}#{p}", where=p_where, field="title")
        document = DocumentRecord(
            external_id=doc_id, body=context, where=p_where, title=title.replace("_", " "),
            source_type="encyclopedia", metadata={"article": title, "paragraph": p},
        )
        questions = [
            _question(qa, context=context, doc_id=doc_id,
                      where=StoredText(IN_ARTICLE, path=f"{p_path}.qas[{q}]", line=line),
                      check=check)
            for q, qa in enumerate(qas)
        ]
        yield ImportUnit([document], questions)


def _question(qa: Any, *, context: str, doc_id: str, where: Where,
              check: Checker) -> QuestionRecord:
    ident = check.identifier(check.get(qa, "id", where=where, kind=(str, int)), where=where,
                             field="id")
    text = check.text(qa, "question", where=where)
    impossible = check.get(qa, "is_impossible", where=where, kind=bool, required=False,
                           default=False)
    answers = _answers(check.get(qa, "answers", where=where, kind=list, required=False,
                                 default=[]),
                       context=context, where=where, field="answers", check=check)
    if not answers and not impossible:
        raise check.fail(StoredText(gettext_noop("is empty for an answerable question "
                                                 "(is_impossible is not true)")),
                         where=where, field="answers")
    metadata: dict[str, Any] = {}
    if "plausible_answers" in qa:
        metadata["plausible_answers"] = _answers(
            check.get(qa, "plausible_answers", where=where, kind=list), context=context,
            where=where, field="plausible_answers", check=check,
        )
    return QuestionRecord(external_id=ident, text=text, where=where, document_id=doc_id,
                          answers=answers, is_impossible=impossible, metadata=metadata)


def _answers(items: list[Any], *, context: str, where: Where, field: str,
             check: Checker) -> list[dict[str, Any]]:
    answers = []
    for i, answer in enumerate(items):
        name = f"{field}[{i}]"
        text = check.get(answer, "text", where=where, kind=str, prefix=f"{name}.")
        start = check.get(answer, "answer_start", where=where, kind=int, prefix=f"{name}.")
        answers.append(check.span(context, start, start + len(text), where=where,
                                  field=f"{name}.answer_start", expect=text))
    return answers
